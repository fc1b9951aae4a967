#include "runner.h"

#include <cuda_runtime.h>

#include <cstring>
#include <exception>
#include <stdexcept>

#include "call_arena.h"
#include "guarded_buffer.h"
#include "stage_clock.h"

namespace gatecheck {

const char* memory_finding_name(MemoryFinding::Kind k) {
  switch (k) {
    case MemoryFinding::input_changed: return "input_changed";
    case MemoryFinding::unwritten: return "unwritten";
    case MemoryFinding::oob_write: return "oob_write";
  }
  return "?";
}

uint32_t poison_bits(DType t, int poison) {
  // NaNs with payloads that no canonical rounding produces.
  switch (t) {
    case DType::f32: return poison ? 0xffb5b5b5u : 0x7fa5a5a5u;
    case DType::f16: return poison ? 0xfd6bu : 0x7d5au;
    default: return poison ? 0xff95u : 0x7fa5u;
  }
}

namespace {

std::vector<uint8_t> pattern_for(DType t, int poison) {
  const uint32_t b = poison_bits(t, poison);
  std::vector<uint8_t> p(size_t(dtype_size(t)));
  std::memcpy(p.data(), &b, p.size());  // little-endian: low bytes first
  return p;
}

void check_guards(const CallArena& a, size_t i, std::vector<MemoryFinding>* out) {
  int64_t first = 0, last = 0;
  const size_t n = a.damaged_guard_bytes(i, &first, &last);
  if (n == 0) return;
  const char* name = a.name(i);
  out->push_back({MemoryFinding::oob_write, name, first, int64_t(n),
                  std::to_string(n) + " guard bytes around " + name + " were overwritten, at byte offsets " +
                      std::to_string(first) + ".." + std::to_string(last) + " relative to its start (size " +
                      std::to_string(a.size(i)) + " bytes)"});
}

void check_input(const CallArena& a, size_t i, std::vector<MemoryFinding>* out) {
  int64_t first = -1;
  const int64_t count = a.changed_input_bytes(i, &first);
  if (count == 0) return;
  const char* name = a.name(i);
  out->push_back({MemoryFinding::input_changed, name, first, count,
                  std::string("input ") + name + " was modified: " + std::to_string(count) +
                      " bytes changed, first at byte " + std::to_string(first)});
}

void check_written(const char* name, const HostTensor& t, uint32_t poison, std::vector<MemoryFinding>* out) {
  int64_t first = -1, count = 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.bits(i) == poison) {
      if (first < 0) first = i;
      ++count;
    }
  if (count == 0) return;
  const int64_t cols = t.cols ? t.cols : 1;
  out->push_back({MemoryFinding::unwritten, name, first, count,
                  std::to_string(count) + " elements of " + name + " still hold the poison value, first at [" +
                      std::to_string(first / cols) + ", " + std::to_string(first % cols) + "]"});
}

}  // namespace

void* runner_stream(Device d) { return d == Device::cuda ? CallArena::stream() : nullptr; }

Status sync_after_call(const Implementation& impl, void* stream) {
  if (impl.device == Device::cpu) return Status::success();
  const StageTimer t(Stage::sync);
  // An implementation that may queue work anywhere is waited for everywhere.
  return impl.calls_on_problem_stream ? stream_sync(stream) : device_sync(impl.device);
}

OpCall call_in_arena(const Case& c, const CallArena& a, Pass pass, Device d, void* stream) {
  OpCall call = OpCall::shaped(*c.op, pass, c.problem(d, stream));
  const size_t n_in = c.op->inputs.size();
  for (size_t i = 0; i < n_in; ++i)
    if (call.takes(i)) call.inputs[i].data = a.ptr(i);
  for (size_t i = 0; i < c.op->outputs.size(); ++i)
    if (call.makes(i)) call.outputs[i].data = a.ptr(n_in + i);
  call.scalars = c.scalars;
  return call;
}

std::vector<CallArena::Region> arena_regions(const Case& c, const Outputs& o) {
  std::vector<CallArena::Region> regions;  // the op's inputs, then its outputs, in its order
  size_t k = 0;
  for (const auto& in : c.op->inputs) {
    if (in.role == Role::index) {
      regions.push_back({in.name, c.index.size() * sizeof(int64_t), c.index.data()});
    } else {
      const HostTensor& t = c.inputs[k++];
      regions.push_back({in.name, t.bytes.size(), t.bytes.data()});
    }
  }
  for (size_t i = 0; i < c.op->outputs.size(); ++i)
    regions.push_back({c.op->outputs[i].name, o.tensors[i].bytes.size(), nullptr});
  return regions;
}

RunResult run_case(const Implementation& impl, const Case& c, const RunOptions& opt) {
  RunResult r;
  const Device d = impl.device;
  StageTimer setup(Stage::buffers);
  r.outputs = outputs_for(c);
  try {
    // Inputs first, then outputs: the order of the checks and findings below.
    const size_t n_in = c.op->inputs.size(), n_regions = n_in + c.op->outputs.size();
    CallArena a(d, arena_regions(c, r.outputs), pattern_for(c.dtype, opt.poison));
    setup.stop();
    void* stream = runner_stream(d);
    if (d == Device::cuda && !impl.calls_on_problem_stream) {  // it may read the inputs from any stream
      const StageTimer t(Stage::copies);
      const cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      if (e != cudaSuccess) throw std::runtime_error(std::string("cudaStreamSynchronize: ") + cudaGetErrorString(e));
    }
    const OpCall fwd = call_in_arena(c, a, Pass::forward, d, stream), bwd = call_in_arena(c, a, Pass::backward, d, stream);
    // A call: timed, waited for, and on failure named by the half that failed.
    const auto call = [&](const auto& run, const auto& half) {
      {
        const StageTimer t(Stage::calls);
        r.status = run();
      }
      if (r.status.ok()) r.status = sync_after_call(impl, stream);
      if (!r.status.ok()) r.status.message = std::string(half()) + ": " + r.status.message;
    };
    if (opt.forward && opt.backward && impl.takes_tensors()) {  // one call: no forward to recompute
      bool in_forward = true;
      call([&] { return impl.forward_backward(fwd, bwd, &in_forward); },
           [&] { return in_forward ? "forward" : "backward"; });
    } else {
      if (opt.forward) call([&] { return impl.call(fwd); }, [] { return "forward"; });
      if (r.status.ok() && opt.backward) call([&] { return impl.call(bwd); }, [] { return "backward"; });
    }
    {
      const StageTimer t(Stage::copies);
      a.fetch();
      for (size_t i = n_in; i < n_regions; ++i)
        if (a.size(i)) std::memcpy(r.outputs.tensors[i - n_in].data(), a.host(i), a.size(i));
    }
    const StageTimer t(Stage::compare);
    for (size_t i = 0; i < n_in; ++i) {
      check_guards(a, i, &r.memory);
      check_input(a, i, &r.memory);
    }
    const uint32_t pb = poison_bits(c.dtype, opt.poison);
    for (size_t i = n_in; i < n_regions; ++i) {
      check_guards(a, i, &r.memory);
      const bool ran = c.op->outputs[i - n_in].pass == Pass::forward ? opt.forward : opt.backward;
      if (ran && r.status.ok()) check_written(a.name(i), r.outputs.tensors[i - n_in], pb, &r.memory);
    }
  } catch (const std::exception& e) {
    r.status = Status::error(ErrorKind::implementation, std::string("harness: ") + e.what());
  }
  return r;
}

}  // namespace gatecheck
