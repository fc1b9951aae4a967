// Device-side helpers for the benchmark: buffers filled with pseudo-random
// finite values, event timing with a median, and the copy ceiling.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "bench_warmup.h"

namespace gatecheck {
namespace bench {

inline void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Fills n elements of dtype (0 f32, 1 f16, 2 bf16) with values in [-2, 2).
void fill_random(void* p, int64_t n, int dtype, uint64_t seed);

// How the timed runs are queued. Held (the default, as nvbench's blocking
// kernel): every batch of runs is queued behind a one-thread kernel that
// spins until the host has queued the whole batch, so each pair of events
// brackets GPU time only. Free: runs are queued as the GPU runs them, so a
// call shorter than its own launch cost on the host is timed at the host's
// launch rate (an empty kernel took 3.8-7.6 us so on the H200, against 3.3 held).
// Chosen: whichever set_timing_queue chose for the whole benchmark (Held
// unless told).
enum class Queue { Chosen, Held, Free };
void set_timing_queue(Queue queue);

// Median time in microseconds of `reps` runs of run(i) after the warm-up,
// each bracketed by its own pair of events on the legacy default stream; no
// host sync between runs.
double median_us(const std::function<void(int)>& run, const Warmup& warmup, int reps, Queue queue = Queue::Chosen);

// How many held batches since the program started were let go by the hold's
// timeout (100 ms) rather than by the host: a timed call that waits on the
// host (a sync, or a full launch queue) while held. Their times include that
// wait, so the benchmark reports the count.
int hold_timeouts();

// Median time of an empty kernel of `blocks` blocks of 256 threads between
// two events: the fixed cost of a launch that every timed call pays (the
// floor under any kernel's time at small sizes).
double empty_kernel_us(int blocks, const Warmup& warmup, int reps, Queue queue = Queue::Chosen);

// Device-to-device copy bandwidth in bytes/s (bytes read + bytes written).
double copy_bandwidth(size_t bytes, int reps);

// Median time of a device-to-device copy of `bytes`, each run from a
// different place in a pool larger than 4x L2, so that the source is never
// cached: what a copy of the same traffic as a kernel achieves at its size
// (fixed costs included), next to the large-copy ceiling.
double copy_time_us(size_t bytes, const Warmup& warmup, int reps);

}  // namespace bench
}  // namespace gatecheck
