// DeviceGate (properties/engine/device_gate.h): a scale case on a GPU runs
// with no small case under way, and a waiting scale case is not starved.
#include "properties/engine/device_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace gatecheck {
namespace {

using namespace std::chrono_literals;

// Whether `f` becomes ready within `t`.
template <class F>
bool ready_within(const F& f, std::chrono::milliseconds t) {
  return f.wait_for(t) == std::future_status::ready;
}

TEST(DeviceGate, TheCpuHasNoneAndAGpuHasOne) {
  EXPECT_EQ(device_gate(Device::cpu), nullptr);
  ASSERT_NE(device_gate(Device::cuda), nullptr);
  const DeviceGate::Shared a(nullptr), b(nullptr);  // no gate: nothing waits
  const DeviceGate::Exclusive c(nullptr);
  EXPECT_EQ(c.seconds_waited(), 0.0);
}

TEST(DeviceGate, AScaleCaseWaitsForTheSmallCasesUnderWay) {
  DeviceGate g;
  auto small = std::make_unique<DeviceGate::Shared>(&g);
  auto small2 = std::make_unique<DeviceGate::Shared>(&g);
  EXPECT_EQ(g.small_cases_running(), 2);
  std::atomic<bool> alone{false};
  std::promise<double> waited;
  auto got = waited.get_future();
  std::thread scale([&] {
    const DeviceGate::Exclusive x(&g);
    alone = g.small_cases_running() == 0;
    waited.set_value(x.seconds_waited());
  });
  EXPECT_FALSE(ready_within(got, 150ms)) << "the scale case started beside two small cases";
  small.reset();
  EXPECT_FALSE(ready_within(got, 150ms)) << "the scale case started beside a small case";
  small2.reset();
  ASSERT_TRUE(ready_within(got, 10s));
  scale.join();
  EXPECT_TRUE(alone);
  EXPECT_GE(got.get(), 0.25);  // it waited both times above
}

TEST(DeviceGate, AWaitingScaleCaseGoesBeforeTheNextSmallCase) {
  DeviceGate g;
  auto small = std::make_unique<DeviceGate::Shared>(&g);
  std::atomic<int> order{0};
  std::atomic<int> scale_at{-1}, next_at{-1};
  std::promise<void> scale_in;
  std::thread scale([&] {
    const DeviceGate::Exclusive x(&g);
    scale_at = order++;
    scale_in.set_value();
    std::this_thread::sleep_for(100ms);  // a small case now would run beside it
  });
  // The scale case is waiting (for `small`) before the next small case asks.
  for (int i = 0; i < 5000 && !g.scale_cases_waiting(); ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(g.scale_cases_waiting(), 1);
  std::promise<void> next_in;
  auto next_ready = next_in.get_future();
  std::thread next([&] {
    const DeviceGate::Shared s(&g);
    next_at = order++;
    next_in.set_value();
  });
  EXPECT_FALSE(ready_within(next_ready, 150ms)) << "a small case started while a scale case waited";
  small.reset();
  scale.join();
  next.join();
  EXPECT_EQ(scale_at, 0);
  EXPECT_EQ(next_at, 1);
  EXPECT_EQ(g.small_cases_running(), 0);
}

}  // namespace
}  // namespace gatecheck
