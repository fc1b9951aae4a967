// rows x dim past 2^31 elements (and a 16-bit tensor past 2^32 bytes): the
// kernels' offsets must be int64 (issue 4). A cuda-vs-host comparison of the
// whole problem would need tens of GB on the host, so the inputs are filled on
// the device from a hash of each element's position, with small integers in
// [-2, 2]. Then every output is exact in fp32, and the host recomputes any
// element from its position alone: out, grad_res and grad_y of the rows around
// element 2^31 (byte 2^32 of a 16-bit tensor), the first and last rows and
// sampled rows; grad_gate of every
// gate, or of sampled gates when there are many. A gate's sum has at most 4 x
// rows in magnitude, below 2^24, so it is exact whatever the order of the
// additions (the order itself is checked bit for bit by CudaVsHost on smaller
// problems). An offset computed in 32 bits reads or writes another element,
// which holds another value in 4 cases of 5.
//
// The test needs about 28 GB (16-bit types) or 52 GB (fp32) of free device
// memory and skips, saying so, where there is less.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "kernels/cuda/gate_residual_cuda.h"
#include "kernels/gate_residual_math.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace testing_cuda {
namespace {

// splitmix64's finaliser: neighbouring positions get unrelated values.
__host__ __device__ inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The value at element i of the tensor named by salt: an integer in [-2, 2].
__host__ __device__ inline float small_int(uint64_t salt, uint64_t i) {
  return float(int(mix(i ^ (salt << 56)) % 5) - 2);
}

template <class T>
__global__ void fill_kernel(T* p, uint64_t n, uint64_t salt) {
  const uint64_t step = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    p[i] = round_to<T>(small_int(salt, i));
}

template <class T> uint32_t bits_of(T v) { return v.bits; }
template <> uint32_t bits_of<float>(float v) { return float_bits(v); }

enum Salt : uint64_t { kRes = 1, kGate = 2, kY = 3, kGradOut = 4 };

template <class T> T value(Salt s, uint64_t i) { return round_to<T>(small_int(s, i)); }

template <class T> constexpr DType dtype_of() {
  return std::is_same<T, float>::value ? DType::f32 : std::is_same<T, f16_t>::value ? DType::f16 : DType::bf16;
}
static_assert(dtype_of<bf16_t>() == DType::bf16 && dtype_of<f16_t>() == DType::f16 && dtype_of<float>() == DType::f32 &&
                  sizeof(bf16_t) == 2 && sizeof(f16_t) == 2,
              "the problem's dtype and element size follow from T");

bool cuda_ok(cudaError_t e, const char* what, std::string* why) {
  if (e == cudaSuccess) return true;
  *why = std::string(what) + ": " + cudaGetErrorString(e);
  return false;
}

struct Shape {
  int64_t rows, dim, gates;
  bool sorted;  // else each row's gate from a hash of the row
};

std::vector<int64_t> make_index(const Shape& s) {
  std::vector<int64_t> index(size_t(s.rows));
  for (int64_t r = 0; r < s.rows; ++r)
    index[size_t(r)] = s.sorted ? r * s.gates / s.rows : int64_t(mix(uint64_t(r) ^ 0x5eedull) % uint64_t(s.gates));
  return index;
}

// The rows to check: the first and last, the one holding element 2^31 and its
// neighbours, and 64 more at random.
std::vector<int64_t> rows_to_check(const Shape& s) {
  std::vector<int64_t> rows = {0, 1, s.rows - 2, s.rows - 1};
  for (int64_t d : {-1, 0, 1}) rows.push_back((int64_t(1) << 31) / s.dim + d);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 64; ++i) rows.push_back(int64_t(rng() % uint64_t(s.rows)));
  rows.erase(std::remove_if(rows.begin(), rows.end(), [&](int64_t r) { return r < 0 || r >= s.rows; }), rows.end());
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// Each checked gate's exact sums of g*y over its rows, one per column, on every
// core (each thread a block of columns; the rows of one gate from the index).
std::vector<std::vector<int32_t>> exact_gate_sums(const Shape& s, const std::vector<int64_t>& index,
                                                  const std::vector<int64_t>& gates) {
  std::vector<int64_t> pos(size_t(s.gates), -1);
  for (size_t k = 0; k < gates.size(); ++k) pos[size_t(gates[k])] = int64_t(k);
  std::vector<std::vector<int64_t>> members(gates.size());
  for (int64_t r = 0; r < s.rows; ++r)
    if (pos[size_t(index[size_t(r)])] >= 0) members[size_t(pos[size_t(index[size_t(r)])])].push_back(r);
  std::vector<std::vector<int32_t>> sums(gates.size(), std::vector<int32_t>(size_t(s.dim), 0));
  const int n = int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t)
    pool.emplace_back([&, t] {
      for (int64_t c = t; c < s.dim; c += n)
        for (size_t k = 0; k < gates.size(); ++k) {
          int32_t acc = 0;
          for (int64_t r : members[k]) {
            const uint64_t i = uint64_t(r * s.dim + c);
            acc += int32_t(small_int(kGradOut, i)) * int32_t(small_int(kY, i));
          }
          sums[k][size_t(c)] = acc;
        }
    });
  for (auto& th : pool) th.join();
  return sums;
}

// Runs the forward and backward on one problem and returns "" or what differs
// (at most 8 lines). corrupt_row >= 0 first flips one bit of that row's out
// on the device, to show that the check sees it.
template <class T>
std::string run_and_check(const Shape& s, int64_t corrupt_row = -1) {
  const uint64_t n = uint64_t(s.rows * s.dim), ng = uint64_t(s.gates * s.dim);
  const size_t e = sizeof(T);
  std::string why;
  T *res = nullptr, *gate = nullptr, *y = nullptr, *out = nullptr, *g = nullptr, *grad_res = nullptr,
    *grad_gate = nullptr, *grad_y = nullptr;
  int64_t* index_d = nullptr;
  struct Free {
    std::vector<void*> p;
    ~Free() { for (void* q : p) cudaFree(q); }
  } owned;
  const std::pair<T**, uint64_t> buffers[] = {{&res, n},      {&gate, ng},      {&y, n},      {&out, n},
                                               {&g, n},        {&grad_res, n},   {&grad_gate, ng}, {&grad_y, n}};
  for (auto [ptr, count] : buffers) {
    if (!cuda_ok(cudaMalloc(reinterpret_cast<void**>(ptr), count * e), "cudaMalloc", &why)) return why;
    owned.p.push_back(*ptr);
  }
  if (!cuda_ok(cudaMalloc(reinterpret_cast<void**>(&index_d), size_t(s.rows) * 8), "cudaMalloc", &why)) return why;
  owned.p.push_back(index_d);
  const std::vector<int64_t> index = make_index(s);
  if (!cuda_ok(cudaMemcpy(index_d, index.data(), index.size() * 8, cudaMemcpyHostToDevice), "index upload", &why))
    return why;
  fill_kernel<<<4096, 256>>>(res, n, kRes);
  fill_kernel<<<4096, 256>>>(gate, ng, kGate);
  fill_kernel<<<4096, 256>>>(y, n, kY);
  fill_kernel<<<4096, 256>>>(g, n, kGradOut);
  if (!cuda_ok(cudaDeviceSynchronize(), "fill", &why)) return why;

  const gatecheck_problem p{s.rows, s.dim, s.gates, int32_t(dtype_of<T>()), int32_t(GATECHECK_CUDA), nullptr};
  Status st = gate_residual_fwd_cuda(p, res, gate, index_d, y, out);
  if (st.ok()) st = gate_residual_cuda_sync_status("gate_residual_fwd", p, index_d);
  if (!st.ok()) return "forward: " + st.message;
  st = gate_residual_bwd_cuda(p, g, gate, index_d, y, grad_res, grad_gate, grad_y);
  if (st.ok()) st = gate_residual_cuda_sync_status("gate_residual_bwd", p, index_d);
  if (!st.ok()) return "backward: " + st.message;
  if (corrupt_row >= 0) {
    T v = value<T>(kRes, 0);
    if (!cuda_ok(cudaMemcpy(&v, out + corrupt_row * s.dim, e, cudaMemcpyDeviceToHost), "read", &why)) return why;
    reinterpret_cast<unsigned char*>(&v)[0] ^= 1;
    if (!cuda_ok(cudaMemcpy(out + corrupt_row * s.dim, &v, e, cudaMemcpyHostToDevice), "corrupt", &why)) return why;
  }

  std::string diff;
  int lines = 0;
  auto differ = [&](const char* tensor, int64_t r, int64_t c, T got, T want) {
    if (bits_of(got) == bits_of(want)) return;
    if (lines++ < 8) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s[%" PRId64 ", %" PRId64 "] (element %" PRId64 "): cuda 0x%08x, expected 0x%08x\n",
                    tensor, r, c, r * s.dim + c, bits_of(got), bits_of(want));
      diff += buf;
    }
  };
  const std::vector<int64_t> rows = rows_to_check(s);
  std::vector<T> row_out(size_t(s.dim)), row_gres(size_t(s.dim)), row_gy(size_t(s.dim));
  for (int64_t r : rows) {
    const size_t at = size_t(r * s.dim), bytes = size_t(s.dim) * e;
    const std::pair<T*, T*> downloads[] = {{out, row_out.data()}, {grad_res, row_gres.data()}, {grad_y, row_gy.data()}};
    for (auto [from, to] : downloads)
      if (!cuda_ok(cudaMemcpy(to, from + at, bytes, cudaMemcpyDeviceToHost), "row download", &why)) return why;
    const int64_t k = index[size_t(r)];
    for (int64_t c = 0; c < s.dim; ++c) {
      const uint64_t i = uint64_t(r * s.dim + c), gi = uint64_t(k * s.dim + c);
      differ("out", r, c, row_out[size_t(c)], gate_residual_out<T>(value<T>(kRes, i), value<T>(kGate, gi), value<T>(kY, i)));
      differ("grad_res", r, c, row_gres[size_t(c)], value<T>(kGradOut, i));
      differ("grad_y", r, c, row_gy[size_t(c)], gate_residual_grad_y<T>(value<T>(kGradOut, i), value<T>(kGate, gi)));
    }
  }
  std::vector<int64_t> gates;
  if (s.gates <= 64) {
    for (int64_t k = 0; k < s.gates; ++k) gates.push_back(k);
  } else {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 2000; ++i) gates.push_back(int64_t(rng() % uint64_t(s.gates)));
    for (int64_t r : rows) gates.push_back(index[size_t(r)]);
    std::sort(gates.begin(), gates.end());
    gates.erase(std::unique(gates.begin(), gates.end()), gates.end());
  }
  const auto sums = exact_gate_sums(s, index, gates);
  std::vector<T> gg(size_t(s.dim));
  for (size_t j = 0; j < gates.size(); ++j) {
    if (!cuda_ok(cudaMemcpy(gg.data(), grad_gate + gates[j] * s.dim, size_t(s.dim) * e, cudaMemcpyDeviceToHost),
                 "grad_gate download", &why))
      return why;
    for (int64_t c = 0; c < s.dim; ++c)
      differ("grad_gate", gates[j], c, gg[size_t(c)], round_to<T>(float(sums[j][size_t(c)])));
  }
  if (lines > 8) diff += std::to_string(lines - 8) + " more elements differ\n";
  return diff;
}

// 699,100 rows of 3072: 2,147,635,200 elements, 151,552 past 2^31.
constexpr int64_t kRows = 699100, kDim = 3072;

// "" when the device has the memory of one problem (six row tensors and two
// gate tables) free, with 2 GB to spare for the kernels' scratch; else why
// the test skips.
template <class T>
std::string memory_short_of(const Shape& s) {
  const uint64_t bytes = (6 * uint64_t(s.rows * s.dim) + 2 * uint64_t(s.gates * s.dim)) * sizeof(T);
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return "cudaMemGetInfo failed";
  if (free_b >= bytes + (uint64_t(2) << 30)) return "";
  return "needs " + std::to_string((bytes >> 30) + 2) + " GiB of free device memory, has " +
         std::to_string(free_b >> 30);
}

TEST(CudaLargeOffsets, Bf16NineGatesPast2To31Elements) {
  GATECHECK_REQUIRE_GPU();
  const Shape s{kRows, kDim, 9, false};
  if (const std::string why = memory_short_of<bf16_t>(s); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run_and_check<bf16_t>(s), "");
}

// About 3 rows a gate: the CUB plan and short tiles, 233,033 gates.
TEST(CudaLargeOffsets, F16ShortGatesPast2To31Elements) {
  GATECHECK_REQUIRE_GPU();
  const Shape s{kRows, kDim, kRows / 3, false};
  if (const std::string why = memory_short_of<f16_t>(s); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run_and_check<f16_t>(s), "");
}

// fp32: past 2^33 bytes; sorted, so each gate is one long segment.
TEST(CudaLargeOffsets, F32SortedGatesPast2To31Elements) {
  GATECHECK_REQUIRE_GPU();
  const Shape s{kRows, kDim, 9, true};
  if (const std::string why = memory_short_of<float>(s); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run_and_check<float>(s), "");
}

// The check can fail: one bit of out flipped past element 2^31 is reported.
TEST(CudaLargeOffsets, CheckCatchesOneFlippedBitPast2To31) {
  GATECHECK_REQUIRE_GPU();
  const Shape s{kRows, kDim, 9, false};
  if (const std::string why = memory_short_of<bf16_t>(s); !why.empty()) GTEST_SKIP() << why;
  const int64_t row = (int64_t(1) << 31) / kDim + 1;
  const std::string diff = run_and_check<bf16_t>(s, row);
  EXPECT_NE(diff.find("out[" + std::to_string(row) + ", 0]"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("grad_"), std::string::npos) << diff;
}

}  // namespace
}  // namespace testing_cuda
}  // namespace gatecheck
