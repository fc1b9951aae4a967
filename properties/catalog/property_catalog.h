// The property catalog: every property gatecheck checks, as one table. For
// each: its name, its check on a small case and its scale version, the
// outputs it reads (by their kind, so that it applies to any op whose outputs
// have that kind), the batch plans it needs and the guard that keeps it from
// passing on a plan that moved nothing, whether it runs by default, and what
// its scale cases draw. Everything above reads this table: the engine, the
// scale tier, the generators, the contracts, the reports, the front ends.
// (The checks are declared in property_checks.h and defined in checks/ and
// scale/; this table only points at them.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/op_schema.h"

namespace gatecheck {

struct Implementation;
struct Case;
struct ScaleCase;
struct Verdict;
struct PropertyOptions;
struct ScaleCheckOptions;
struct ValidInputs;

// The outputs a property compares.
enum class Reads : uint8_t {
  every_output,   // all of them (accuracy, repeatable, full_write)
  kinds,          // those of PropertyInfo::kinds (the invariance properties)
  eager_outputs,  // those the op's eager model pins (oracles/op_oracles.h)
  inputs,         // the inputs, not the outputs (inputs_untouched)
  every_buffer,   // the guard bytes around every input and output (no_oob_write)
  rejections,     // none: what the implementation does with bad input
};

// What a property needs of a case's batch plan, and so its vacuity guard:
// it fails, as vacuous, when the plan moved nothing it can compare.
enum class PlanNeed : uint8_t {
  none,
  rows_move,      // some row at another offset and in a batch of another size (case/plan_movement.h)
  segments_move,  // some index value whose rows all sit in one batch, in order, moved
  split,          // a split: disjoint parts covering the rows, at least 2 of them not empty
};

// The values its scale cases draw (case/scale_values.h).
enum class ScaleValuesWanted : uint8_t {
  rounding,       // full-mantissa values
  exact_first,    // mostly exact ones, whose every output is known bit for bit
  rounding_sums,  // sums that round, so that an order change shows (exact values would hide it)
};

using PropertyCheck = Verdict (*)(const Implementation& impl, const Case& c, const PropertyOptions& o);
using ScaleCheck = Verdict (*)(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o);
// A property whose check runs on another problem than a case that cannot carry it sets *out to
// that problem and returns true (error_inputs: a small valid one for a case with no rows).
using StandIn = bool (*)(const Case& c, const ValidInputs& valid, Case* out);

struct PropertyInfo {
  const char* name;
  const char* checks;  // what it checks, one line, for users
  PropertyCheck check;
  ScaleCheck scale = nullptr;  // null: small cases only
  Reads reads = Reads::every_output;
  std::vector<OutputKind> kinds = {};  // with Reads::kinds
  PlanNeed plans = PlanNeed::none;
  bool by_default = true;
  int scale_output_sets = 1;  // output sets a scale check holds at once (2 to compare runs)
  ScaleValuesWanted scale_values = ScaleValuesWanted::rounding;
  // Its failures can depend on scheduling (a rerun, or a batch run apart,
  // may or may not show them): a replay retries under the same stress.
  bool flaky_failures = false;
  // What the property checks of an implementation that declares no split exchange, or null where
  // an exchange does not matter: check says it up front to one that claims the property.
  const char* without_exchange = nullptr;
  // The problem its check runs on in place of a case that cannot carry it, or null: the shrinker
  // then keeps to cases the check runs on, so that the minimal case is the problem it checked.
  StandIn stand_in = nullptr;
};

// Every property, in report order: the default set, then the opt-in ones.
const std::vector<PropertyInfo>& property_catalog();
// The property named `name`, or nullptr.
const PropertyInfo* find_property(const std::string& name);
// The property named `name`; throws std::invalid_argument with
// unknown_property's message.
const PropertyInfo& property_info(const std::string& name);

// The names of the default set, and of every property, in report order.
const std::vector<std::string>& default_properties();
const std::vector<std::string>& all_properties();
bool is_property(const std::string& p);
// "unknown property 'p' (accuracy, row_invariance, ...)": every message about a
// bad property name lists the valid ones.
std::string unknown_property(const std::string& p);

// The outputs of op that p compares (their positions in op.outputs).
std::vector<int> outputs_read(const PropertyInfo& p, const OpSchema& op);
// Does p apply to op: does op have an output of the kinds p reads? (A
// property that reads every output, or rejections, applies to every op.)
bool applies_to(const PropertyInfo& p, const OpSchema& op);
// The default set for op: the default properties that apply to it.
std::vector<std::string> default_properties_for(const OpSchema& op);

}  // namespace gatecheck
