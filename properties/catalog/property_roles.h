// Properties found by what they do, not by name, for code above the catalog
// that reports on a kind of comparison (the sweep): only the catalog spells a
// property's name.
#pragma once

#include <string>

#include "property_catalog.h"

namespace gatecheck {

// The property that compares outputs of kind k across batch plans (rowwise:
// each row alone or in any sub-batch; segment_sum: an index's rows kept
// together). Throws std::logic_error for a kind no such property reads.
const PropertyInfo& invariance_property(OutputKind k);
// The property that compares repeated runs of one call.
const PropertyInfo& repeat_property();
// The property that splits a batch's rows into parts (ranks, micro-batches)
// and compares the parts' row reductions, combined, with the whole batch's.
const PropertyInfo& split_property();
// Is the property (by name) judged against a reference value, the float64
// oracle or the eager model, rather than against the implementation itself?
bool judged_against_reference(const std::string& property);

}  // namespace gatecheck
