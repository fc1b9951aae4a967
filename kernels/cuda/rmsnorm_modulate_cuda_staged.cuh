// rmsnorm_modulate's forward off alignment for 16-bit types (fwd_staged_kernel):
// each row of x staged in shared memory. The block copies the aligned
// 16-byte blocks that cover the row and writes each realigned (16-bit stores
// at the row's offset), so that both passes read chunk c as one aligned
// 16-byte load of shared memory, where fwd_kernel's element path takes two
// global loads, the selects and four funnel shifts a chunk, twice. The sums,
// their order and the second pass's math are that path's, bit for bit. At
// bf16 32768 x 5001 x 9 on the H200: 447.5 us against 620.2 in the same run
// (bench/results/rms_kernels/element-staged/). Rows whose chunks take more
// than kStagedFwdSmemMax bytes (2,944 chunks) go to fwd_kernel's element path.
#pragma once

#include <cstdint>

#include "rmsnorm_modulate_cuda_rows.cuh"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

// Shared memory of the staged forward: one row's chunks, at most
// kStagedFwdSmemMax (2,944 chunks, 23,552 columns): with the kernel's 272
// static bytes, and the 1 KiB a block the system may keep, within a block's
// default limit of 48 KiB. (At 48 KiB of chunks the launch failed with
// cudaErrorInvalidValue on the H200.)
inline int64_t staged_fwd_smem_bytes(int64_t dim, int vec) { return (dim + vec - 1) / vec * 16; }
constexpr int64_t kStagedFwdSmemMax = 46 << 10;

// Copies p[first, first + dim) of a tensor of `count` elements into `halves`
// (nbytes of shared memory), element e at halves[e]: the aligned 16-byte
// blocks that cover it, loaded by the block's threads in turn (those not
// wholly inside the tensor element by element; the rest not kept in L1, as
// they are read once), each stored realigned.
template <class T>
__device__ __forceinline__ void stage_row(const T* p, int64_t count, int64_t first, int64_t dim, uint16_t* halves,
                                          int nbytes) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = reinterpret_cast<uintptr_t>(p + count);
  const uintptr_t start = reinterpret_cast<uintptr_t>(p + first), a0 = start & ~uintptr_t(15);
  const int o = int(start - a0);  // the row's offset from alignment, bytes (even)
  const int nb = (o + int(dim) * 2 + 15) >> 4;
  for (int b = int(threadIdx.x); b < nb; b += int(blockDim.x)) {
    const uintptr_t at = a0 + uintptr_t(b) * 16;
    uint4 v;
    if (at >= lo && at + 16 <= hi) {
      v = load_once(reinterpret_cast<const T*>(at), 0);
    } else {  // the tensor's first or last bytes: the halves inside it
      uint32_t h[8];
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        const uintptr_t e = at + uintptr_t(2 * q);
        h[q] = e >= lo && e + 2 <= hi ? uint32_t(__ldg(reinterpret_cast<const uint16_t*>(e))) : 0u;
      }
      v = make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16, h[6] | h[7] << 16);
    }
    const int pos = (b * 16 - o) >> 1;  // the block's first half in the row
    const uint32_t wv[4] = {v.x, v.y, v.z, v.w};
    if (pos >= 0 && (pos + 8) * 2 <= nbytes) {
#pragma unroll
      for (int q = 0; q < 8; ++q) halves[pos + q] = uint16_t(wv[q >> 1] >> (16 * (q & 1)));
    } else {
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (pos + q >= 0 && (pos + q) * 2 < nbytes) halves[pos + q] = uint16_t(wv[q >> 1] >> (16 * (q & 1)));
    }
  }
}

template <class T, int M, int MAXT>
__global__ void __launch_bounds__(MAXT) fwd_staged_kernel(Ptrs a) {
  static_assert(kPacked<T>, "16-bit types");
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value;
  extern __shared__ uint4 row_chunks[];
  __shared__ float2 sm[33];
  const T* x = static_cast<const T*>(a.x);
  const int64_t dim = a.dim, nx = a.rows * dim;
  const Lanes<M> ln(dim, V);
  const int nbytes = int(ln.nch) * 16;  // a row's chunks' bytes in shared memory
  const bool w_aligned = (reinterpret_cast<uintptr_t>(a.w) & 15) == 0;
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const int64_t row = r * dim;
    const int64_t gate = a.index[r];
    const int64_t tb = gate * dim;
    stage_row(x, nx, row, dim, reinterpret_cast<uint16_t*>(row_chunks), nbytes);
    __syncthreads();
    float s[M], zero[M];
#pragma unroll
    for (int j = 0; j < M; ++j) {
      s[j] = zero[j] = 0.0f;
      for (int64_t c = ln.chunk(j, 0); c < ln.end(j); c += ln.T) {
        const int n = int(min64(V, dim - c * V));
        float v[V];
        unpack<T>(row_chunks[c], v);
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (e < n) s[j] = __fadd_rn(s[j], __fmul_rn(v[e], v[e]));
      }
    }
    const float rstd = rstd_of(fold_lanes<M>(ln, s, zero, sm).x, dim, a.eps);
#pragma unroll
    for (int j = 0; j < M; ++j)
      ln.template each<true>(j, 0, dim, V, [&](int64_t c, int n) {
        fwd_put_unaligned<T>(a, w_aligned, rstd, row, tb, c, n, n > 0 ? row_chunks[c] : make_uint4(0, 0, 0, 0));
      });
    __syncthreads();  // the next row's staging overwrites this one's chunks
  }
}

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
