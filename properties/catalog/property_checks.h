// Every property's checks, declared for the catalog's table
// (property_catalog.cpp): on a small case in checks/, at scale in scale/.
// Callers go through check_property and check_scale_property, which look a
// property up in the catalog.
#pragma once

#include "property_catalog.h"

namespace gatecheck::checks {

Verdict accuracy(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict eager_exact(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict row_invariance(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict segment_invariance(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict repeatable(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict split_invariance(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict inputs_untouched(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict full_write(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict no_oob_write(const Implementation& impl, const Case& c, const PropertyOptions& o);
Verdict error_inputs(const Implementation& impl, const Case& c, const PropertyOptions& o);
bool error_inputs_stand_in(const Case& c, const ValidInputs& valid, Case* out);

Verdict scale_accuracy(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o);
Verdict scale_repeatable(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o);
Verdict scale_row_invariance(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o);
Verdict scale_segment_invariance(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o);
Verdict scale_inputs_untouched(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o);
Verdict scale_full_write(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o);
Verdict scale_no_oob_write(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o);
Verdict scale_split_invariance(const Implementation& impl, const ScaleCase& c, const ScaleCheckOptions& o);

}  // namespace gatecheck::checks
