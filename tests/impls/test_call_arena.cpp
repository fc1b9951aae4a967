// The runner's buffers (harness/call_arena.h) keep GuardedBuffer's
// guarantees for every region of a call laid out in one arena: each region
// starts 256-byte aligned, outputs start as the poison pattern (any size, 2-
// and 4-byte patterns), inputs start as given, and a byte changed just
// outside a region, or inside an input, is seen and placed. Also the stage
// clock (harness/stage_clock.h): nested timers split the time, not count it
// twice.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "harness/run/call_arena.h"
#include "harness/run/guarded_buffer.h"
#include "harness/run/stage_clock.h"

namespace gatecheck {
namespace {

TEST(CallArena, RegionsAlignedPoisonedAndGuarded) {
  const std::vector<uint8_t> in1 = {1, 2, 3, 4, 5}, in2(1000, 7);
  for (const std::vector<uint8_t>& pattern : {std::vector<uint8_t>{0x5a, 0x7d}, std::vector<uint8_t>{0xa5, 0xa5, 0xa5, 0x7f}}) {
    CallArena a(Device::cpu, {{"a", in1.size(), in1.data()}, {"b", 0, nullptr}, {"c", 13, nullptr}, {"d", in2.size(), in2.data()}},
                pattern);
    a.fetch();
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(a.ptr(i)) % 256, 0u) << i;
      int64_t f = 0, l = 0;
      EXPECT_EQ(a.damaged_guard_bytes(i, &f, &l), 0u) << i;
      EXPECT_EQ(a.changed_input_bytes(i, &f), 0) << i;
    }
    EXPECT_EQ(std::memcmp(a.host(0), in1.data(), in1.size()), 0);
    EXPECT_EQ(std::memcmp(a.host(3), in2.data(), in2.size()), 0);
    for (size_t k = 0; k < 13; ++k) EXPECT_EQ(a.host(2)[k], pattern[k % pattern.size()]) << k;
  }
}

TEST(CallArena, SeesWritesJustOutsideARegionAndIntoAnInput) {
  const std::vector<uint8_t> in(64, 3);
  for (size_t victim = 0; victim < 3; ++victim) {
    CallArena a(Device::cpu, {{"in", in.size(), in.data()}, {"out", 40, nullptr}, {"last", 8, nullptr}}, {0x11});
    auto* p = static_cast<uint8_t*>(a.ptr(victim));
    p[-1] ^= 1;                        // the byte before
    p[a.size(victim) + kGuardBytes - 1] ^= 1;  // the last byte of the guard after
    int64_t first = 0, last = 0;
    EXPECT_EQ(a.damaged_guard_bytes(victim, &first, &last), 2u) << victim;
    EXPECT_EQ(first, -1) << victim;
    EXPECT_EQ(last, int64_t(a.size(victim) + kGuardBytes - 1)) << victim;
    for (size_t other = 0; other < 3; ++other)
      if (other != victim) {
        EXPECT_EQ(a.damaged_guard_bytes(other, &first, &last), 0u) << victim << " " << other;
      }
  }
  CallArena a(Device::cpu, {{"in", in.size(), in.data()}}, {0});
  static_cast<uint8_t*>(a.ptr(0))[17] = 9;
  int64_t first = -1;
  EXPECT_EQ(a.changed_input_bytes(0, &first), 1);
  EXPECT_EQ(first, 17);
}

TEST(StageClock, NestedTimersSplitTheTime) {
  const StageTimes before = thread_stage_times();
  {
    const StageTimer outer(Stage::calls);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    {
      const StageTimer inner(Stage::sync);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const StageTimes d = thread_stage_times() - before;
  EXPECT_GE(d[Stage::sync], 0.300);
  EXPECT_GE(d[Stage::calls], 0.020);
  EXPECT_LT(d[Stage::calls], 0.300) << "the inner timer's time was counted in the outer one too";
}

}  // namespace
}  // namespace gatecheck
