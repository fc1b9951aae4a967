// An exclusive scan of small integer records over a block, in thread order,
// with the block's total: shuffles within each warp, then warp 0 scans the
// warps' totals the same way. It stands in for cub::BlockScan, whose raking
// warp spilled such records to local memory in gate_residual's plan kernels
// (ptxas -v: 356 to 2112 bytes of spill stores). Integer sums: the same
// values in any order. The index plans of both ops use it.
#pragma once

namespace gatecheck {

// Rec: a record of integers with Rec{} zero, `Rec operator+(const Rec&, const
// Rec&)` and `Rec shfl_up(const Rec&, int)` (each field __shfl_up_sync'd),
// found by argument-dependent lookup.
template <class Rec>
__device__ __forceinline__ Rec warp_inclusive_scan(Rec v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const Rec u = shfl_up(v, d);
    if (lane >= d) v = u + v;
  }
  return v;
}

template <int Threads, class Rec>
struct BlockRecordScan {
  static constexpr int kWarps = Threads / 32;
  static_assert(Threads % 32 == 0 && kWarps <= 32, "one warp scans the warps' totals");
  struct TempStorage {
    Rec warp_incl[kWarps];  // totals, then inclusive prefixes over warps
  };
  TempStorage& tmp;
  __device__ explicit BlockRecordScan(TempStorage& t) : tmp(t) {}
  // before = the sum over the block's earlier threads, total = over all.
  // Called by every thread; the temporary storage is free on return.
  __device__ void exclusive(const Rec& x, Rec& before, Rec& total) {
    const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
    const Rec inc = warp_inclusive_scan(x, lane);
    Rec ex = shfl_up(inc, 1);
    if (lane == 0) ex = Rec{};
    if (lane == 31) tmp.warp_incl[warp] = inc;
    __syncthreads();
    if (warp == 0) {  // each lane reads and writes its own warp's slot
      const Rec w = warp_inclusive_scan(lane < kWarps ? tmp.warp_incl[lane] : Rec{}, lane);
      if (lane < kWarps) tmp.warp_incl[lane] = w;
    }
    __syncthreads();
    before = (warp > 0 ? tmp.warp_incl[warp - 1] : Rec{}) + ex;
    total = tmp.warp_incl[kWarps - 1];
    __syncthreads();
  }
};

}  // namespace gatecheck
