// INTERIM until check_property() (branch props) is in main: the properties
// that need no oracle, computed directly from run_case. Replace the body of
// check_claims with a loop over check_property()/breaks_claim() then; the
// interface in fuzz_check.h stays.
#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "../harness/runner.h"
#include "fuzz_check.h"

namespace gatecheck::fuzz {

std::vector<std::string> fuzz_properties() {
  std::vector<std::string> props;
  if (const char* env = std::getenv("GATECHECK_FUZZ_PROPERTIES")) {
    std::stringstream ss(env);
    std::string p;
    while (std::getline(ss, p, ','))
      if (!p.empty()) props.push_back(p);
    return props;
  }
  return default_properties();
}

std::string failure_signature(const std::string& impl, const Verdict& v) {
  std::vector<std::string> outs = v.failed_outputs;
  std::sort(outs.begin(), outs.end());
  std::string joined;
  for (const auto& o : outs) joined += (joined.empty() ? "" : "+") + o;
  return v.property + "|" + impl + "|" + (joined.empty() ? "-" : joined);
}

namespace {

bool wants(const std::vector<std::string>& props, const char* p) {
  return std::find(props.begin(), props.end(), p) != props.end();
}

// First differing element of two same-shape tensors, or -1.
int64_t first_diff(const HostTensor& a, const HostTensor& b) {
  for (int64_t i = 0; i < a.numel(); ++i)
    if (a.bits(i) != b.bits(i)) return i;
  return -1;
}

std::string hex(uint32_t b) {
  std::ostringstream s;
  s << "0x" << std::hex << b;
  return s.str();
}

void add(std::vector<Verdict>& out, const std::string& property, const std::string& output,
         const std::string& message) {
  for (auto& v : out)
    if (v.property == property) {
      if (std::find(v.failed_outputs.begin(), v.failed_outputs.end(), output) == v.failed_outputs.end())
        v.failed_outputs.push_back(output);
      v.message += "\n" + message;
      return;
    }
  Verdict v;
  v.property = property;
  v.passed = false;
  v.failed_outputs = {output};
  v.message = message;
  out.push_back(v);
}

// `other` is the run with the other poison: an element only counts as
// unwritten when it held the poison both times (its true value may equal one).
void memory_verdicts(const RunResult& r, const RunResult* other, const std::vector<std::string>& props,
                     std::vector<Verdict>& out) {
  for (const auto& m : r.memory) {
    if (m.kind == MemoryFinding::unwritten) {
      if (!other) continue;
      bool both = false;
      for (const auto& n : other->memory) both = both || (n.kind == m.kind && n.tensor == m.tensor);
      if (!both) continue;
    }
    const char* p = m.kind == MemoryFinding::input_changed ? "inputs_untouched"
                    : m.kind == MemoryFinding::unwritten   ? "full_write"
                                                           : "no_oob_write";
    if (wants(props, p)) add(out, p, m.tensor, m.detail);
  }
}

}  // namespace

std::vector<FuzzFailure> check_claims(const Implementation& impl, const Case& c,
                                      const std::vector<std::string>& props) {
  std::vector<Verdict> bad;
  const RunResult full = run_case(impl, c, {0});
  if (!full.status.ok()) {
    add(bad, "accuracy", "", "valid input was rejected: " + full.status.message);
  } else {
    // grad_res = grad_out exactly, whatever the dtype.
    if (wants(props, "accuracy")) {
      const int64_t i = first_diff(full.outputs.grad_res, c.grad_out);
      if (i >= 0)
        add(bad, "accuracy", "grad_res",
            "grad_res[" + std::to_string(i) + "] = " + hex(full.outputs.grad_res.bits(i)) +
                " but grad_res must equal grad_out exactly (" + hex(c.grad_out.bits(i)) + ")");
    }
    if (!wants(props, "repeatable") && !wants(props, "full_write")) memory_verdicts(full, nullptr, props, bad);
    if (wants(props, "repeatable") || wants(props, "full_write")) {
      const RunResult again = run_case(impl, c, {1});
      memory_verdicts(full, again.status.ok() ? &again : nullptr, props, bad);
      if (again.status.ok()) {
        for (const char* o : kOutputNames) {
          const int64_t i = first_diff(output_by_name(full.outputs, o), output_by_name(again.outputs, o));
          if (i >= 0 && wants(props, "repeatable"))
            add(bad, "repeatable", o,
                std::string(o) + "[" + std::to_string(i) + "] differs between two runs: " +
                    hex(output_by_name(full.outputs, o).bits(i)) + " then " +
                    hex(output_by_name(again.outputs, o).bits(i)));
        }
      }
    }
    if (c.plan && wants(props, "row_invariance")) {
      const int64_t dim = c.dim;
      for (size_t b = 0; b < c.plan->batches.size(); ++b) {
        const auto& rows = c.plan->batches[b];
        const RunResult sub = run_case(impl, sub_case(c, rows), {0});
        if (!sub.status.ok()) {
          add(bad, "row_invariance", "", "sub-batch " + std::to_string(b) + " rejected: " + sub.status.message);
          continue;
        }
        for (const char* o : {"out", "grad_res", "grad_y"}) {
          const HostTensor& whole = output_by_name(full.outputs, o);
          const HostTensor& part = output_by_name(sub.outputs, o);
          for (size_t k = 0; k < rows.size(); ++k)
            for (int64_t j = 0; j < dim; ++j) {
              const uint32_t w = whole.bits(rows[k] * dim + j), p = part.bits(int64_t(k) * dim + j);
              if (w == p) continue;
              add(bad, "row_invariance", o,
                  std::string(o) + "[" + std::to_string(rows[k]) + "," + std::to_string(j) + "] = " + hex(w) +
                      " in the full batch of " + std::to_string(c.rows) + " rows but " + hex(p) + " as row " +
                      std::to_string(k) + " of sub-batch " + std::to_string(b) + " (" +
                      std::to_string(rows.size()) + " rows, plan " + c.plan->kind + ")");
              k = rows.size() - 1;  // one line per output and batch is enough
              break;
            }
        }
      }
    }
  }
  std::vector<FuzzFailure> failures;
  for (auto& v : bad) {
    // Claimed for this dtype, for the property as a whole or the failing output.
    bool claimed = false;
    for (const auto& o : v.failed_outputs) claimed = claimed || impl.contract.claims_for(v.property, o, c.dtype);
    if (!claimed) continue;
    failures.push_back({v, failure_signature(impl.name, v)});
  }
  return failures;
}

}  // namespace gatecheck::fuzz
