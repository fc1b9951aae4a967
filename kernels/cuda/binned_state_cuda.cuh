// Binned states (../binned_sum.h) on the device, for every op's reproducible
// mode (gate_residual_repro_cuda.cu, rmsnorm_modulate_repro_cuda.cu): the
// combine of n states, the finalize of a state's elements to a dtype, and
// the wide sum (../binned_wide.h) that integer atomics fill from partial
// states of any top bin. Included by .cu files only: internal linkage, so
// each gets its own copy of the kernels.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "../binned_sum.h"
#include "../binned_wide.h"
#include "binned_merge_cuda.cuh"
#include "device_occupancy.cuh"

namespace gatecheck {
namespace binned_cuda {
namespace {

constexpr int kThreads = 128;
unsigned blocks_for(int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

// n states (consecutive) combined per element; any order gives the same
// words. Memory bound (64 states at 32 x 3072 are 201 MB). G threads share an
// element, thread j merging states j, j + G, ... (merge_states: kMergeInFlight
// loads in flight); the G sums then meet in shared memory. One thread an
// element (G = 1) leaves a grid of elements/128 blocks: at 32 x 3072 that is
// 768 blocks, more than one wave of 90-register threads and far less than
// two, so the last blocks run nearly alone.
// Streaming: loads marked evict-first (ld.global.cs), each state's bytes
// being read once; else read-only cached loads. The grid may be smaller than
// the elements' blocks: each block then strides over them.
template <int G, bool Streaming>
__global__ void __launch_bounds__(kThreads) combine_kernel(const uint64_t* states, int32_t n, int64_t elements,
                                                           uint64_t* out) {
  constexpr int kPerBlock = kThreads / G;  // elements a block
  const int local = int(threadIdx.x) % kPerBlock, group = int(threadIdx.x) / kPerBlock;
  const int64_t words = elements * kBinnedWords;
  for (int64_t e0 = int64_t(blockIdx.x) * kPerBlock; e0 < elements; e0 += int64_t(gridDim.x) * kPerBlock) {
    const int64_t e = e0 + local;
    BinnedSum acc;
    acc.clear();
    if (e < elements && group < n)
      merge_states<Streaming>(acc, states + group * words + e * kBinnedWords, G * words, (n - group + G - 1) / G);
    if constexpr (G > 1) {
      __shared__ BinnedSum part[G - 1][kPerBlock];
      if (group > 0) part[group - 1][local] = acc;
      __syncthreads();
      if (group == 0) {
#pragma unroll
        for (int j = 0; j < G - 1; ++j) acc.merge(part[j][local]);
      }
      __syncthreads();  // part is free for the next stride
    }
    if (group > 0 || e >= elements) continue;
    uint64_t r[kBinnedWords];
    acc.to_words(r);
    store_state(out + e * kBinnedWords, r);
  }
}

// Threads an element for the combine (1, 2, 4 or 8; `tuned` 0: automatic).
int combine_threads(int32_t n, int tuned) {
  if (tuned) return tuned;
  return n >= 16 ? 4 : n >= 4 ? 2 : 1;
}

// How the combine runs (CudaTuning's combine knobs; all 0: automatic).
struct CombineShape {
  int threads = 0;        // threads an element
  int blocks_per_sm = 0;  // a strided grid of this many blocks an SM (0: a block per chunk of elements)
  bool streaming = true;  // evict-first loads: 48.9 against 50.5 us for 64 states at 32 x 3072 on the H200
};

template <int G, bool Streaming>
cudaError_t launch_combine_as(const uint64_t* states, int32_t n, int64_t elements, uint64_t* out, cudaStream_t s,
                              int blocks_per_sm) {
  int64_t blocks = (elements * G + kThreads - 1) / kThreads;
  if (blocks_per_sm > 0) {
    int sms = 0;
    if (const cudaError_t e = cuda_occupancy::sm_count(&sms); e != cudaSuccess) return e;
    blocks = std::min<int64_t>(blocks, int64_t(blocks_per_sm) * sms);
  }
  blocks = std::min<int64_t>(blocks, int64_t(1) << 30);
  combine_kernel<G, Streaming><<<unsigned(blocks), kThreads, 0, s>>>(states, n, elements, out);
  return cudaGetLastError();
}

template <bool Streaming>
cudaError_t launch_combine_g(int g, const uint64_t* states, int32_t n, int64_t elements, uint64_t* out,
                             cudaStream_t s, int blocks_per_sm) {
  switch (g) {
    case 8: return launch_combine_as<8, Streaming>(states, n, elements, out, s, blocks_per_sm);
    case 4: return launch_combine_as<4, Streaming>(states, n, elements, out, s, blocks_per_sm);
    case 2: return launch_combine_as<2, Streaming>(states, n, elements, out, s, blocks_per_sm);
    default: return launch_combine_as<1, Streaming>(states, n, elements, out, s, blocks_per_sm);
  }
}

cudaError_t launch_combine(const uint64_t* states, int32_t n, int64_t elements, uint64_t* out, cudaStream_t s,
                           CombineShape shape = {}) {
  if (elements <= 0) return cudaGetLastError();
  const int g = combine_threads(n, shape.threads);
  return shape.streaming ? launch_combine_g<true>(g, states, n, elements, out, s, shape.blocks_per_sm)
                         : launch_combine_g<false>(g, states, n, elements, out, s, shape.blocks_per_sm);
}

template <class T>
__global__ void finalize_kernel(const uint64_t* state, int64_t elements, T* out) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < elements) out[e] = binned_finish_words<T>(state + e * kBinnedWords);
}

// out[e] = a state's element e rounded once to T, for `elements` elements.
template <class T>
cudaError_t launch_finalize(const uint64_t* state, int64_t elements, T* out, cudaStream_t s) {
  if (elements > 0) finalize_kernel<T><<<blocks_for(elements), kThreads, 0, s>>>(state, elements, out);
  return cudaGetLastError();
}

// The wide sums of `elements` elements, column-major per field so that
// neighbouring threads' atomics fall on neighbouring words. All zero: empty.
struct WideSums {
  unsigned long long* bins;  // [kBinnedWideBins][elements]
  unsigned* top;             // [elements]
  unsigned* count;           // [3][elements]: NaN, +Inf, -Inf
  int64_t elements;

  static size_t bytes(int64_t elements) {
    return size_t(elements) * (kBinnedWideBins * sizeof(unsigned long long) + 4 * sizeof(unsigned));
  }
  // Carved from `base` (8-byte aligned, bytes(elements) long).
  static WideSums at(void* base, int64_t elements) {
    WideSums w;
    w.bins = static_cast<unsigned long long*>(base);
    w.top = reinterpret_cast<unsigned*>(w.bins + kBinnedWideBins * elements);
    w.count = w.top + elements;
    w.elements = elements;
    return w;
  }
};

// Element e's wide sum += a partial state's words, by integer atomics (any
// order of the adds, from any threads, gives the same sums).
struct WideAtomics {
  const WideSums& w;
  int64_t e;
  __device__ void max_top(uint32_t t) { atomicMax(w.top + e, t); }
  __device__ void add_bin(int b, uint64_t d) { atomicAdd(w.bins + b * w.elements + e, (unsigned long long)d); }
  __device__ void add_count(int f, uint32_t n) { atomicAdd(w.count + f * w.elements + e, n); }
};
__device__ __forceinline__ void wide_add(const WideSums& w, int64_t e, const uint64_t (&v)[kBinnedWords]) {
  WideAtomics ops{w, e};
  binned_wide_add(v, ops);
}

// The wide sums as a state: state + e * kBinnedWords for every element.
__global__ void wide_to_state_kernel(WideSums w, uint64_t* state) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= w.elements) return;
  const uint32_t count[3] = {w.count[e], w.count[w.elements + e], w.count[2 * w.elements + e]};
  uint64_t v[kBinnedWords];
  binned_wide_words(w.top[e], [&](int b) { return uint64_t(w.bins[b * w.elements + e]); }, count, v);
  store_state(state + e * kBinnedWords, v);
}

cudaError_t launch_wide_to_state(const WideSums& w, uint64_t* state, cudaStream_t s) {
  if (w.elements > 0) wide_to_state_kernel<<<blocks_for(w.elements), kThreads, 0, s>>>(w, state);
  return cudaGetLastError();
}

}  // namespace
}  // namespace binned_cuda
}  // namespace gatecheck
