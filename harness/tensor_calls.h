// Implementations that are called with tensors rather than through the
// plugin C ABI: Python callables (python:TARGET, harness/python_impl.h). They
// receive each tensor with its own extents, so a call can hand them shapes
// that disagree (error_inputs' probes), which the C ABI's one problem struct
// cannot express; and they never receive what a tensor cannot be (a null
// pointer, a negative extent, an unknown dtype or device value).
#pragma once

#include <cstdint>
#include <string>

#include "../kernels/gate_residual.h"

namespace gatecheck {

struct Extent {
  int64_t rows = 0, cols = 0;
};

// The extents of every tensor of one call.
struct CallShapes {
  Extent res, gate, y, grad_out;        // inputs
  int64_t index = 0;                     // entries of index
  Extent out, grad_res, grad_gate, grad_y;  // outputs
  // What the op contract says for problem p (every shape agrees).
  static CallShapes of(const gatecheck_problem& p);
};

class TensorCalls {
 public:
  virtual ~TensorCalls() = default;
  // p gives the dtype, the device and the stream; each pointer views a buffer
  // of the extent `s` gives it. A failure comes back as a Status whose message
  // is the implementation's own (for Python, the exception and the last lines
  // of its traceback, after kTracebackHeading).
  virtual Status forward(const gatecheck_problem& p, const CallShapes& s, const void* res, const void* gate,
                         const int64_t* index, const void* y, void* out) const = 0;
  virtual Status backward(const gatecheck_problem& p, const CallShapes& s, const void* grad_out, const void* res,
                          const void* gate, const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                          void* grad_y) const = 0;
  // Forward, then backward on the same buffers, in one call: as a training
  // step calls an op, and for an autograd implementation without a forward
  // of its own to recompute. On failure *failed_in_forward says which half
  // failed.
  virtual Status forward_backward(const gatecheck_problem& p, const CallShapes& s, const void* res, const void* gate,
                                  const int64_t* index, const void* y, void* out, const void* grad_out,
                                  void* grad_res, void* grad_gate, void* grad_y, bool* failed_in_forward) const = 0;
};

// Where a Status message from a TensorCalls implementation stops being its
// own words and the traceback begins. Checks of a rejection's wording
// (error_inputs) read only what comes before it.
constexpr const char* kTracebackHeading = "\n  traceback (most recent call last, last lines):";
std::string without_traceback(const std::string& message);

}  // namespace gatecheck
