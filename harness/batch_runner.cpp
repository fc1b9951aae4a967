#include "batch_runner.h"

#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "guarded_buffer.h"

namespace gatecheck {

const char* tensor_name(Tensor t) {
  switch (t) {
    case Tensor::out: return "out";
    case Tensor::grad_res: return "grad_res";
    case Tensor::grad_y: return "grad_y";
    case Tensor::grad_gate: return "grad_gate";
  }
  return "?";
}

namespace {
DeviceBytes uploaded(Device d, const void* host, size_t bytes) {
  DeviceBytes b(d, bytes);
  b.upload(host, bytes);
  return b;
}
}  // namespace

BatchRunner::BatchRunner(const Implementation& impl, const Case& c, int64_t max_batch_rows)
    : impl_(impl), c_(c), row_bytes_(size_t(c.dim * dtype_size(c.dtype))) {
  const Device d = impl.device;
  const size_t rows_bytes = size_t(c.rows) * row_bytes_, batch_bytes = size_t(max_batch_rows) * row_bytes_;
  res_ = uploaded(d, c.res.data(), rows_bytes);
  gate_ = uploaded(d, c.gate.data(), gate_bytes());
  index_ = uploaded(d, c.index.data(), c.index.size() * sizeof(int64_t));
  y_ = uploaded(d, c.y.data(), rows_bytes);
  grad_out_ = uploaded(d, c.grad_out.data(), rows_bytes);
  b_res_ = DeviceBytes(d, batch_bytes);
  b_index_ = DeviceBytes(d, size_t(max_batch_rows) * sizeof(int64_t));
  b_y_ = DeviceBytes(d, batch_bytes);
  b_grad_out_ = DeviceBytes(d, batch_bytes);
  for (int t = 0; t < 3; ++t) {
    full_[t] = DeviceBytes(d, rows_bytes);
    batch_[t] = DeviceBytes(d, batch_bytes);
  }
  full_[3] = DeviceBytes(d, gate_bytes());
  batch_[3] = DeviceBytes(d, gate_bytes());
}

Status BatchRunner::run(const gatecheck_problem& p, const void* res, const int64_t* index, const void* y,
                        const void* grad_out, DeviceBytes* outs) {
  Status s = impl_.forward(p, res, gate_.get(), index, y, outs[0].get());
  if (s.ok()) s = device_sync(impl_.device);
  if (!s.ok()) {
    s.message = "forward: " + s.message;
    return s;
  }
  s = impl_.backward(p, grad_out, gate_.get(), index, y, outs[1].get(), outs[3].get(), outs[2].get(), res);
  if (s.ok()) s = device_sync(impl_.device);
  if (!s.ok()) s.message = "backward: " + s.message;
  return s;
}

Status BatchRunner::run_full() {
  try {
    for (auto& o : full_) o.fill(0xa5);
    return run(full_problem(), res(), index(), y(), grad_out(), full_);
  } catch (const std::exception& e) {
    return Status::error(ErrorKind::implementation, std::string("harness: ") + e.what());
  }
}

Status BatchRunner::run_rows(const std::vector<int64_t>& rows) {
  try {
    if (int64_t(rows.size()) * int64_t(row_bytes_) > int64_t(b_res_.size()))
      throw std::runtime_error("a batch of " + std::to_string(rows.size()) + " rows is larger than this runner's");
    const Device d = impl_.device;
    gather_rows(d, b_res_.get(), res_.get(), rows, row_bytes_);
    gather_rows(d, b_index_.get(), index_.get(), rows, sizeof(int64_t));
    gather_rows(d, b_y_.get(), y_.get(), rows, row_bytes_);
    gather_rows(d, b_grad_out_.get(), grad_out_.get(), rows, row_bytes_);
    for (int t = 0; t < 3; ++t) batch_[t].fill(0x5a, rows.size() * row_bytes_);  // what this batch writes
    batch_[3].fill(0x5a);
    gatecheck_problem p = c_.problem(d);
    p.rows = int64_t(rows.size());
    return run(p, b_res_.get(), b_index_.as<const int64_t>(), b_y_.get(), b_grad_out_.get(), batch_);
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
  HostTensor* dst[] = {&o.out, &o.grad_res, &o.grad_y, &o.grad_gate};
  for (int t = 0; t < 4; ++t) full_[t].download(dst[t]->data(), dst[t]->bytes.size());
  return o;
}

uint32_t BatchRunner::bits_at(const void* tensor, int64_t row, int64_t col) const {
  const size_t es = size_t(dtype_size(c_.dtype));
  uint32_t bits = 0;  // little-endian: a 16-bit element lands in the low bits
  read_bytes(impl_.device, &bits, static_cast<const char*>(tensor) + size_t(row) * row_bytes_ + size_t(col) * es, es);
  return bits;
}

}  // namespace gatecheck
