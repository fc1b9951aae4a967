// rmsnorm_modulate's backward in one pass (bwd_onepass_kernel).
#pragma once

#include <cstdint>

#include "../rmsnorm_modulate_order.h"
#include "rmsnorm_modulate_cuda_bwd_terms.cuh"
#include "rmsnorm_modulate_cuda_bwd_tiles.cuh"
#include "rmsnorm_modulate_cuda_rows.cuh"

namespace gatecheck {
namespace rmsnorm_cuda_detail {

// Where a row's chunks load as 16 bytes and each of the order's T partials
// has at most two chunks, one kernel does both passes' work and reads x and g
// once. Each block of T threads walks its dweight groups' rows in tile order
// (gate order, then a gate's rows in batch order, as the tile kernel does), a
// row at a time; thread t holds partial t, so the same thread owns the same
// columns for a row's statistics and for the column sums:
//   - its chunks of the next kOnePassAhead rows are copied into shared memory
//     ahead (cp.async); it reads back only its own copies, so they need no
//     barrier;
//   - the row's statistics are folded by the order's trees, every warp
//     folding the warp sums itself (one barrier a row);
//   - it writes its chunks of dx and adds the row's terms to its column sums
//     (dweight for the group, dshift and dscale for the tile), in registers
//     or in its own slots of shared memory (SHARED, below).
// The row kernel's and the tile kernel's sums in their orders: the same bits.

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = unsigned(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Every copy of this thread's but the last N committed groups' done.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Tile t's first position; *gate_first, where given, its gate's first position.
__device__ __forceinline__ int64_t tile_first_pos(const Plan& p, int64_t gates, int64_t t, int* gate_first = nullptr) {
  int64_t lo = 0, hi = gates;  // gate k: the last with tile_start[k] <= t
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (p.tile_start[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  const int first = p.seg_start[lo];
  if (gate_first) *gate_first = first;
  return first + (t - p.tile_start[lo]) * kRmsSegTileRows;
}

// v as an opaque new value: its unpacking stays at the use, so registers hold
// the packed 16-byte chunk rather than V floats (w and the factors are the
// same for many rows; the compiler would otherwise hoist their unpacking).
__device__ __forceinline__ uint4 opaque(const uint4& v) {
  uint4 o;
  asm volatile("mov.b32 %0, %4;\n\tmov.b32 %1, %5;\n\tmov.b32 %2, %6;\n\tmov.b32 %3, %7;\n"
               : "=r"(o.x), "=r"(o.y), "=r"(o.z), "=r"(o.w)
               : "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
  return o;
}

constexpr int kOnePassAhead = 2;        // rows copied ahead of the one worked
constexpr int kOnePassMaxThreads = 512;  // T at most (one block an SM, up to 128 registers a thread)
constexpr int64_t kOnePassSmemMax = 200 << 10;

// The column sums in shared memory rather than registers (SHARED), each
// thread's own slots (no barrier), so that two blocks of at most
// kOnePassLeanThreads threads fit an SM. With its fp32 sums in registers
// (two chunks of dweight, dshift and dscale: 48 floats a thread at 16 bits,
// 24 at f32) the kernel takes 122 to 127 registers at 16 bits and 91 at f32
// (ptxas), allocated as 128 and 96: two blocks share an SM's 64K registers
// only up to onepass_register_pair_threads(vec) threads. Above, one block
// leaves the schedulers idle on the row statistics' serial chains; below,
// the sums' loads and stores cost more than they gain. One row is copied
// ahead where the sums take shared memory, to leave room.
constexpr int kOnePassLeanThreads = 352;
constexpr int onepass_register_pair_threads(int vec) { return vec == 8 ? 256 : 320; }
__host__ __device__ constexpr int onepass_ahead(bool shared) { return shared ? 1 : kOnePassAhead; }
__host__ __device__ constexpr int onepass_max_threads(bool shared) {
  return shared ? kOnePassLeanThreads : kOnePassMaxThreads;
}
// An SM's shared memory, and what the system keeps of it for each block.
constexpr int64_t kSmemPerSm = 228 << 10, kSmemReservedPerBlock = 1 << 10;

// Shared memory of the one-pass kernel: ahead + 1 rows of x and g, and, where
// `shared`, the three sums of `threads` threads, laid out for
// kOnePassLeanThreads (SmemSums).
int64_t onepass_smem_bytes(int64_t dim, int vec, bool shared = false, int64_t threads = 0) {
  const int ahead = onepass_ahead(shared);
  const int64_t cpt = shared ? (dim / vec + threads - 1) / threads : 0;
  return int64_t(ahead + 1) * 2 * (dim / vec) * 16 + 3 * cpt * vec * 4 * kOnePassLeanThreads;
}

// A thread's sums of one chunk in shared memory: V floats as V/4 float4, the
// block's threads side by side (conflict-free), for sum j of chunk m. The
// stride is the most threads a block of them has, whatever it has: a
// compile-time offset from the thread's own slot, so that each load and
// store takes no address arithmetic (a runtime stride cost a multiply-add
// or two for each of a chunk's twelve, as ptxas rebuilt the addresses from
// the block size rather than keep twelve registers).
template <int V, int CPT>
struct SmemSums {
  float4* base;  // this thread's first slot
  __device__ float4* at(int j, int m, int q) const { return base + ((j * CPT + m) * (V / 4) + q) * kOnePassLeanThreads; }
  __device__ void get(int j, int m, float (&v)[V]) const {
#pragma unroll
    for (int q = 0; q < V / 4; ++q) {
      const float4 f = *at(j, m, q);
      v[4 * q] = f.x, v[4 * q + 1] = f.y, v[4 * q + 2] = f.z, v[4 * q + 3] = f.w;
    }
  }
  __device__ void put(int j, int m, const float (&v)[V]) const {
#pragma unroll
    for (int q = 0; q < V / 4; ++q) *at(j, m, q) = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
  }
  __device__ void zero(int j, int m) const {
#pragma unroll
    for (int q = 0; q < V / 4; ++q) *at(j, m, q) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
};

template <class T, int CPT, bool SHARED>
__global__ void __launch_bounds__(onepass_max_threads(SHARED), SHARED ? 2 : 1) bwd_onepass_kernel(Ptrs a, Plan p) {
  if (*a.bad != kNoBadRow) return;
  constexpr int V = VecOf<T>::value, D = onepass_ahead(SHARED) + 1;
  constexpr int RS = SHARED ? 1 : CPT;  // register sums' chunks (1 where they are in shared memory: unused)
  extern __shared__ uint4 staged[];  // [row % D][x, g][chunk], then the sums kept in shared memory
  __shared__ float2 red[2][32];      // a row's warp sums, by row parity
  const T *x = static_cast<const T*>(a.x), *w = static_cast<const T*>(a.w);
  const T *scale = static_cast<const T*>(a.scale), *g = static_cast<const T*>(a.g);
  T* dx = static_cast<T*>(a.dx);
  const int64_t dim = a.dim, nch = dim / V;
  const int t = int(threadIdx.x), nt = int(blockDim.x), lane = t & 31, warp = t >> 5, nw = nt >> 5;
  int ch[CPT];  // this thread's chunks (nch <= 2 * kOnePassMaxThreads)
  bool own[CPT];
  uint4 wr[CPT];  // w's chunks, as loaded
  // A row's global addresses are its start (the same for the block) plus the
  // chunk's byte offset (this thread's), so that each copy and store adds a
  // 32-bit offset rather than redoing row * dim + chunk in 64 bits.
  uint32_t at[CPT];
#pragma unroll
  for (int m = 0; m < CPT; ++m) {
    ch[m] = t + m * nt;
    own[m] = ch[m] < nch;
    at[m] = uint32_t(ch[m]) * 16u;
    if (own[m]) wr[m] = load_raw(w, ch[m] * V);
  }
  auto row_start = [&](const void* base, int64_t row) {
    return static_cast<const char*>(base) + row * dim * int64_t(sizeof(T));
  };
  const int64_t ntiles = p.tile_start[a.gates];
  // Sums in shared memory: j 0 dshift, 1 dscale, 2 dweight.
  const SmemSums<V, CPT> ss{reinterpret_cast<float4*>(staged + D * 2 * int(nch)) + t};
  constexpr unsigned kAll = 0xffffffffu;
  // The block's groups are blockIdx.x + j * gridDim.x (a grid of the blocks
  // that fit at once). Their first and end positions and the first one's
  // gate's first position, 32 groups at a time, found by the first warp a lane
  // a group (its 32 searches wait out one chain of loads where each group
  // waited out its own) and kept in shared memory (gb[.][j % 32]), so the next
  // group's are known a group ahead; positions and rows fit an int (rows <
  // 2^31, checked by the entry point). Past a group's first row, a new gate
  // starts at its row's position (the rows are in gate order), so no other
  // gate's first position is loaded.
  __shared__ int gb[3][32];
  auto bounds = [&](int64_t j0) {  // at a barrier's distance from any reader of the last 32
    if (warp == 0) {
      const int64_t t0 = (int64_t(blockIdx.x) + (j0 + lane) * int64_t(gridDim.x)) * p.tiles_per_group;
      int lo = 0, hi = 0, first = 0;
      if (t0 < ntiles) {
        const int64_t t1 = min64(ntiles, t0 + p.tiles_per_group);
        lo = int(tile_first_pos(p, a.gates, t0, &first));
        hi = int(t1 < ntiles ? tile_first_pos(p, a.gates, t1) : a.rows);
      }
      gb[0][lane] = lo;
      gb[1][lane] = hi;
      gb[2][lane] = first;
    }
    __syncthreads();
  };
  // A group's rows and keys, a lane a position: lane l holds positions base +
  // l (r0, k0) and base + 32 + l (r1, k1), and a row reads its own by shuffle.
  // Loaded a position a lane, rows before they are needed, they are not waited
  // out: loaded a row ahead as block-wide values, each went to the uniform
  // registers at once, and that conversion waited out the load (about 11% of
  // the stall samples under ncu, source-profile/h100-f9c319d), as did a new
  // gate's first position and, at each group's start, its bounds' searches and
  // its first rows' copies. The next group's first 32 positions (nr0, nk0)
  // load during this group, and its first rows' copies start during this
  // group's last rows.
  auto fetch_row = [&](int q0, int nq, int i) { return i < nq ? p.rows_sorted[q0 + i] : 0; };
  auto fetch_key = [&](int q0, int nq, int i) { return i < nq ? p.keys_sorted[q0 + i] : 0; };
  bounds(0);
  int P0 = gb[0][0], n = gb[1][0] - P0, seg = gb[2][0];
  int nr0 = fetch_row(P0, n, lane), nk0 = fetch_key(P0, n, lane);
  int taken = 0;  // rows this block has taken, for their copies' buffers and the warp sums' parity
  auto stage = [&](int q, bool valid, int64_t row) {  // the block's row q's copy (or none)
    if (valid) {
      uint4* b = staged + (q % D) * 2 * int(nch);
      const char *xr = row_start(x, row), *gr = row_start(g, row);
#pragma unroll
      for (int m = 0; m < CPT; ++m)
        if (own[m]) {
          cp_async16(b + ch[m], xr + at[m]);
          cp_async16(b + nch + ch[m], gr + at[m]);
        }
    }
    cp_async_commit();
  };
  // A group's first rows are copied during the last one's, as far as that
  // one's rows reach (D - 1 rows ahead); the rest (all of the first group's,
  // and where the last group had fewer than D - 1 rows) at its start, waited
  // out at once, as they come after the copies the rows' waits count on.
  int late = D - 1;
  for (int64_t j = 0, grp = blockIdx.x; grp * p.tiles_per_group < ntiles; ++j, grp += gridDim.x) {
    int base = 0, r0 = nr0, k0 = nk0;
    int r1 = fetch_row(P0, n, 32 + lane), k1 = fetch_key(P0, n, 32 + lane);
    if ((j + 1) % 32 == 0) bounds(j + 1);
    const int jn = int((j + 1) % 32), nP0 = gb[0][jn], nn = gb[1][jn] - nP0, nseg = gb[2][jn];
    nr0 = fetch_row(nP0, nn, lane);
    nk0 = fetch_key(nP0, nn, lane);
    // Position q's row, this group's (base <= q < base + 64) or past its end the next group's.
    auto row_at = [&](int q) {
      return q < n ? __shfl_sync(kAll, q - base < 32 ? r0 : r1, q & 31) : __shfl_sync(kAll, nr0, (q - n) & 31);
    };
    if (late > 0) {
      for (int i = 0; i < late; ++i) stage(taken + i, i < n, row_at(i));
      cp_async_wait<0>();
    }
    late = n < D - 1 ? D - 1 - n : 0;  // the next group's
    float dw[RS][V], sh[RS][V], sc[RS][V];
    uint4 fr[CPT];  // the tile's modulation factors, exact in T: packed, for registers
#pragma unroll
    for (int m = 0; m < CPT; ++m) {
      fr[m] = make_uint4(0, 0, 0, 0);
      if constexpr (SHARED) {
        if (own[m]) ss.zero(2, m);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) dw[m][e] = sh[m][e] = sc[m][e] = 0.0f;
      }
    }
    int k = -1, ti = -1;  // the tile's gate and its tile (seg: the gate's first position)
    auto flush = [&] {
#pragma unroll
      for (int m = 0; m < CPT; ++m)
        if (k >= 0 && own[m]) {
          if constexpr (!SHARED) {
            store_tile_sums<T, true>(a, p, k, ti, ch[m], V, sh[m], sc[m]);
          } else {
            float h[V], c[V];
            ss.get(0, m, h);
            ss.get(1, m, c);
            store_tile_sums<T, true>(a, p, k, ti, ch[m], V, h, c);
          }
        }
    };
    for (int i = 0; i < n; ++i, ++taken) {
      if (i - base == 32) {  // the window on by 32 positions (base is a multiple of 32: i & 31 is i - base)
        base = i;
        r0 = r1;
        k0 = k1;
        r1 = fetch_row(P0, n, i + 32 + lane);
        k1 = fetch_key(P0, n, i + 32 + lane);
      }
      // Its buffer's last reads were this thread's own, before the last row's barrier.
      stage(taken + D - 1, i + D - 1 < n + nn, row_at(i + D - 1));
      const int pos = P0 + i, kk = __shfl_sync(kAll, k0, i & 31);
      if (i > 0 && kk != k) seg = pos;
      const int tile = (pos - seg) / kRmsSegTileRows;
      const int64_t row = __shfl_sync(kAll, r0, i & 31);
      if (kk != k || tile != ti) {  // a new tile: the last one's sums out, zeros in
        flush();
        k = kk;
        ti = tile;
#pragma unroll
        for (int m = 0; m < CPT; ++m) {
          if constexpr (!SHARED) {
#pragma unroll
            for (int e = 0; e < V; ++e) sh[m][e] = sc[m][e] = 0.0f;
          } else if (own[m]) {
            ss.zero(0, m);
            ss.zero(1, m);
          }
          if (own[m]) fr[m] = factor_raw<T>(load_raw(scale, int64_t(k) * dim + ch[m] * V));
        }
      }
      cp_async_wait<D - 1>();
      const uint4* b = staged + (taken % D) * 2 * int(nch);
      float s = 0.0f, cs = 0.0f;
#pragma unroll
      for (int m = 0; m < CPT; ++m)
        if (own[m]) {
          float xv[V], gv[V], wv[V], fv[V];
          unpack<T>(b[ch[m]], xv);
          unpack<T>(b[nch + ch[m]], gv);
          unpack<T>(opaque(wr[m]), wv);
          unpack<T>(opaque(fr[m]), fv);
          add_row_terms(V, xv, gv, wv, fv, s, cs);
        }
      s = warp_tree(s);
      cs = warp_tree(cs);
      const int par = taken & 1;
      if (lane == 0) red[par][warp] = make_float2(s, cs);
      __syncthreads();
      const float2 v = lane < nw ? red[par][lane] : make_float2(0.0f, 0.0f);
      const float rstd = rstd_of(warp_tree(v.x), dim, a.eps);
      const float kq = dx_factor(rstd, warp_tree(v.y), dim);
#pragma unroll
      for (int m = 0; m < CPT; ++m)
        if (own[m]) {
          float xv[V], gv[V], wv[V], fv[V], o[V];
          unpack<T>(b[ch[m]], xv);
          unpack<T>(b[nch + ch[m]], gv);
          unpack<T>(opaque(wr[m]), wv);
          unpack<T>(opaque(fr[m]), fv);
          dx_chunk(rstd, kq, xv, gv, wv, fv, o);
          *reinterpret_cast<uint4*>(const_cast<char*>(row_start(dx, row)) + at[m]) = round_chunk<T>(o);
          if constexpr (!SHARED) {
            add_col_terms<T>(rstd, xv, gv, wv, fv, sh[m], sc[m], dw[m]);
          } else {
            float h[V], c[V], d[V];
            ss.get(0, m, h);
            ss.get(1, m, c);
            ss.get(2, m, d);
            add_col_terms<T>(rstd, xv, gv, wv, fv, h, c, d);
            ss.put(0, m, h);
            ss.put(1, m, c);
            ss.put(2, m, d);
          }
        }
    }
    flush();
#pragma unroll
    for (int m = 0; m < CPT; ++m)
      if (own[m]) {
        float d[V];
        if constexpr (SHARED) {
          ss.get(2, m, d);
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e) d[e] = dw[m][e];
        }
        store_group_sums(p, grp, dim, ch[m], d);
      }
    P0 = nP0;
    n = nn;
    seg = nseg;
  }
}

}  // namespace rmsnorm_cuda_detail
}  // namespace gatecheck
