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
  struct { const char* name; const HostTensor* t; int64_t rows; } tensors[] = {
      {"res", &c.res, c.rows}, {"y", &c.y, c.rows}, {"grad_out", &c.grad_out, c.rows}, {"gate", &c.gate, c.gates}};
  for (const auto& t : tensors) {
    if (t.t->dtype != c.dtype) bad(std::string(t.name) + " has dtype " + dtype_name(t.t->dtype));
    if (t.t->rows != t.rows || t.t->cols != c.dim ||
        t.t->bytes.size() != size_t(t.rows * c.dim * dtype_size(c.dtype)))
      bad(std::string(t.name) + " has shape [" + std::to_string(t.t->rows) + ", " + std::to_string(t.t->cols) + "]");
  }
  for (int64_t r = 0; r < c.rows; ++r)
    if (c.index[size_t(r)] < 0 || c.index[size_t(r)] >= c.gates)
      bad("index[" + std::to_string(r) + "] = " + std::to_string(c.index[size_t(r)]) + " out of range");
}

}  // namespace gatecheck
