// One case held on an implementation's device, run as a whole and as any
// sub-batches of its rows. The inputs are uploaded once; a sub-batch's rows
// are gathered on the device into fresh buffers (as index_select makes fresh
// tensors) and run there; outputs stay there to be compared bit for bit
// (device_rows.h). `gatecheck sweep` runs the prior art's thousands of
// sub-batches of batches up to 131072 x 5376 this way; run_case (runner.h)
// is for the properties, with guards and poison on every call.
#pragma once

#include <cstdint>
#include <vector>

#include "../case/case.h"
#include "device_rows.h"
#include "implementation.h"

namespace gatecheck {

enum class Tensor { out, grad_res, grad_y, grad_gate };
const char* tensor_name(Tensor t);  // "out", "grad_res", "grad_y", "grad_gate"

class BatchRunner {
 public:
  // Sub-batches may have up to max_batch_rows rows. Throws std::runtime_error
  // when the device memory cannot be had.
  BatchRunner(const Implementation& impl, const Case& c, int64_t max_batch_rows);

  // Forward then backward of the whole case, into the full outputs (filled
  // with 0xa5 bytes first, so an element left unwritten shows as a difference).
  Status run_full();
  // Forward then backward of c's rows `rows`, in that order, as one batch,
  // into the batch outputs (filled with 0x5a bytes first).
  Status run_rows(const std::vector<int64_t>& rows);

  // Where the outputs live (on impl.device): full (the case's shape) and the
  // last batch's (row i is batch row i; grad_gate is gates x dim).
  const void* full(Tensor t) const { return full_[int(t)].get(); }
  const void* batch(Tensor t) const { return batch_[int(t)].get(); }
  size_t row_bytes() const { return row_bytes_; }  // of res, y, out, grad_res, grad_y
  size_t gate_bytes() const { return row_bytes_ * size_t(c_.gates); }

  // A copy, on the device, of n rows of a [*, dim] output starting at row `first`.
  DeviceBytes keep(const void* tensor, int64_t first, int64_t n) const;
  // The full outputs on the host.
  Outputs download_full() const;
  // One element's bits (a dim-wide row's column `col`) from a device tensor.
  uint32_t bits_at(const void* tensor, int64_t row, int64_t col) const;

  // The full case's inputs on the device, for timing calls.
  const Implementation& impl() const { return impl_; }
  const Case& cas() const { return c_; }
  gatecheck_problem full_problem() const { return c_.problem(impl_.device); }
  const void* res() const { return res_.get(); }
  const void* gate() const { return gate_.get(); }
  const int64_t* index() const { return index_.as<const int64_t>(); }
  const void* y() const { return y_.get(); }
  const void* grad_out() const { return grad_out_.get(); }
  void* full_out(Tensor t) { return full_[int(t)].get(); }

 private:
  Status run(const gatecheck_problem& p, const void* res, const int64_t* index, const void* y, const void* grad_out,
             DeviceBytes* outs);

  const Implementation& impl_;
  const Case& c_;
  size_t row_bytes_;
  DeviceBytes res_, gate_, index_, y_, grad_out_;
  DeviceBytes b_res_, b_index_, b_y_, b_grad_out_;
  DeviceBytes full_[4], batch_[4];
};

}  // namespace gatecheck
