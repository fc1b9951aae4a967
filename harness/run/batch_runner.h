// One case held on an implementation's device, run as a whole and as any
// sub-batches of its rows. The inputs are uploaded once; a sub-batch's rows
// are gathered on the device into fresh buffers (as index_select makes fresh
// tensors) and run there; outputs stay there to be compared bit for bit
// (device_rows.h). `gatecheck sweep` runs the prior art's thousands of
// sub-batches of batches up to 131072 x 5376 this way; run_case (runner.h)
// is for the properties, with guards and poison on every call.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "../../case/case.h"
#include "device_rows.h"
#include "../impls/implementation.h"

namespace gatecheck {

class BatchRunner {
 public:
  // Sub-batches may have up to max_batch_rows rows. Throws std::runtime_error
  // when the device memory cannot be had.
  BatchRunner(const Implementation& impl, const Case& c, int64_t max_batch_rows);

  // Forward then backward of the whole case, into the full outputs (filled
  // with 0xa5 bytes first, so an element left unwritten shows as a difference).
  Status run_full();
  // The forward alone of the whole case, into the full outputs (filled first
  // as run_full's): what a forward output needs, without the backward's time.
  Status run_full_forward();
  // Forward then backward of c's rows `rows`, in that order, as one batch,
  // into the batch outputs (filled with 0x5a bytes first).
  Status run_rows(const std::vector<int64_t>& rows);

  // Output k of the op (its position, by output(name)), where it lives (on
  // impl.device): full (the case's shape) and the last batch's (row i is
  // batch row i; table and column outputs whole).
  int output(std::string_view name) const;
  const void* full(int k) const { return full_[size_t(k)].get(); }
  const void* batch(int k) const { return batch_[size_t(k)].get(); }
  size_t row_bytes() const { return row_bytes_; }  // of a [*, dim] tensor's row
  size_t gate_bytes() const { return row_bytes_ * size_t(c_.gates); }

  // A copy, on the device, of n rows of a [*, dim] output starting at row `first`.
  DeviceBytes keep(const void* tensor, int64_t first, int64_t n) const;
  // The full outputs on the host.
  Outputs download_full() const;
  // One element's bits (a dim-wide row's column `col`) from a device tensor.
  uint32_t bits_at(const void* tensor, int64_t row, int64_t col) const;

  // The full case's call of `pass` on the device (inputs uploaded, the full
  // outputs), for timing calls.
  const Implementation& impl() const { return impl_; }
  const Case& cas() const { return c_; }
  const OpCall& full_call(Pass pass) const { return pass == Pass::forward ? full_fwd_ : full_bwd_; }

 private:
  Status run(const OpCall& fwd, const OpCall& bwd);

  const Implementation& impl_;
  const Case& c_;
  size_t row_bytes_;
  std::vector<DeviceBytes> inputs_, batch_inputs_, full_, batch_;  // in the op's order
  OpCall full_fwd_, full_bwd_;
};

}  // namespace gatecheck
