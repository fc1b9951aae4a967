// Implementations that are called with tensors rather than through a plugin
// C ABI: Python callables (python:TARGET, harness/impls/python_impl.h). They
// receive each tensor with its own extent (OpCall's buffers), so a call can
// hand them shapes that disagree (error_inputs' probes), which a C ABI's one
// problem struct cannot express; and they never receive what a tensor cannot
// be (a null pointer, a negative extent, an unknown dtype or device value).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/op_schema.h"

namespace gatecheck {

class TensorCalls {
 public:
  virtual ~TensorCalls() = default;
  // c.p gives the dtype, the device and the stream; each buffer of the pass
  // is viewed with the extent c gives it. A failure comes back as a Status
  // whose message is the implementation's own (for Python, the exception and
  // the last lines of its traceback, after kTracebackHeading).
  virtual Status call(const OpCall& c) const = 0;
  // Forward, then backward on the same buffers, in one call: as a training
  // step calls an op, and for an autograd implementation without a forward
  // of its own to recompute. On failure *failed_in_forward says which half
  // failed.
  virtual Status forward_backward(const OpCall& fwd, const OpCall& bwd, bool* failed_in_forward) const = 0;
  // A declared split exchange (gatecheck_split_exchange.h's three steps, the
  // state's words sized by the implementation): "" when it declares none,
  // else what a state is.
  virtual std::string exchange_state() const { return ""; }
  virtual Status exchange_partial(const OpCall& bwd, std::vector<uint64_t>* state) const;
  virtual Status exchange_combine(const std::vector<const std::vector<uint64_t>*>& states,
                                  std::vector<uint64_t>* out) const;
  virtual Status exchange_finalize(const OpCall& bwd, const std::vector<uint64_t>& state) const;
};

// Where a Status message from a TensorCalls implementation stops being its
// own words and the traceback begins. Checks of a rejection's wording
// (error_inputs) read only what comes before it.
constexpr const char* kTracebackHeading = "\n  traceback (most recent call last, last lines):";
std::string without_traceback(const std::string& message);

}  // namespace gatecheck
