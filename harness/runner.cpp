#include "runner.h"

#include <cstring>
#include <exception>
#include <memory>

#include "guarded_buffer.h"

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

struct Slot {
  const char* name;
  std::unique_ptr<GuardedBuffer> buf;
  const std::vector<uint8_t>* original = nullptr;  // inputs: bytes to compare after the call
  HostTensor* output = nullptr;                     // outputs: where results go
};

std::vector<uint8_t> pattern_for(DType t, int poison) {
  const uint32_t b = poison_bits(t, poison);
  std::vector<uint8_t> p(size_t(dtype_size(t)));
  std::memcpy(p.data(), &b, p.size());  // little-endian: low bytes first
  return p;
}

void check_guards(const Slot& s, std::vector<MemoryFinding>* out) {
  int64_t first = 0, last = 0;
  const size_t n = s.buf->damaged_guard_bytes(&first, &last);
  if (n == 0) return;
  out->push_back({MemoryFinding::oob_write, s.name, first, int64_t(n),
                  std::to_string(n) + " guard bytes around " + s.name + " were overwritten, at byte offsets " +
                      std::to_string(first) + ".." + std::to_string(last) + " relative to its start (size " +
                      std::to_string(s.buf->size()) + " bytes)"});
}

void check_input(const Slot& s, std::vector<MemoryFinding>* out) {
  std::vector<uint8_t> now(s.buf->size());
  s.buf->download(now.data());
  if (now == *s.original) return;
  int64_t first = -1, count = 0;
  for (size_t i = 0; i < now.size(); ++i)
    if (now[i] != (*s.original)[i]) {
      if (first < 0) first = int64_t(i);
      ++count;
    }
  out->push_back({MemoryFinding::input_changed, s.name, first, count,
                  std::string("input ") + s.name + " was modified: " + std::to_string(count) +
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

RunResult run_case(const Implementation& impl, const Case& c, const RunOptions& opt) {
  RunResult r;
  const Device d = impl.device;
  const gatecheck_problem p = c.problem(d);
  r.outputs = outputs_for(c);
  try {
    std::vector<uint8_t> index_bytes(c.index.size() * sizeof(int64_t));
    if (!index_bytes.empty()) std::memcpy(index_bytes.data(), c.index.data(), index_bytes.size());
    auto input = [&](const char* name, const std::vector<uint8_t>& bytes) {
      Slot s{name, std::make_unique<GuardedBuffer>(d, bytes.size()), &bytes, nullptr};
      s.buf->upload(bytes.data());
      return s;
    };
    const auto poison = pattern_for(c.dtype, opt.poison);
    auto output = [&](const char* name, HostTensor& t) {
      Slot s{name, std::make_unique<GuardedBuffer>(d, t.bytes.size()), nullptr, &t};
      s.buf->fill(poison);
      return s;
    };
    Slot in[] = {input("res", c.res.bytes), input("gate", c.gate.bytes), input("index", index_bytes),
                 input("y", c.y.bytes), input("grad_out", c.grad_out.bytes)};
    Slot out[] = {output("out", r.outputs.out), output("grad_res", r.outputs.grad_res),
                  output("grad_y", r.outputs.grad_y), output("grad_gate", r.outputs.grad_gate)};
    const auto* index = static_cast<const int64_t*>(in[2].buf->ptr());
    if (opt.forward) {
      r.status = impl.forward(p, in[0].buf->ptr(), in[1].buf->ptr(), index, in[3].buf->ptr(), out[0].buf->ptr());
      if (r.status.ok()) r.status = device_sync(d);
      if (!r.status.ok()) r.status.message = "forward: " + r.status.message;
    }
    if (r.status.ok() && opt.backward) {
      r.status = impl.backward(p, in[4].buf->ptr(), in[1].buf->ptr(), index, in[3].buf->ptr(),
                               out[1].buf->ptr(), out[3].buf->ptr(), out[2].buf->ptr(), in[0].buf->ptr());
      if (r.status.ok()) r.status = device_sync(d);
      if (!r.status.ok()) r.status.message = "backward: " + r.status.message;
    }
    for (auto& s : in) {
      check_guards(s, &r.memory);
      check_input(s, &r.memory);
    }
    const uint32_t pb = poison_bits(c.dtype, opt.poison);
    for (auto& s : out) {
      check_guards(s, &r.memory);
      s.buf->download(s.output->data());
      const bool ran = std::string(s.name) == "out" ? opt.forward : opt.backward;
      if (ran && r.status.ok()) check_written(s.name, *s.output, pb, &r.memory);
    }
  } catch (const std::exception& e) {
    r.status = Status::error(ErrorKind::implementation, std::string("harness: ") + e.what());
  }
  return r;
}

}  // namespace gatecheck
