#include "batch_runner.h"

#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "guarded_buffer.h"

namespace gatecheck {

namespace {
DeviceBytes uploaded(Device d, const void* host, size_t bytes) {
  DeviceBytes b(d, bytes);
  b.upload(host, bytes);
  return b;
}

size_t tensor_bytes(Role role, int64_t rows, int64_t gates, int64_t dim, DType t) {
  const int64_t es = role == Role::index ? int64_t(sizeof(int64_t)) : dtype_size(t);
  return size_t(role_rows(role, rows, gates) * role_cols(role, dim) * es);
}

// The call of `pass` over the given buffers (inputs, then outputs, in the op's order).
OpCall call_over(const Case& c, Pass pass, const gatecheck_problem& p, std::vector<DeviceBytes*> in,
                 std::vector<DeviceBytes>& out) {
  OpCall call = OpCall::shaped(*c.op, pass, p);
  for (size_t i = 0; i < in.size(); ++i)
    if (call.takes(i)) call.inputs[i].data = in[i]->get();
  for (size_t i = 0; i < out.size(); ++i)
    if (call.makes(i)) call.outputs[i].data = out[i].get();
  call.scalars = c.scalars;
  return call;
}
}  // namespace

BatchRunner::BatchRunner(const Implementation& impl, const Case& c, int64_t max_batch_rows)
    : impl_(impl), c_(c), row_bytes_(size_t(c.dim * dtype_size(c.dtype))) {
  const Device d = impl.device;
  size_t k = 0;
  for (const auto& in : c.op->inputs) {
    const void* host = in.role == Role::index ? static_cast<const void*>(c.index.data()) : c.inputs[k++].data();
    inputs_.push_back(uploaded(d, host, tensor_bytes(in.role, c.rows, c.gates, c.dim, c.dtype)));
    // A batch gathers the rows of row tensors and of the index; the others it shares.
    const bool gathered = in.role == Role::row || in.role == Role::index;
    batch_inputs_.push_back(gathered ? DeviceBytes(d, tensor_bytes(in.role, max_batch_rows, c.gates, c.dim, c.dtype))
                                     : DeviceBytes());
  }
  for (const auto& out : c.op->outputs) {
    full_.emplace_back(d, tensor_bytes(out.role, c.rows, c.gates, c.dim, c.dtype));
    batch_.emplace_back(d, tensor_bytes(out.role, max_batch_rows, c.gates, c.dim, c.dtype));
  }
  std::vector<DeviceBytes*> in;
  for (auto& b : inputs_) in.push_back(&b);
  full_fwd_ = call_over(c, Pass::forward, c.problem(d), in, full_);
  full_bwd_ = call_over(c, Pass::backward, c.problem(d), in, full_);
}

int BatchRunner::output(std::string_view name) const {
  const int k = c_.op->output_index(name);
  if (k < 0) throw std::invalid_argument(std::string(c_.op->name) + " has no output '" + std::string(name) + "'");
  return k;
}

Status BatchRunner::run(const OpCall& fwd, const OpCall& bwd) {
  Status s = impl_.call(fwd);
  if (s.ok()) s = device_sync(impl_.device);
  if (!s.ok()) {
    s.message = "forward: " + s.message;
    return s;
  }
  s = impl_.call(bwd);
  if (s.ok()) s = device_sync(impl_.device);
  if (!s.ok()) s.message = "backward: " + s.message;
  return s;
}

Status BatchRunner::run_full() {
  try {
    for (auto& o : full_) o.fill(0xa5);
    return run(full_fwd_, full_bwd_);
  } catch (const std::exception& e) {
    return Status::error(ErrorKind::implementation, std::string("harness: ") + e.what());
  }
}

Status BatchRunner::run_full_forward() {
  try {
    for (auto& o : full_) o.fill(0xa5);
    Status s = impl_.call(full_fwd_);
    if (s.ok()) s = device_sync(impl_.device);
    if (!s.ok()) s.message = "forward: " + s.message;
    return s;
  } catch (const std::exception& e) {
    return Status::error(ErrorKind::implementation, std::string("harness: ") + e.what());
  }
}

Status BatchRunner::run_rows(const std::vector<int64_t>& rows) {
  try {
    const int64_t n = int64_t(rows.size());
    const Device d = impl_.device;
    std::vector<DeviceBytes*> in;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Role role = c_.op->inputs[i].role;
      if (role != Role::row && role != Role::index) {
        in.push_back(&inputs_[i]);
        continue;
      }
      const size_t each = role == Role::index ? sizeof(int64_t) : row_bytes_;
      if (size_t(n) * each > batch_inputs_[i].size())
        throw std::runtime_error("a batch of " + std::to_string(n) + " rows is larger than this runner's");
      gather_rows(d, batch_inputs_[i].get(), inputs_[i].get(), rows, each);
      in.push_back(&batch_inputs_[i]);
    }
    for (size_t k = 0; k < batch_.size(); ++k) {  // what this batch writes
      const Role role = c_.op->outputs[k].role;
      batch_[k].fill(0x5a, role == Role::row ? size_t(n) * row_bytes_ : batch_[k].size());
    }
    gatecheck_problem p = c_.problem(d);
    p.rows = n;
    return run(call_over(c_, Pass::forward, p, in, batch_), call_over(c_, Pass::backward, p, in, batch_));
  } catch (const std::exception& e) {
    return Status::error(ErrorKind::implementation, std::string("harness: ") + e.what());
  }
}

DeviceBytes BatchRunner::keep(const void* tensor, int64_t first, int64_t n) const {
  DeviceBytes b(impl_.device, size_t(n) * row_bytes_);
  copy_on_device(impl_.device, b.get(), static_cast<const char*>(tensor) + size_t(first) * row_bytes_, b.size());
  return b;
}

Outputs BatchRunner::download_full() const {
  Outputs o = outputs_for(c_);
  for (size_t k = 0; k < full_.size(); ++k) full_[k].download(o.tensors[k].data(), o.tensors[k].bytes.size());
  return o;
}

uint32_t BatchRunner::bits_at(const void* tensor, int64_t row, int64_t col) const {
  const size_t es = size_t(dtype_size(c_.dtype));
  uint32_t bits = 0;  // little-endian: a 16-bit element lands in the low bits
  read_bytes(impl_.device, &bits, static_cast<const char*>(tensor) + size_t(row) * row_bytes_ + size_t(col) * es, es);
  return bits;
}

}  // namespace gatecheck
