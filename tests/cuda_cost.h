// The cost figures the reproducible modes' GPU tests print for the record
// (tests/split: gate_residual's and rmsnorm_modulate's cuda-repro): CUDA-event
// timings on one stream of the reproducible backward beside the cuda backward,
// and of the combine of 64 ranks' states. They print; they assert nothing.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace gatecheck::testing_cost {

// Mean milliseconds of `reps` calls of f queued on s, after one untimed call.
inline float time_ms(cudaStream_t s, int reps, const std::function<void()>& f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();  // warm
  cudaEventRecord(a, s);
  for (int i = 0; i < reps; ++i) f();
  cudaEventRecord(b, s);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / float(reps);
}

// The calls timed, each queued on the stream.
struct BackwardCalls {
  std::function<void()> cuda;     // the cuda backward
  std::function<void()> repro;    // the reproducible backward, whole
  std::function<void()> partial;  // its state alone (the exchange's partial)
  std::function<void()> copy;     // a device copy of grad_out: what any backward at least moves
};

// Milliseconds, each call's best.
struct BackwardCost {
  float cuda = 0, repro = 0, partial = 0, copy = 0;
};

// Times the calls in three rounds, each round taking every call in turn (so
// that a slow spell of the device falls on no call alone), keeps each call's
// best mean of `reps`, and prints one line: `label` (the op, dtype and shape),
// the figures, and the reproducible backward's ratio to the cuda backward
// beside `target`, the most it should be.
inline BackwardCost print_backward_cost(cudaStream_t s, int reps, const std::string& label, double target,
                                        const BackwardCalls& calls) {
  BackwardCost best;
  for (int round = 0; round < 3; ++round) {
    const float t[4] = {time_ms(s, reps, calls.cuda), time_ms(s, reps, calls.repro), time_ms(s, reps, calls.partial),
                        time_ms(s, reps, calls.copy)};
    best.cuda = round ? std::min(best.cuda, t[0]) : t[0];
    best.repro = round ? std::min(best.repro, t[1]) : t[1];
    best.partial = round ? std::min(best.partial, t[2]) : t[2];
    best.copy = round ? std::min(best.copy, t[3]) : t[3];
  }
  std::printf("%s: cuda backward %.3f ms; reproducible backward %.3f ms = %.3fx (target %.2fx); its state alone "
              "(the exchange's partial) %.3f ms; copy of grad_out %.3f ms (cuda %.2fx, reproducible %.2fx of it)\n",
              label.c_str(), best.cuda, best.repro, best.repro / best.cuda, target, best.partial, best.copy,
              best.cuda / best.copy, best.repro / best.copy);
  return best;
}

// The combine of 64 ranks' states on the device: `state` (`words` 64-bit
// words on the device) copied 64 times, then combine(states, 64, out) timed
// (the mean of 20) and printed in microseconds beside the rate it read the
// states at, and the target (under 50 us) where it applies: states
// of one table's 4 words an element (`target` false: a larger state).
inline float print_combine_cost(cudaStream_t s, const uint64_t* state, int64_t words,
                                const std::function<void(const uint64_t* states, int32_t n, uint64_t* out)>& combine,
                                const char* what = nullptr, bool target = true) {
  const size_t bytes = size_t(words) * sizeof(uint64_t);
  uint64_t *states = nullptr, *out = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&states), std::max<size_t>(bytes * 64, 256));
  cudaMalloc(reinterpret_cast<void**>(&out), std::max<size_t>(bytes, 256));
  for (int k = 0; k < 64; ++k) cudaMemcpyAsync(states + k * words, state, bytes, cudaMemcpyDeviceToDevice, s);
  const float us = 1000 * time_ms(s, 20, [&] { combine(states, 64, out); });
  std::printf("  combine of 64 states (%zu bytes each)%s%s: %.1f us, read at %.2f TB/s%s\n", bytes, what ? " " : "",
              what ? what : "", us, double(bytes) * 64 / (double(us) * 1e6), target ? " (target < 50 us)" : "");
  cudaStreamSynchronize(s);
  cudaFree(states);
  cudaFree(out);
  return us;
}

}  // namespace gatecheck::testing_cost
