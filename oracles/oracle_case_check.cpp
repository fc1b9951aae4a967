// The oracle and the eager model read a Case's tensors directly, so they
// first make sure it is a valid problem: consistent shapes and dtypes, and
// every index in range. Anything else is a bug in the caller, not a finding.
#include <stdexcept>

#include "oracle.h"

namespace gatecheck {

void require_valid_case(const char* who, const Case& c) {
  auto bad = [&](const std::string& what) {
    throw std::invalid_argument(std::string(who) + ": " + what + " (" + describe(c) + ")");
  };
  if (checked_elements(c.rows, c.dim) < 0 || checked_elements(c.gates, c.dim) < 0 ||
      (c.gates == 0 && c.rows > 0))
    bad("invalid shape");
  if (int64_t(c.index.size()) != c.rows) bad("index has " + std::to_string(c.index.size()) + " entries");
  size_t k = 0;
  for (const auto& in : c.op->inputs) {
    if (in.role == Role::index) continue;
    if (k >= c.inputs.size()) bad(std::string("no tensor for ") + in.name);
    const HostTensor& t = c.inputs[k++];
    const int64_t rows = role_rows(in.role, c.rows, c.gates), cols = role_cols(in.role, c.dim);
    if (t.dtype != c.dtype) bad(std::string(in.name) + " has dtype " + dtype_name(t.dtype));
    if (t.rows != rows || t.cols != cols || t.bytes.size() != size_t(rows * cols * dtype_size(c.dtype)))
      bad(std::string(in.name) + " has shape [" + std::to_string(t.rows) + ", " + std::to_string(t.cols) + "]");
  }
  if (c.scalars.size() != c.op->scalars.size()) bad(std::to_string(c.scalars.size()) + " scalars");
  if (const std::string why = case_input_problem(c); !why.empty()) bad(why);
}

}  // namespace gatecheck
