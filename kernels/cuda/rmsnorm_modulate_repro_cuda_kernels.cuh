// cuda-repro for rmsnorm_modulate, its kernels: the index check, and the terms
// kernel (dweight's, dshift's and dscale's terms into binned sums, then the
// wide sums). Included by rmsnorm_modulate_repro_cuda.cu, the host side.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../binned_sum.h"
#include "../gate_residual_dtype.h"
#include "binned_state_cuda.cuh"
#include "rmsnorm_modulate_cuda_chunk.cuh"

namespace gatecheck {
namespace rmsnorm_repro_cuda_detail {

constexpr unsigned long long kNoBadRow = ~0ull;
constexpr int kThreads = binned_cuda::kThreads;  // a column a thread
// Rows a block takes (its tile) of the rows sorted by gate, so that each
// gate's rows are one run: long enough that the atomics are few (a flush per
// gate in the tile, and dweight's one), short enough to fill the GPU.
constexpr int kTileRows = 256;
constexpr int kAhead = 4;  // rows whose loads are issued at once
static_assert(kTileRows <= BinnedFp64Sum::kMaxTerms, "a run's digits stay exact in fp64");

// Where gradient t (0 dweight, 1 dshift, 2 dscale) starts in a state, in
// elements: host-repro's layout.
GC_HD int64_t first_element(int64_t dim, int64_t gates, int t) { return t == 0 ? 0 : dim + (t - 1) * gates * dim; }

// The index checked (the first bad row kept); with `ids`, each row's number
// there, the values of the sort by gate.
__global__ void check_index_kernel(const int64_t* index, int64_t rows, int64_t gates, unsigned long long* bad,
                                   int64_t* ids) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    if (index[r] < 0 || index[r] >= gates) atomicMin(bad, (unsigned long long)r);
    if (ids) ids[r] = r;
  }
}

struct TermsArgs {
  const void *x, *w, *scale, *g;
  const int64_t *gate_sorted, *row_sorted;  // the rows sorted by gate (stable), and their gates
  const float* rstd;
  int64_t rows, dim, gates;
  const unsigned long long* bad;
  binned_cuda::WideSums wide;
};

using rmsnorm_cuda_detail::rn;  // the cuda kernels' intermediate rounding: the same terms

// Element (r, j)'s terms, host-repro's (the twin's column terms) and the
// cuda tile kernel's: dweight's (g*f)*x*rstd, dshift's g, dscale's
// g*rn(w*(rstd*x)), with f = rn(1 + scale[index[r], j]).
struct Terms {
  float dweight, dshift, dscale;
};
template <class T>
__device__ __forceinline__ Terms column_terms(float rs, float x, float g, float w, float f) {
  return {__fmul_rn(__fmul_rn(__fmul_rn(g, f), x), rs), g, __fmul_rn(g, rn<T>(__fmul_rn(w, __fmul_rn(rs, x))))};
}

__device__ __forceinline__ void flush(const binned_cuda::WideSums& w, int64_t e, const BinnedFp64Sum& s) {
  uint64_t v[kBinnedWords];
  s.to_words(v);
  binned_cuda::wide_add(w, e, v);
}

// A tile row as the sums read it: where its row starts in x and g, its rstd
// and its gate; one 16-byte shared load.
struct TileRow {
  int64_t at;  // row * dim
  float rstd;
  int gate;  // gates < 2^31 (the partial's check)
};
static_assert(sizeof(TileRow) == 16, "a tile row is one 16-byte shared load");

// Column j's x and g of tile rows p .. p + kAhead - 1 (those below n; zeros past it).
template <class T>
__device__ __forceinline__ void load_rows(const T* xj, const T* gj, const TileRow* tile, int p, int n, T (&xv)[kAhead],
                                          T (&gv)[kAhead]) {
#pragma unroll
  for (int q = 0; q < kAhead; ++q)
    if (p + q < n) {
      const int64_t at = tile[p + q].at;
      xv[q] = xj[at];
      gv[q] = gj[at];
    } else {
      xv[q] = gv[q] = T();
    }
}

// A thread's three sums over a tile: dweight's, and dshift's and dscale's
// over the run of gate k, with its factor f.
struct ColumnSums {
  BinnedFp64Sum dw, sh, sc;
  int k;
  float f;

  // A run of gate k starts: dshift's and dscale's sums empty, f from its scale row.
  template <class T>
  __device__ __forceinline__ void start_run(int gate, const T* scale_j, int64_t dim) {
    sh.clear();
    sc.clear();
    k = gate;
    f = rn<T>(__fadd_rn(1.0f, to_float(scale_j[int64_t(k) * dim])));
  }
  // The run ends: dshift's and dscale's sums into gate k's wide sums.
  __device__ __forceinline__ void end_run(const binned_cuda::WideSums& w, int64_t shift_at, int64_t scale_at,
                                          int64_t dim) const {
    flush(w, shift_at + int64_t(k) * dim, sh);
    flush(w, scale_at + int64_t(k) * dim, sc);
  }
};

// Adds rows p .. p + G - 1 of a tile (those below n), row p + i's x and g
// being xv[i] and gv[i]. Where every row is of gate k and no term needs a
// new top bin or is special, the 3G adds are one block of code, so that
// their chains of dependent fp64 operations interleave; else row by row, a
// gate's run flushed where it ends.
template <class T, int G>
__device__ __forceinline__ void add_rows(ColumnSums& c, const TermsArgs& a, const TileRow* tile, int p, int n,
                                         const T* xv, const T* gv, float w, const T* scale_j, int64_t shift_at,
                                         int64_t scale_at) {
  Terms m[G];
  bool fast = p + G <= n;
#pragma unroll
  for (int i = 0; i < G; ++i) {
    const TileRow& t = tile[p + i < n ? p + i : p];
    m[i] = column_terms<T>(t.rstd, to_float(xv[i]), to_float(gv[i]), w, c.f);
    fast = fast && t.gate == c.k && !c.dw.needs_slow(float_bits(m[i].dweight)) &&
           !c.sh.needs_slow(float_bits(m[i].dshift)) && !c.sc.needs_slow(float_bits(m[i].dscale));
  }
  if (fast) {
#pragma unroll
    for (int i = 0; i < G; ++i) {
      c.dw.add_in_window(m[i].dweight, float_bits(m[i].dweight));
      c.sh.add_in_window(m[i].dshift, float_bits(m[i].dshift));
      c.sc.add_in_window(m[i].dscale, float_bits(m[i].dscale));
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < G; ++i) {
    if (p + i >= n) break;
    const TileRow& t = tile[p + i];
    if (t.gate != c.k) {  // the gate's run ends
      c.end_run(a.wide, shift_at, scale_at, a.dim);
      c.start_run(t.gate, scale_j, a.dim);
    }
    const Terms r = column_terms<T>(t.rstd, to_float(xv[i]), to_float(gv[i]), w, c.f);
    c.dw.add(r.dweight);
    c.sh.add(r.dshift);
    c.sc.add(r.dscale);
  }
}

// A thread per column, a block row per tile of kTileRows of the rows sorted
// by gate (grid-stride), so that each gate's rows are one run (any order
// gives the same bits; this one makes the runs long); each thread keeps
// dweight's binned sum over the tile, and dshift's and dscale's over each
// gate's run, in registers, and adds them to the wide sums when they end.
// Binned sums are exact: neither the tiles, nor the runs, nor their order
// change a bit of the state. The sums keep their window's constants
// (BinnedFp64Sum: one compare a term), G rows' terms are added at once
// (add_rows), and the next kAhead rows' loads are in flight while a thread
// sums the last kAhead's: the kernel is bound by its instructions and their
// latency, not by its bytes.
template <class T, int G>
__global__ void __launch_bounds__(kThreads) terms_kernel(TermsArgs a) {
  static_assert(kAhead % G == 0, "a load group is whole groups of rows");
  __shared__ TileRow tile[kTileRows];
  if (*a.bad != kNoBadRow) return;
  const int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x, dim = a.dim;
  const bool live = j < dim;  // every thread fills the tile; a column's thread sums
  const T *xj = static_cast<const T*>(a.x) + j, *gj = static_cast<const T*>(a.g) + j;
  const T* scale_j = static_cast<const T*>(a.scale) + j;
  const float w = live ? to_float(static_cast<const T*>(a.w)[j]) : 0.0f;
  const int64_t shift_at = first_element(dim, a.gates, 1) + j, scale_at = first_element(dim, a.gates, 2) + j;
  for (int64_t r0 = int64_t(blockIdx.y) * kTileRows; r0 < a.rows; r0 += int64_t(gridDim.y) * kTileRows) {
    const int n = int(a.rows - r0 < kTileRows ? a.rows - r0 : kTileRows);
    __syncthreads();  // the last tile's readers are done
    for (int i = threadIdx.x; i < n; i += kThreads) {
      const int64_t r = a.row_sorted[r0 + i];
      tile[i] = TileRow{r * dim, a.rstd[r], int(a.gate_sorted[r0 + i])};
    }
    __syncthreads();
    if (!live) continue;
    ColumnSums c;
    c.dw.clear();
    c.start_run(tile[0].gate, scale_j, dim);
    T xv[kAhead], gv[kAhead];
    load_rows(xj, gj, tile, 0, n, xv, gv);
    for (int p = 0; p < n; p += kAhead) {
      T xn[kAhead], gn[kAhead];
      load_rows(xj, gj, tile, p + kAhead, n, xn, gn);
#pragma unroll
      for (int q = 0; q < kAhead; q += G)
        add_rows<T, G>(c, a, tile, p + q, n, xv + q, gv + q, w, scale_j, shift_at, scale_at);
#pragma unroll
      for (int q = 0; q < kAhead; ++q) {
        xv[q] = xn[q];
        gv[q] = gn[q];
      }
    }
    c.end_run(a.wide, shift_at, scale_at, dim);
    flush(a.wide, j, c.dw);
  }
}

}  // namespace rmsnorm_repro_cuda_detail
}  // namespace gatecheck
