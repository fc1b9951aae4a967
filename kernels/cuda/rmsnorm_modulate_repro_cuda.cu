// cuda-repro for rmsnorm_modulate: rmsnorm_modulate_repro_cuda.h.
#include "rmsnorm_modulate_repro_cuda.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cub/device/device_radix_sort.cuh>
#include <string>
#include <vector>

#include "../binned_sum.h"
#include "../gate_residual_dtype.h"
#include "../host/rmsnorm_modulate_repro_host.h"
#include "../op_call_abi.h"
#include "../plugin_adapter.h"
#include "../rmsnorm_modulate.h"
#include "binned_state_cuda.cuh"
#include "cuda_error_status.h"
#include "rmsnorm_modulate_cuda.h"
#include "rmsnorm_modulate_cuda_rstd.h"
#include "rmsnorm_modulate_repro_cuda_kernels.cuh"

namespace gatecheck {

namespace {

using namespace rmsnorm_repro_cuda_detail;

Status cuda_status(cudaError_t e, const char* what) {
  return cuda_error_status("rmsnorm_modulate cuda-repro", (std::string(" in ") + what).c_str(), e);
}

const char* const kGradients[3] = {"dweight", "dshift", "dscale"};

std::atomic<int> terms_rows_at_once{kTermsRowsAtOnceDefault};

template <class T>
void launch_terms(const TermsArgs& a, dim3 grid, cudaStream_t s) {
  switch (terms_rows_at_once.load()) {
    case 1: terms_kernel<T, 1><<<grid, kThreads, 0, s>>>(a); break;
    case 4: terms_kernel<T, 4><<<grid, kThreads, 0, s>>>(a); break;
    default: terms_kernel<T, 2><<<grid, kThreads, 0, s>>>(a); break;  // 2: the setter takes no other
  }
}

int64_t state_elements(const gatecheck_problem& p) {
  return rmsnorm_modulate_repro_state_words(p) / kBinnedWords;
}

size_t align256(size_t n) { return (n + 255) / 256 * 256; }

int gate_bits(int64_t gates) { return rmsnorm_gate_key_bits(gates, 63); }  // the sort's int64 keys

// A partial's scratch, in order: rstd (a float a row), the wide sums (88
// bytes a state element), the rows' gates sorted, the rows' numbers and the
// same sorted (8 bytes a row each), CUB's sort space. Offsets 256-byte aligned.
struct ScratchLayout {
  size_t wide, gate_sorted, ids, row_sorted, cub, cub_bytes, total;
  explicit ScratchLayout(const gatecheck_problem& p) {
    const size_t rows = size_t(p.rows), row_words = align256(rows * sizeof(int64_t));
    cub_bytes = 0;
    if (p.rows > 0)
      cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, static_cast<const int64_t*>(nullptr),
                                      static_cast<int64_t*>(nullptr), static_cast<const int64_t*>(nullptr),
                                      static_cast<int64_t*>(nullptr), p.rows, 0, gate_bits(p.gates));
    wide = align256(rows * sizeof(float));
    gate_sorted = wide + align256(binned_cuda::WideSums::bytes(state_elements(p)));
    ids = gate_sorted + row_words;
    row_sorted = ids + row_words;
    cub = row_sorted + row_words;
    total = cub + align256(cub_bytes);
  }
};

// Device memory for the length of a call (stream-ordered).
struct DeviceBuffer {
  void* ptr = nullptr;
  cudaStream_t stream;
  explicit DeviceBuffer(cudaStream_t s) : stream(s) {}
  Status alloc(size_t bytes) {
    return bytes ? cuda_status(cudaMallocAsync(&ptr, bytes, stream), "cudaMallocAsync") : Status::success();
  }
  ~DeviceBuffer() {
    if (ptr) cudaFreeAsync(ptr, stream);
  }
};

}  // namespace

bool rmsnorm_modulate_repro_cuda_set_terms_rows(int rows) {
  if (rows != 1 && rows != 2 && rows != 4) return false;
  terms_rows_at_once.store(rows);
  return true;
}

int64_t rmsnorm_modulate_repro_cuda_scratch_bytes(const gatecheck_problem& p) {
  return int64_t(ScratchLayout(p).total);
}

Status rmsnorm_modulate_repro_partial_cuda(const OpCall& c, uint64_t* state, unsigned long long* bad, void* scratch,
                                           bool with_dx) {
  if (c.p.gates > INT32_MAX)  // the terms kernel's tile keeps a gate as an int
    return Status::error(ErrorKind::size_overflow,
                         "rmsnorm_modulate cuda-repro: gates=" + std::to_string(c.p.gates) + " must be below 2^31");
  const auto s = static_cast<cudaStream_t>(c.p.stream);
  auto in = [&](const char* n) { return c.input(n).data; };
  const int64_t elements = state_elements(c.p);
  const ScratchLayout L(c.p);
  DeviceBuffer own(s);
  if (!scratch && elements > 0) {
    const Status st = own.alloc(L.total);
    if (!st.ok()) return st;
    scratch = own.ptr;
  }
  char* base = static_cast<char*>(scratch);
  auto* ids = elements > 0 ? reinterpret_cast<int64_t*>(base + L.ids) : nullptr;
  cudaError_t e = cudaMemsetAsync(bad, 0xff, sizeof *bad, s);
  if (e == cudaSuccess && c.p.rows > 0) {
    const int64_t b = (c.p.rows + 255) / 256;
    check_index_kernel<<<unsigned(b < 4096 ? b : 4096), 256, 0, s>>>(c.index(), c.p.rows, c.p.gates, bad, ids);
    e = cudaGetLastError();
  }
  if (e != cudaSuccess) return cuda_status(e, "partial");
  if (elements == 0) return Status::success();
  auto* rstd = reinterpret_cast<float*>(base);
  auto* gate_sorted = reinterpret_cast<int64_t*>(base + L.gate_sorted);
  auto* row_sorted = reinterpret_cast<int64_t*>(base + L.row_sorted);
  const binned_cuda::WideSums wide = binned_cuda::WideSums::at(base + L.wide, elements);
  e = cudaMemsetAsync(wide.bins, 0, binned_cuda::WideSums::bytes(elements), s);
  if (e != cudaSuccess) return cuda_status(e, "partial");
  if (c.p.rows > 0) {
    // The rows by gate (a bad index sorts anywhere: the terms kernel then does nothing).
    size_t cub_bytes = L.cub_bytes;
    e = cub::DeviceRadixSort::SortPairs(base + L.cub, cub_bytes, c.index(), gate_sorted, static_cast<const int64_t*>(ids),
                                        row_sorted, c.p.rows, 0, gate_bits(c.p.gates), s);
    if (e != cudaSuccess) return cuda_status(e, "partial: the sort by gate");
    const Status st = with_dx ? rmsnorm_modulate_cuda_dx(c, bad, rstd) : rmsnorm_modulate_cuda_rstd(c, rstd);
    if (!st.ok()) return st;
    const TermsArgs a{in("x"), in("w"), in("scale"), in("grad_out"), gate_sorted, row_sorted, rstd,
                      c.p.rows, c.p.dim, c.p.gates, bad, wide};
    const int64_t tiles = (c.p.rows + kTileRows - 1) / kTileRows;
    const dim3 grid(unsigned((c.p.dim + kThreads - 1) / kThreads), unsigned(tiles < 65535 ? tiles : 65535));
    dispatch_dtype(DType(c.p.dtype), [&](auto tag) { launch_terms<decltype(tag)>(a, grid, s); });
    if ((e = cudaGetLastError()) != cudaSuccess) return cuda_status(e, "partial");
  }
  return cuda_status(binned_cuda::launch_wide_to_state(wide, state, s), "partial");
}

Status rmsnorm_modulate_repro_combine_cuda(const gatecheck_problem& p, const uint64_t* states, int32_t n,
                                           uint64_t* out) {
  if (n < 0) return Status::error(ErrorKind::shape_mismatch, "combine: n=" + std::to_string(n) + " states, below 0");
  return cuda_status(
      binned_cuda::launch_combine(states, n, state_elements(p), out, static_cast<cudaStream_t>(p.stream)), "combine");
}

Status rmsnorm_modulate_repro_finalize_cuda(const OpCall& c, const uint64_t* state) {
  if (state_elements(c.p) == 0) return Status::success();
  const auto s = static_cast<cudaStream_t>(c.p.stream);
  cudaError_t e = cudaSuccess;
  dispatch_dtype(DType(c.p.dtype), [&](auto tag) {
    using T = decltype(tag);
    for (int t = 0; t < 3 && e == cudaSuccess; ++t) {
      T* out = static_cast<T*>(c.output(kGradients[t]).data);
      const int64_t n = t == 0 ? c.p.dim : c.p.gates * c.p.dim;
      e = binned_cuda::launch_finalize(state + first_element(c.p.dim, c.p.gates, t) * kBinnedWords, n, out, s);
    }
  });
  return cuda_status(e, "finalize");
}

namespace {

using Abi = PluginAdapter<struct RmsReproCudaTag>;
int report(const Status& s) { return Abi::report(s); }

// The call's inputs as check_call sees them (its outputs, null in the
// exchange's calls, stand in with a non-null address never written); the
// index on the host where index_on_host, so that an index error reads as
// host-repro's. Errors name the exchange's step, where there is one (null:
// the backward call, in check_call's words alone, as the cuda kernels').
Status check_inputs(const OpCall& c, const char* step, bool index_on_host) {
  OpCall k = c;
  static char unused;
  for (auto& o : k.outputs)
    if (!o.data) o.data = &unused;
  Status s = check_call(k, 1u << GATECHECK_CUDA, index_on_host);
  if (!s.ok() && step) s.message = std::string(step) + ": " + s.message;
  return s;
}

// The index error of a call whose bad row the device found, in check_call's
// words (from a host copy of the index).
Status index_error(const OpCall& c, const char* step, unsigned long long bad_row) {
  std::vector<int64_t> host(size_t(c.p.rows));
  cudaMemcpy(host.data(), c.index(), host.size() * sizeof(int64_t), cudaMemcpyDeviceToHost);
  OpCall h = c;
  h.inputs[size_t(c.op->index_input())].data = host.data();
  Status s = check_inputs(h, step, /*index_on_host=*/true);
  if (s.ok())  // the device saw what the host copy does not: say so rather than pass
    s = Status::error(ErrorKind::index_out_of_range, (step ? std::string(step) : c.op->bwd_name()) + ": index[" +
                                                         std::to_string(bad_row) + "] is out of range [0, gates)");
  return s;
}

// The state of c's rows into `host_state` (host memory), or, when null, into
// `device_state` (with_dx: and c's dx); waits for the stream and reports a bad index.
Status partial_and_wait(const OpCall& c, const char* step, uint64_t* device_state, uint64_t* host_state,
                        bool with_dx = false) {
  const auto s = static_cast<cudaStream_t>(c.p.stream);
  const size_t words = size_t(rmsnorm_modulate_repro_state_words(c.p));
  DeviceBuffer bad(s), st(s);
  Status r = bad.alloc(sizeof(unsigned long long));
  if (r.ok() && !device_state) {
    r = st.alloc(words * sizeof(uint64_t));
    device_state = static_cast<uint64_t*>(st.ptr);
  }
  auto* bad_word = static_cast<unsigned long long*>(bad.ptr);
  if (r.ok()) r = rmsnorm_modulate_repro_partial_cuda(c, device_state, bad_word, nullptr, with_dx);
  unsigned long long bad_row = kNoBadRow;
  if (r.ok())
    r = cuda_status(cudaMemcpyAsync(&bad_row, bad_word, sizeof bad_row, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  if (r.ok() && host_state && words)
    r = cuda_status(cudaMemcpyAsync(host_state, device_state, words * sizeof(uint64_t), cudaMemcpyDeviceToHost, s),
                    "cudaMemcpyAsync");
  const cudaError_t sync = cudaStreamSynchronize(s);
  if (r.ok()) r = cuda_status(sync, "cudaStreamSynchronize");
  if (r.ok() && bad_row != kNoBadRow) r = index_error(c, step, bad_row);
  return r;
}

// The "cuda" forward, unchanged.
int forward_call(const gatecheck_call* raw) { return Abi::forward_of(rmsnorm_modulate_cuda_plugin(), raw); }

// The backward: the cuda kernels' checks, in their words; then the partial
// with dx (the cuda backward's row kernel, which gives the terms their rstd),
// and the finalize. None of the cuda backward's fp32 column sums is made.
int backward_call(const gatecheck_call* raw) {
  OpCall c;
  Status s = op_call_from_abi(rmsnorm_modulate_schema(), Pass::backward, raw, &c);
  if (s.ok()) s = check_call(c, 1u << GATECHECK_CUDA, /*index_on_host=*/false);
  if (s.ok()) s = rmsnorm_modulate_cuda_check_size(c);
  if (!s.ok() || state_elements(c.p) == 0) return report(s);
  const auto stream = static_cast<cudaStream_t>(c.p.stream);
  DeviceBuffer state(stream);
  s = state.alloc(size_t(rmsnorm_modulate_repro_state_words(c.p)) * sizeof(uint64_t));
  if (s.ok()) s = partial_and_wait(c, nullptr, static_cast<uint64_t*>(state.ptr), nullptr, /*with_dx=*/true);
  if (s.ok()) s = rmsnorm_modulate_repro_finalize_cuda(c, static_cast<uint64_t*>(state.ptr));
  const cudaError_t sync = cudaStreamSynchronize(stream);
  if (s.ok()) s = cuda_status(sync, "cudaStreamSynchronize");
  return report(s);
}

// The exchange: device tensors in the calls, host states.
using ExAbi = PluginAdapter<struct RmsReproCudaExchangeTag>;

int64_t ex_state_words(const gatecheck_problem* p) { return p ? rmsnorm_modulate_repro_state_words(*p) : 0; }

int ex_partial(const gatecheck_call* raw, uint64_t* state) {
  OpCall c;
  Status s = op_call_from_abi(rmsnorm_modulate_schema(), Pass::backward, raw, &c);
  if (s.ok()) s = check_inputs(c, "partial", /*index_on_host=*/false);
  if (s.ok() && !state && rmsnorm_modulate_repro_state_words(c.p) > 0)
    s = Status::error(ErrorKind::null_pointer, "partial: state is null");
  if (s.ok()) s = partial_and_wait(c, "partial", nullptr, state);
  return ExAbi::report(s);
}

// Host states: host-repro's combine (the same words as the device's).
int ex_combine(const gatecheck_problem* p, const uint64_t* const* states, int32_t n, uint64_t* out) {
  return ExAbi::combine_of(rmsnorm_modulate_repro_host_exchange(), p, states, n, out);
}

int ex_finalize(const gatecheck_call* raw, const uint64_t* state) {
  OpCall c;
  Status s = op_call_from_abi(rmsnorm_modulate_schema(), Pass::backward, raw, &c);
  if (s.ok()) s = check_problem("finalize", c.p, 1u << GATECHECK_CUDA);
  const int64_t words = s.ok() ? rmsnorm_modulate_repro_state_words(c.p) : 0;
  if (s.ok() && words > 0) {
    if (!state) s = Status::error(ErrorKind::null_pointer, "finalize: state is null");
    for (const char* g : kGradients)
      if (s.ok() && !c.output(g).data)
        s = Status::error(ErrorKind::null_pointer, std::string("finalize: ") + g + " is null");
  }
  if (!s.ok() || words == 0) return ExAbi::report(s);
  const auto stream = static_cast<cudaStream_t>(c.p.stream);
  DeviceBuffer st(stream);
  s = st.alloc(size_t(words) * sizeof(uint64_t));
  if (s.ok())
    s = cuda_status(cudaMemcpyAsync(st.ptr, state, size_t(words) * sizeof(uint64_t), cudaMemcpyHostToDevice, stream),
                    "cudaMemcpyAsync");
  if (s.ok()) s = rmsnorm_modulate_repro_finalize_cuda(c, static_cast<const uint64_t*>(st.ptr));
  const cudaError_t sync = cudaStreamSynchronize(stream);
  if (s.ok()) s = cuda_status(sync, "cudaStreamSynchronize");
  return ExAbi::report(s);
}

const gatecheck_op_plugin kPlugin{2,           "rmsnorm_modulate cuda-repro", "rmsnorm_modulate", 1u << GATECHECK_CUDA,
                                  forward_call, backward_call,                 Abi::last_error};

}  // namespace

const gatecheck_op_plugin* rmsnorm_modulate_repro_cuda_plugin() { return &kPlugin; }

const gatecheck_split_exchange* rmsnorm_modulate_repro_cuda_exchange() {
  static const gatecheck_split_exchange ex = {GATECHECK_ABI_VERSION_2,
                                              "rmsnorm_modulate",
                                              kRmsnormModulateReproStateText,
                                              ex_state_words,
                                              ex_partial,
                                              ex_combine,
                                              ex_finalize,
                                              ExAbi::last_error};
  return &ex;
}

}  // namespace gatecheck
