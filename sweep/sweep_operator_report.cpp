#include "sweep_operator_report.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace gatecheck {

using nlohmann::json;

namespace {

// Why no size was compared at all.
std::string ran_words(const SweepImplResult& r) {
  return r.error.empty() ? "not reached" : "not compared: the implementation stopped on an error";
}

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// The prior art's latency: CUDA events on the GPU, the wall clock on the CPU.
double latency_us(const CallTiming& t, bool gpu) { return gpu ? t.event_us : t.wall_us; }

// GB/s of `bytes` in `us` (null where not timed).
json gbps(double bytes, double us) { return us > 0 && bytes > 0 ? json(bytes / us / 1e3) : json(nullptr); }

json perf_entry(const AccuracyAt& a, bool gpu) {
  json p = {{"case", "S=" + std::to_string(a.rows)}, {"rows", a.rows}, {"dim", a.dim}};
  if (!a.latency) {  // (--reps 0, or the call failed)
    for (const char* k : {"fwd_us", "fwd_gbps", "backward_us", "backward_gbps", "fwd_peak_mib", "backward_peak_mib"})
      p[k] = nullptr;
    p["error"] = a.error.empty() ? "not timed" : a.error;
    return p;
  }
  const Latency& l = *a.latency;
  const double fwd_us = latency_us(l.fwd, gpu);
  p["bytes"] = l.fwd.bytes;
  p["fwd_us"] = fwd_us >= 0 ? json(fwd_us) : json(nullptr);
  p["fwd_gbps"] = gbps(l.fwd.bytes, fwd_us);
  if (l.bwd) {
    const double bwd_us = latency_us(*l.bwd, gpu);
    p["backward_bytes"] = l.bwd->bytes;
    p["backward_us"] = bwd_us >= 0 ? json(bwd_us) : json(nullptr);
    p["backward_gbps"] = gbps(l.bwd->bytes, bwd_us);
  }
  // The prior art's peak_mib is torch's allocator peak; an ABI call has no
  // allocator statistics to read, so it is not claimed.
  p["fwd_peak_mib"] = nullptr;
  p["backward_peak_mib"] = nullptr;
  return p;
}

std::string hex(uint32_t bits) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", unsigned(bits));
  return b;
}

// "shift = -0, scale = 0": the inputs the plain part sets (the sign of a zero shown).
std::string set_words(const PlainPart& pp) {
  std::string s;
  for (const auto& [name, v] : pp.set) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    s += (s.empty() ? "" : ", ") + std::string(name) + " = " + (v == 0 && std::signbit(v) ? "-0" : b);
  }
  return s;
}

// The op's plain part against its library op at every size (sweep_plain.h):
// true only when every size was compared and no element's bits differ,
// false when any element's do, null (with the reason) when it was not
// compared. `<field>_by_size` holds each size's counts.
void plain_fields(const SweepImplResult& r, const OpSchema& op, json* j) {
  const PlainPart& pp = op.plain;
  const std::string field = pp.field;
  json sizes = json::array();
  bool every = true, any_differ = false;
  std::string why_not, by;
  for (const AccuracyAt& a : r.accuracy) {
    if (a.rows <= 0) {  // a size the run did not reach
      every = false;
      if (why_not.empty()) why_not = ran_words(r);
      continue;
    }
    json e = {{"case", "S=" + std::to_string(a.rows)}, {"rows", a.rows}};
    const bool compared = a.plain && a.plain->differ >= 0;
    e["elements"] = compared ? json(a.plain->elements) : json(nullptr);
    e["differ"] = compared ? json(a.plain->differ) : json(nullptr);
    e["first_differ"] = nullptr;
    if (compared && a.plain->differ > 0)
      e["first_differ"] = {{"row", a.plain->at_row}, {"col", a.plain->at_col}, {"bits", hex(a.plain->bits)},
                           {"library_bits", hex(a.plain->want_bits)}, {"why", a.plain->why}};
    const std::string note = compared || (a.plain && !a.plain->note.empty()) ? a.plain->note : ran_words(r);
    e["note"] = note;
    sizes.push_back(e);
    every = every && compared;
    any_differ = any_differ || (compared && a.plain->differ > 0);
    if (!compared && why_not.empty()) why_not = note;
    if (compared && by.empty()) by = note;
  }
  if (sizes.empty()) {
    every = false;
    why_not = ran_words(r);
  }
  (*j)[field] = any_differ ? json(false) : every ? json(true) : json(nullptr);
  (*j)[field + "_note"] =
      any_differ || every
          ? std::string(pp.output) + " of the ordinary forward call with " + set_words(pp) +
                " (exactly the plain part then), against " + by + ", which " + pp.library_name +
                " runs, bit for bit (any NaN matching any NaN) at each size" +
                (every ? "" : "; some sizes not compared: " + why_not)
          : why_not;
  (*j)[field + "_by_size"] = sizes;
}

}  // namespace

json operator_report_json(const SweepImplResult& r, const OpSchema& op) {
  const InvarianceResult& v = r.invariance;
  const bool ran = r.error.empty();
  const bool gpu = r.device == Device::cuda;
  json j;
  // Each row alone, in sub-batches and in the batch-size sweep, bit for bit.
  j["rows_batch_invariant"] =
      ran && v.all_rows_tally.failed == 0 && v.sub_tally.failed == 0 && v.sweep_tally.failed == 0;
  // The whole batch run again: every output summed over rows, bit for bit.
  j["repeat_bitwise_equal"] = ran && v.params_repeatable;
  // The outputs the eager model pins, bit for bit at every size (null: not compared).
  json eager = json::object();
  for (const AccuracyAt& a : r.accuracy)
    for (size_t k = 0; k < a.outputs.size(); ++k) {
      if (a.outputs[k].eager_differ < 0) continue;
      const bool same = a.outputs[k].eager_differ == 0;
      json& e = eager[a.output_names[k]];
      e = e.is_null() ? json(same) : json(e.get<bool>() && same);
    }
  j["bitwise_vs_eager_model"] = eager;
  if (op.plain.field) plain_fields(r, op, &j);
  // Each output's max |err| / max |float64 value|, at the largest size that ran.
  const AccuracyAt* at = nullptr;
  for (const AccuracyAt& a : r.accuracy)
    if (a.rows > 0 && a.error.empty() && !a.outputs.empty() && (!at || a.rows > at->rows)) at = &a;
  json rel = json::object();
  if (at)
    for (size_t k = 0; k < at->outputs.size(); ++k) rel[at->output_names[k]] = finite_or_null(at->outputs[k].rel_err);
  j["rel_error"] = rel;
  j["rel_error_rows"] = at ? json(at->rows) : json(nullptr);
  json perf = json::array();
  for (const AccuracyAt& a : r.accuracy)
    if (a.rows > 0) perf.push_back(perf_entry(a, gpu));
  j["perf"] = perf;
  j["peak_mib"] = "not measured: the prior art reads torch's allocator peak; an implementation called through its ABI "
                  "has no allocator statistics gatecheck can read";
  j["latency"] = gpu ? "CUDA events around each call (the prior art's method)"
                     : "the wall clock (no events on the CPU)";
  return j;
}

}  // namespace gatecheck
