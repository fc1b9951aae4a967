#include "isolate_codec.h"

namespace gatecheck::isolate_detail {

std::vector<uint8_t> encode(const RunResult& r) {
  Writer w;
  w.u32(kMagic);
  w.status(r.status);
  w.str(r.outputs.op->name);
  w.i64(int64_t(r.outputs.tensors.size()));
  for (const HostTensor& t : r.outputs.tensors) w.tensor(t);
  w.i64(int64_t(r.memory.size()));
  for (const auto& m : r.memory) {
    w.u32(uint32_t(m.kind));
    w.str(m.tensor);
    w.i64(m.first);
    w.i64(m.count);
    w.str(m.detail);
  }
  return w.buf;
}

RunResult decode_run_result(const std::vector<uint8_t>& b) {
  Reader rd(b);
  if (rd.u32() != kMagic) throw std::runtime_error("bad magic");
  RunResult r;
  r.status = rd.status();
  r.outputs.op = &op_schema(rd.str());
  const int64_t n_out = rd.i64();
  if (n_out != int64_t(r.outputs.op->outputs.size())) throw std::runtime_error("bad output count");
  for (int64_t k = 0; k < n_out; ++k) r.outputs.tensors.push_back(rd.tensor());
  const int64_t n = rd.i64();
  if (n < 0 || n > 1000000) throw std::runtime_error("bad finding count");
  for (int64_t i = 0; i < n; ++i) {
    MemoryFinding m;
    const uint32_t k = rd.u32();
    if (k > MemoryFinding::oob_write) throw std::runtime_error("bad finding kind");
    m.kind = MemoryFinding::Kind(k);
    m.tensor = rd.str();
    m.first = rd.i64();
    m.count = rd.i64();
    m.detail = rd.str();
    r.memory.push_back(std::move(m));
  }
  if (!rd.done()) throw std::runtime_error("trailing bytes");
  return r;
}

std::vector<uint8_t> encode(const Status& s) {
  Writer w;
  w.u32(kMagic);
  w.status(s);
  return w.buf;
}

Status decode_status(const std::vector<uint8_t>& b) {
  Reader rd(b);
  if (rd.u32() != kMagic) throw std::runtime_error("bad magic");
  Status s = rd.status();
  if (!rd.done()) throw std::runtime_error("trailing bytes");
  return s;
}

namespace {

void write_case(Writer& w, const Case& c) {
  w.str(c.op->name);
  w.u32(uint32_t(c.dtype));
  w.i64(c.rows);
  w.i64(c.dim);
  w.i64(c.gates);
  w.bytes(c.index.data(), c.index.size() * sizeof(int64_t));
  w.i64(int64_t(c.inputs.size()));
  for (const HostTensor& t : c.inputs) w.tensor(t);
  w.bytes(c.scalars.data(), c.scalars.size() * sizeof(double));
}

Case read_case(Reader& rd) {
  Case c;
  c.op = &op_schema(rd.str());
  c.dtype = DType(rd.u32());
  c.rows = rd.i64();
  c.dim = rd.i64();
  c.gates = rd.i64();
  const auto index = rd.bytes();
  c.index.resize(index.size() / sizeof(int64_t));
  if (!index.empty()) std::memcpy(c.index.data(), index.data(), index.size());
  const int64_t n_in = rd.i64();
  if (n_in < 0 || n_in > 64) throw std::runtime_error("bad input count");
  for (int64_t k = 0; k < n_in; ++k) c.inputs.push_back(rd.tensor());
  const auto scalars = rd.bytes();
  c.scalars.resize(scalars.size() / sizeof(double));
  if (!scalars.empty()) std::memcpy(c.scalars.data(), scalars.data(), scalars.size());
  return c;
}

}  // namespace

std::vector<uint8_t> encode_request(const Implementation& impl, const Case& c, const RunOptions& opt) {
  Writer w;
  w.u32(kMagic);
  w.str(impl.name);
  w.u32(uint32_t(impl.device));
  w.u32(uint32_t(opt.poison));
  w.u32(uint32_t(opt.forward) | uint32_t(opt.backward) << 1);
  write_case(w, c);
  return w.buf;
}

std::vector<uint8_t> encode_task_request(const std::string& task, const Implementation& impl, const Case& c,
                                         int64_t arg) {
  Writer w;
  w.u32(kTaskMagic);
  w.str(task);
  w.str(impl.name);
  w.u32(uint32_t(impl.device));
  w.i64(arg);
  write_case(w, c);
  return w.buf;
}

Request decode_request(const std::vector<uint8_t>& b) {
  Reader rd(b);
  Request q;
  const uint32_t magic = rd.u32();
  if (magic == kTaskMagic) {
    q.task = rd.str();
    q.spec = rd.str();
    q.device = Device(rd.u32());
    q.arg = rd.i64();
    q.c = read_case(rd);
    return q;
  }
  if (magic != kMagic) throw std::runtime_error("bad magic");
  q.spec = rd.str();
  q.device = Device(rd.u32());
  q.opt.poison = int(rd.u32());
  const uint32_t which = rd.u32();
  q.opt.forward = which & 1u;
  q.opt.backward = (which & 2u) != 0;
  q.c = read_case(rd);
  return q;
}

std::vector<uint8_t> encode_reply(const Status& s, bool usable) {
  Writer w;
  w.u32(kMagic);
  w.status(s);
  w.u32(usable ? 1 : 0);
  return w.buf;
}

Status decode_reply(const std::vector<uint8_t>& b, bool* usable) {
  Reader rd(b);
  if (rd.u32() != kMagic) throw std::runtime_error("bad magic");
  Status s = rd.status();
  *usable = rd.u32() == 1;
  if (!rd.done()) throw std::runtime_error("trailing bytes");
  return s;
}

}  // namespace gatecheck::isolate_detail
