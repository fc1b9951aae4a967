// The guarded buffers of one call, laid out in one allocation that each
// thread keeps and reuses (grown when a case needs more, never shrunk).
//
// Every region (an input or an output of the call) has kGuardBytes of canary
// bytes before and after it, so a write outside the region is seen after the
// call; outputs start filled with a poison pattern, so an element the call
// never wrote is seen too; inputs are compared with the bytes they were
// given. These are GuardedBuffer's guarantees (guarded_buffer.h), for all the
// buffers of a call at once:
//  - on the CPU the arena is the buffers themselves (256-byte aligned);
//  - on CUDA the whole image (canaries, inputs, poison) is built in pinned
//    host memory, goes up in one asynchronous copy on this thread's stream,
//    and comes back down in one after the call; the checks then read host
//    memory. Two copies and one synchronisation a call, where a buffer of
//    its own per tensor cost an allocation, a free (which synchronises the
//    device) and several pageable copies each.
// One CallArena is in use on a thread at a time (the runner's calls are not
// nested).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../../kernels/gate_residual.h"

namespace gatecheck {

class CallArena {
 public:
  struct Region {
    const char* name;
    size_t bytes;
    const void* input;  // the bytes an input starts with; nullptr for an output
  };

  // Lays out `regions` in this thread's arena for device d: canaries around
  // each, inputs copied in, outputs filled with `poison` (a pattern repeated
  // over the region). On CUDA the image is then copied up (asynchronously on
  // stream(); a call on that stream needs no synchronisation first).
  CallArena(Device d, const std::vector<Region>& regions, const std::vector<uint8_t>& poison);
  ~CallArena();
  CallArena(const CallArena&) = delete;
  CallArena& operator=(const CallArena&) = delete;

  // Region i where the implementation reads or writes it (device memory on CUDA).
  void* ptr(size_t i) const;
  // Brings every region and guard back to the host (on CUDA: one copy and a
  // stream synchronisation). Then host(i) and the checks below read it.
  void fetch();
  const uint8_t* host(size_t i) const;
  size_t size(size_t i) const { return regions_[i].bytes; }
  const char* name(size_t i) const { return regions_[i].name; }
  // Canary bytes around region i that changed: offsets relative to its start
  // (negative before it) of the first and last, and how many; 0 if intact.
  size_t damaged_guard_bytes(size_t i, int64_t* first, int64_t* last) const;
  // Bytes of input region i that differ from what it was given; the first
  // one's offset in *first (-1 if none).
  int64_t changed_input_bytes(size_t i, int64_t* first) const;

  // The stream this thread's CUDA work goes on (created on first use; a
  // non-blocking stream, so workers never wait on each other's copies).
  static void* stream();

 private:
  struct Placed {
    const char* name;
    size_t bytes;
    const void* input;
    size_t offset;  // of the region's first byte in the arena
  };
  Device device_;
  std::vector<Placed> regions_;
  size_t total_ = 0;
  uint8_t* device_base_ = nullptr;  // where the implementation sees the arena
  uint8_t* host_base_ = nullptr;    // where the checks read it (the same memory on the CPU)
  bool fetched_ = false;
};

}  // namespace gatecheck
