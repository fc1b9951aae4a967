// rmsnorm_modulate: the CUDA kernels and the host twin agree bit for bit on
// every output, through the plugin ABI v2, over the kernels' paths: the
// one-pass backward (RmsBwdKernels::one_pass: 16-byte rows of at most two
// chunks a partial and 512 partials; one and two chunks a thread, one gate
// per row, many tiles, rows past the grid, blocks that walk many groups; its
// column sums in shared memory where two blocks fit an SM, and with
// one_pass_register_sums in registers),
// special values on every path,
// and with the two passes (RmsBwdKernels::two_pass) the row kernels with a
// row kept in registers (aligned, dim a multiple of 16 bytes, up to 2,048
// chunks), with vector loads read twice (wider rows) and with element loads
// (odd dims, unaligned views, rows past 2,048 chunks); the tile kernel's
// one-tile gates (written at once) and many-tile gates (folded), gates
// without rows, rows past the grid's 65,535 blocks, and a bad index. Tests
// that name no path take the default (automatic).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device_buffers.h"
#include "kernels/cuda/rmsnorm_modulate_cuda.h"
#include "kernels/gate_residual_dtype.h"
#include "kernels/host/rmsnorm_modulate_host.h"
#include "kernels/rmsnorm_modulate.h"
#include "tests/gpu.h"

namespace gatecheck {
namespace testing_cuda {
namespace {

enum class Index { random, one_gate_per_row, all_one_gate, sorted_runs };
// normal: N(1, 1) for w, N(0, 1) else; special: those mixed with zeros of
// both signs, subnormals, the largest finite values, infinities, NaNs and
// scales about -1 (a factor 1 + scale of zero or a few ulps).
enum class Values { normal, special };

struct Shape {
  int64_t rows, dim, gates;
  DType dtype;
  Index index = Index::random;
  size_t misalign = 0;  // bytes past a 256-byte boundary for every float tensor on the device
  Values values = Values::normal;
};

std::string name_of(const Shape& s) {
  return std::string(dtype_name(s.dtype)) + " rows=" + std::to_string(s.rows) + " dim=" + std::to_string(s.dim) +
         " gates=" + std::to_string(s.gates) + " misalign=" + std::to_string(s.misalign) +
         (s.values == Values::special ? " special values" : "");
}

// The bits of a value the normal fill never draws, in t: signed zeros, the
// smallest and largest subnormals, the largest finite, infinities, NaN, and
// -1 and its neighbours (for a scale).
std::vector<uint32_t> special_bits(DType t) {
  switch (t) {
    case DType::f16:
      return {0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xbc00, 0xbc01, 0xbbff};
    case DType::bf16:
      return {0x0000, 0x8000, 0x0001, 0x807f, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0xbf80, 0xbf81, 0xbf7f};
    default:
      return {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0xff7fffffu,
              0x7f800000u, 0xff800000u, 0x7fc00000u, 0xbf800000u, 0xbf800001u, 0xbf7fffffu};
  }
}

// One tensor's host bytes.
struct HostTensor {
  int64_t rows, cols;
  size_t elem;
  std::vector<uint8_t> bytes;
};

struct Problem {
  const OpSchema& op = rmsnorm_modulate_schema();
  Shape s;
  std::vector<HostTensor> in, out;  // op order; the index among the inputs
};

Problem make_problem(const Shape& s, uint64_t seed) {
  Problem p{rmsnorm_modulate_schema(), s, {}, {}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t esz = size_t(dtype_size(s.dtype));
  for (const auto& in : p.op.inputs) {
    HostTensor t{role_rows(in.role, s.rows, s.gates), role_cols(in.role, s.dim), in.role == Role::index ? 8 : esz, {}};
    t.bytes.resize(size_t(t.rows * t.cols) * t.elem);
    if (in.role == Role::index) {
      auto* ix = reinterpret_cast<int64_t*>(t.bytes.data());
      for (int64_t r = 0; r < s.rows; ++r) {
        switch (s.index) {
          case Index::random: ix[r] = int64_t(rng() % uint64_t(s.gates)); break;
          case Index::one_gate_per_row: ix[r] = r; break;  // gates == rows, shuffled below
          case Index::all_one_gate: ix[r] = s.gates - 1; break;
          case Index::sorted_runs: ix[r] = r * s.gates / s.rows; break;
        }
      }
      if (s.index == Index::one_gate_per_row) std::shuffle(ix, ix + s.rows, rng);
    } else {
      const float mean = in.name == std::string("w") ? 1.0f : 0.0f;
      const float sd = in.fill == Fill::small_factor ? 0.1f : 1.0f;
      const std::vector<uint32_t> special = special_bits(s.dtype);
      // Sparse in rows (one special value poisons its row's statistics), dense in the tables.
      const uint64_t one_in = in.role == Role::row ? 200 : 4;
      for (int64_t i = 0; i < t.rows * t.cols; ++i) {
        uint32_t b = float_to_bits_rn(s.dtype, mean + sd * normal(rng));
        if (s.values == Values::special && rng() % one_in == 0) b = special[rng() % special.size()];
        std::memcpy(t.bytes.data() + size_t(i) * esz, &b, esz);  // little-endian: the low bytes
      }
    }
    p.in.push_back(std::move(t));
  }
  for (const auto& o : p.op.outputs) {
    HostTensor t{role_rows(o.role, s.rows, s.gates), role_cols(o.role, s.dim), esz, {}};
    t.bytes.assign(size_t(t.rows * t.cols) * esz, 0xA5);  // a pattern no call writes by chance
    p.out.push_back(std::move(t));
  }
  return p;
}

// The call's descriptors over `data` (one pointer per tensor, op order).
struct Call {
  std::vector<gatecheck_tensor> t;
  gatecheck_scalar eps{"eps", 1e-6};
  gatecheck_call c{};
};

void make_call(const Problem& p, Pass pass, const std::vector<void*>& data, Device dev, Call* call) {
  gatecheck_problem pr{};
  pr.rows = p.s.rows;
  pr.dim = p.s.dim;
  pr.gates = p.s.gates;
  pr.dtype = int32_t(p.s.dtype);
  pr.device = dev == Device::cuda ? GATECHECK_CUDA : GATECHECK_CPU;
  OpCall shaped = OpCall::shaped(p.op, pass, pr);
  call->t.clear();
  for (size_t i = 0; i < p.op.inputs.size(); ++i) {
    const Role r = p.op.inputs[i].role;
    const bool flat = r == Role::column || r == Role::index;
    call->t.push_back({p.op.inputs[i].name, r == Role::index ? GATECHECK_I64 : pr.dtype, flat ? 1 : 2,
                       {flat ? p.in[i].rows * p.in[i].cols : p.in[i].rows, flat ? 0 : p.in[i].cols},
                       shaped.reads(i) ? data[i] : nullptr});
  }
  for (size_t i = 0; i < p.op.outputs.size(); ++i) {
    const Role r = p.op.outputs[i].role;
    const bool flat = r == Role::column;
    const HostTensor& h = p.out[i];
    call->t.push_back({p.op.outputs[i].name, pr.dtype, flat ? 1 : 2, {flat ? h.cols : h.rows, flat ? 0 : h.cols},
                       shaped.makes(i) ? data[p.op.inputs.size() + i] : nullptr});
  }
  call->c.op = p.op.name;
  call->c.problem = pr;
  call->c.num_tensors = int32_t(call->t.size());
  call->c.tensors = call->t.data();
  call->c.num_scalars = 1;
  call->c.scalars = &call->eps;
}

// Forward then backward on the host; outputs into p.out.
std::string run_host(Problem& p) {
  std::vector<void*> d;
  for (auto& t : p.in) d.push_back(t.bytes.data());
  for (auto& t : p.out) d.push_back(t.bytes.data());
  const gatecheck_op_plugin* pl = rmsnorm_modulate_host_plugin();
  Call c;
  make_call(p, Pass::forward, d, Device::cpu, &c);
  if (pl->forward(&c.c)) return std::string("host forward: ") + pl->last_error();
  make_call(p, Pass::backward, d, Device::cpu, &c);
  if (pl->backward(&c.c)) return std::string("host backward: ") + pl->last_error();
  return "";
}

// The same on the device (index aligned; float tensors at s.misalign).
std::string run_cuda(Problem& p) {
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  std::vector<void*> d;
  for (size_t i = 0; i < p.in.size(); ++i) {
    const bool ix = p.op.inputs[i].role == Role::index;
    bufs.push_back(std::make_unique<DeviceBuffer>(p.in[i].bytes.size(), ix ? 0 : p.s.misalign));
    bufs.back()->upload(p.in[i].bytes.data());
    d.push_back(bufs.back()->get());
  }
  for (auto& t : p.out) {
    bufs.push_back(std::make_unique<DeviceBuffer>(t.bytes.size(), p.s.misalign));
    bufs.back()->upload(t.bytes.data());
    d.push_back(bufs.back()->get());
  }
  const gatecheck_op_plugin* pl = rmsnorm_modulate_cuda_plugin();
  Call c;
  std::string err;
  make_call(p, Pass::forward, d, Device::cuda, &c);
  if (pl->forward(&c.c)) err = std::string("cuda forward: ") + pl->last_error();
  make_call(p, Pass::backward, d, Device::cuda, &c);
  if (err.empty() && pl->backward(&c.c)) err = std::string("cuda backward: ") + pl->last_error();
  for (size_t i = 0; i < p.out.size(); ++i) bufs[p.in.size() + i]->download(p.out[i].bytes.data());
  return err;
}

// "" when equal bit for bit, else the first difference.
std::string compare(const char* name, const HostTensor& cuda, const HostTensor& host) {
  for (size_t i = 0; i < cuda.bytes.size(); i += cuda.elem)
    if (std::memcmp(&cuda.bytes[i], &host.bytes[i], cuda.elem) != 0) {
      uint32_t a = 0, b = 0;
      std::memcpy(&a, &cuda.bytes[i], cuda.elem);
      std::memcpy(&b, &host.bytes[i], cuda.elem);
      const int64_t e = int64_t(i / cuda.elem);
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s differs first at [%lld, %lld]: cuda 0x%x vs host 0x%x", name,
                    (long long)(e / cuda.cols), (long long)(e % cuda.cols), a, b);
      return buf;
    }
  return "";
}

void expect_same(const Shape& s, uint64_t seed = 34) {
  SCOPED_TRACE(name_of(s));
  Problem host = make_problem(s, seed), cuda = make_problem(s, seed);
  ASSERT_EQ(run_host(host), "");
  ASSERT_EQ(run_cuda(cuda), "");
  for (size_t i = 0; i < host.out.size(); ++i)
    EXPECT_EQ(compare(host.op.outputs[i].name, cuda.out[i], host.out[i]), "");
}

const DType kTypes[] = {DType::bf16, DType::f16, DType::f32};

// The backward's kernels a test names, for its scope.
struct BwdKernels {
  explicit BwdKernels(RmsBwdKernels k) { rmsnorm_modulate_cuda_set_bwd_kernels(k); }
  ~BwdKernels() { rmsnorm_modulate_cuda_set_bwd_kernels(kRmsBwdKernelsDefault); }
};

// The one pass's grid held to a few blocks, for its scope.
struct OnePassGrid {
  explicit OnePassGrid(int64_t blocks) { rmsnorm_modulate_cuda_set_onepass_grid_limit(blocks); }
  ~OnePassGrid() { rmsnorm_modulate_cuda_set_onepass_grid_limit(0); }
};

// The host side of every comparison runs anywhere: the calls this file builds
// are ones the host twin takes, and it writes every output.
TEST(rmsnorm_modulate_cuda, HostTwinTakesTheseCalls) {
  for (DType t : kTypes) {
    Problem p = make_problem({70, 9, 4, t}, 3);
    ASSERT_EQ(run_host(p), "");
    for (size_t i = 0; i < p.out.size(); ++i) {
      const std::vector<uint8_t> untouched(p.out[i].bytes.size(), 0xA5);
      EXPECT_NE(p.out[i].bytes, untouched) << p.op.outputs[i].name;
    }
  }
}

TEST(rmsnorm_modulate_cuda, RowKernelsKeptPath) {
  GATECHECK_REQUIRE_GPU();
  const BwdKernels two_pass(RmsBwdKernels::two_pass);
  for (DType t : kTypes) {
    expect_same({4097, 64, 9, t});
    expect_same({33, 5376, 9, t});
    expect_same({300, 3072, 32, t});
  }
}

TEST(rmsnorm_modulate_cuda, RowKernelsVectorPathWideRows) {
  GATECHECK_REQUIRE_GPU();
  for (DType t : kTypes) expect_same({65, 16392, 9, t});  // more than 256 threads a row: read twice
}

TEST(rmsnorm_modulate_cuda, RowKernelsElementPathOddDims) {
  GATECHECK_REQUIRE_GPU();
  for (DType t : kTypes)
    for (int64_t dim : {1, 3, 5, 8193}) expect_same({dim > 1000 ? 65 : 4097, dim, 9, t});
}

TEST(rmsnorm_modulate_cuda, UnalignedViewsTakeTheElementPath) {
  GATECHECK_REQUIRE_GPU();
  for (DType t : kTypes) expect_same({1000, 64, 9, t, Index::random, size_t(dtype_size(t))});
}

// The element path moves a row's chunks as the aligned 16-byte blocks that
// hold them, shifted in registers, and writes out and dx a warp's blocks at
// once: every offset of a row from alignment (dims that are not a multiple of
// the chunk put each row at another), views off alignment by each element
// size's steps, rows of one short chunk, rows whose warps' runs end part way,
// and the tensor's first and last blocks, read and written element by element.
TEST(rmsnorm_modulate_cuda, ElementPathEveryRowOffset) {
  GATECHECK_REQUIRE_GPU();
  for (DType t : kTypes) {
    const size_t e = size_t(dtype_size(t));
    for (int64_t dim : {2, 7, 13, 100, 1001, 5001})
      for (size_t misalign : {size_t(0), e, 3 * e, 16 - e}) expect_same({dim > 1000 ? 67 : 301, dim, 9, t, Index::random, misalign});
  }
}

// Rows of more than 2,048 chunks off alignment (an odd dim, and a view off
// alignment by an element): the element path at the row kernels' widest
// shape, 352 threads a row.
TEST(rmsnorm_modulate_cuda, ElementPathRowsPast2048Chunks) {
  GATECHECK_REQUIRE_GPU();
  for (DType t : kTypes) {
    expect_same({65, 16393, 9, t});
    expect_same({65, 16392, 9, t, Index::random, size_t(dtype_size(t))});
  }
}

// Off alignment, 16-bit rows of more chunks than shared memory stages
// (kStagedFwdSmemMax: 2,944 chunks) take fwd_kernel's element path; up to
// it, the staged forward. (At 3,072 chunks the staged launch had failed.)
TEST(rmsnorm_modulate_cuda, ElementPathRowsPastTheStagedForward) {
  GATECHECK_REQUIRE_GPU();
  for (DType t : kTypes) {
    expect_same({9, 23553, 9, t});  // 2,945 chunks
    expect_same({9, 23551, 9, t});  // 2,944: staged
    expect_same({9, 24575, 9, t});  // 3,072
    expect_same({9, 23552, 9, t, Index::random, size_t(dtype_size(t))});  // a view off by an element
  }
}

TEST(rmsnorm_modulate_cuda, TileKernelOneGatePerRow) {
  GATECHECK_REQUIRE_GPU();
  const BwdKernels two_pass(RmsBwdKernels::two_pass);
  for (DType t : kTypes) expect_same({4097, 24, 4097, t, Index::one_gate_per_row});
}

TEST(rmsnorm_modulate_cuda, TileKernelManyTilesFoldedAndEmptyGates) {
  GATECHECK_REQUIRE_GPU();
  const BwdKernels two_pass(RmsBwdKernels::two_pass);
  for (DType t : kTypes) {
    expect_same({4097, 64, 1, t, Index::all_one_gate});   // one gate, 129 tiles
    expect_same({4097, 40, 32, t, Index::all_one_gate});  // 31 gates without rows
    expect_same({4097, 5376 / 8, 9, t, Index::sorted_runs});
    expect_same({1, 3, 1, t});
  }
}

// The plan's tile counts and scans: one block up to kPlanScanGates gates
// (8,191), CUB's scans past it; each side of the line, with gates that have
// no rows, gates of one row and gates of many tiles.
TEST(rmsnorm_modulate_cuda, PlanScanOneBlockAndCubScans) {
  GATECHECK_REQUIRE_GPU();
  for (int64_t gates : {int64_t(8191), int64_t(8192)}) {
    for (DType t : {DType::bf16, DType::f32}) {
      expect_same({gates, 24, gates, t, Index::one_gate_per_row});
      expect_same({9000, 16, gates, t, Index::random});
      expect_same({9000, 16, gates, t, Index::all_one_gate});
      expect_same({9000, 16, gates, t, Index::sorted_runs});
    }
  }
}

TEST(rmsnorm_modulate_cuda, RowsPastTheGridLimit) {
  GATECHECK_REQUIRE_GPU();
  const BwdKernels two_pass(RmsBwdKernels::two_pass);
  expect_same({70000, 8, 9, DType::bf16});  // kept path
  expect_same({70000, 5, 9, DType::f32});   // element path
  expect_same({70000, 5, 9, DType::bf16});  // staged forward
  expect_same({70000, 3, 70000, DType::f16, Index::one_gate_per_row});
}

// Where the one pass keeps its column sums in shared memory: rows of 16-byte
// chunks whose register kernel fits one block an SM (more than 256 threads
// at 16 bits, 320 at f32: 4104 columns of 16-bit types, 2564 of f32) and
// whose blocks fit two an SM (at most 352 threads: 5632 and 2816 columns;
// 5640 take 384). 4096 columns of 16-bit types (256 threads) and 2052 of f32
// (288) keep the registers. The GPU tests below take each side.
TEST(rmsnorm_modulate_cuda, OnePassSumsInSharedMemoryWhereTwoBlocksFit) {
  for (DType t : {DType::bf16, DType::f16}) {
    for (int64_t dim : {4104, 5376, 5632}) EXPECT_TRUE(rmsnorm_modulate_cuda_onepass_sums_shared(dim, t)) << dim;
    for (int64_t dim : {64, 3072, 4096, 5640, 6144, 5001})
      EXPECT_FALSE(rmsnorm_modulate_cuda_onepass_sums_shared(dim, t)) << dim;
  }
  for (int64_t dim : {2564, 2816}) EXPECT_TRUE(rmsnorm_modulate_cuda_onepass_sums_shared(dim, DType::f32)) << dim;
  for (int64_t dim : {2048, 2052, 2560, 2820, 5376})
    EXPECT_FALSE(rmsnorm_modulate_cuda_onepass_sums_shared(dim, DType::f32)) << dim;
}

// The one-pass backward, taken whatever the dweight groups, with its column
// sums where they fit (shared memory at 16-bit 4104, 5376 and 5632 columns
// and f32 2816) and in registers: rows of 8 to 1,024 chunks (one and two chunks a thread),
// one gate per row (a tile a row), one gate of many tiles (folded), gates
// without rows, sorted runs, tiles that cross gates within a dweight group,
// 70,000 rows (more dweight groups than blocks at once: each block walks
// several), and shapes it leaves to the two passes
// (more than 512 partials, element loads).
TEST(rmsnorm_modulate_cuda, OnePassBackward) {
  GATECHECK_REQUIRE_GPU();
  for (RmsBwdKernels k : {RmsBwdKernels::one_pass, RmsBwdKernels::one_pass_register_sums}) {
    const BwdKernels one_pass(k);
    for (DType t : kTypes) {
      expect_same({4097, 64, 9, t});
      expect_same({33, 5376, 9, t});
      expect_same({300, 3072, 32, t});
      expect_same({65, 4104, 9, t});
      expect_same({65, 5632, 9, t});
      expect_same({65, 2816, 9, t});
      expect_same({129, 6144, 5, t});
      expect_same({65, 8192, 3, t});
      expect_same({700, 16384, 9, t});
      expect_same({100, 5001, 9, t});
      expect_same({4097, 24, 4097, t, Index::one_gate_per_row});
      expect_same({4097, 64, 1, t, Index::all_one_gate});
      expect_same({4097, 40, 32, t, Index::all_one_gate});
      expect_same({4097, 5376 / 8, 9, t, Index::sorted_runs});
      expect_same({3000, 5376, 3, t, Index::sorted_runs});  // tiles crossing gates, 16-bit sums in shared memory
    }
    expect_same({70000, 8, 9, DType::bf16});
  }
}

// Blocks of the one pass that walk many dweight groups each (a grid of one and
// of three blocks): a group's positions known a group ahead (past 32 groups a
// block, the next 32 groups' at once), its first rows copied during the last
// group's rows, and groups of one row (one gate per row), fewer than the rows
// copied ahead with the sums in registers, so that some are copied at the
// group's start. Sums in shared memory (5376 columns at 16 bits) and in
// registers, one and two chunks a thread.
TEST(rmsnorm_modulate_cuda, OnePassBlocksWalkManyGroups) {
  GATECHECK_REQUIRE_GPU();
  const BwdKernels one_pass(RmsBwdKernels::one_pass);
  for (int64_t blocks : {1, 3}) {
    SCOPED_TRACE("grid of " + std::to_string(blocks));
    const OnePassGrid grid(blocks);
    for (DType t : kTypes) {
      expect_same({1100, 5376, 1100, t, Index::one_gate_per_row});
      expect_same({1100, 3072, 1100, t, Index::one_gate_per_row});
      expect_same({2000, 64, 2000, t, Index::one_gate_per_row});
      expect_same({1100, 5376, 9, t});
      expect_same({1500, 3072, 3, t, Index::sorted_runs});
      expect_same({300, 2048, 32, t});
    }
  }
}

// The fold of dweight's group partials, staged a chunk of groups at a time:
// fewer groups than one chunk, a chunk and a part, many chunks, and columns
// that do not fill the last block of 32, with both backwards.
TEST(rmsnorm_modulate_cuda, FoldOfDweightGroupsByChunks) {
  GATECHECK_REQUIRE_GPU();
  for (RmsBwdKernels k : {RmsBwdKernels::one_pass, RmsBwdKernels::one_pass_register_sums,
                          RmsBwdKernels::two_pass}) {
    const BwdKernels kernels(k);
    for (DType t : kTypes) {
      expect_same({2000, 33, 9, t});    // about 70 groups: one chunk, partly filled
      expect_same({8000, 72, 9, t});    // about 260 groups: a chunk and a part
      expect_same({40000, 40, 3, t});   // about 1,250 groups: many chunks
    }
  }
}

// Zeros, subnormals, the largest finite values, infinities, NaNs and factors
// of zero, on every path of both backwards: the packed 16-bit arithmetic of
// the forward and the NaN canonicalisation of every store among them.
TEST(rmsnorm_modulate_cuda, SpecialValuesEveryPath) {
  GATECHECK_REQUIRE_GPU();
  for (RmsBwdKernels k : {RmsBwdKernels::one_pass, RmsBwdKernels::one_pass_register_sums,
                          RmsBwdKernels::two_pass}) {
    const BwdKernels bwd(k);
    for (DType t : kTypes) {
      expect_same({300, 3072, 9, t, Index::random, 0, Values::special});
      expect_same({33, 5376, 9, t, Index::random, 0, Values::special});
      expect_same({65, 16392, 3, t, Index::random, 0, Values::special});
      expect_same({97, 5, 3, t, Index::random, 0, Values::special});
    }
  }
}

TEST(rmsnorm_modulate_cuda, BadIndexIsNamedAndWritesNothing) {
  GATECHECK_REQUIRE_GPU();
  const Shape s{5000, 16, 9, DType::bf16};
  Problem p = make_problem(s, 7);
  reinterpret_cast<int64_t*>(p.in[size_t(p.op.input_index("index"))].bytes.data())[4000] = 9;
  const std::vector<HostTensor> before = p.out;
  const std::string err = run_cuda(p);
  EXPECT_NE(err.find("cuda forward: rmsnorm_modulate_fwd: "), std::string::npos) << err;
  EXPECT_NE(err.find("index[4000] = 9"), std::string::npos) << err;
  for (size_t i = 0; i < p.out.size(); ++i) EXPECT_EQ(compare(p.op.outputs[i].name, p.out[i], before[i]), "");
}

// The comparison can fail: one bit of one output changed is found.
TEST(rmsnorm_modulate_cuda, ComparisonFindsOneBit) {
  GATECHECK_REQUIRE_GPU();
  const Shape s{17, 9, 3, DType::bf16};
  Problem host = make_problem(s, 1), cuda = make_problem(s, 1);
  ASSERT_EQ(run_host(host), "");
  ASSERT_EQ(run_cuda(cuda), "");
  for (size_t i = 0; i < host.out.size(); ++i) {
    ASSERT_EQ(compare("t", cuda.out[i], host.out[i]), "");
    cuda.out[i].bytes[cuda.out[i].bytes.size() - 1] ^= 1;
    EXPECT_NE(compare("t", cuda.out[i], host.out[i]), "") << host.op.outputs[i].name;
  }
}

}  // namespace
}  // namespace testing_cuda
}  // namespace gatecheck
