// What the scale checks share (scale_properties.cpp, scale_accuracy.cpp):
// how a failed run becomes a verdict or a skip, and the message's head.
// Internal to properties/scale.
#pragma once

#include <string>
#include <vector>

#include "../../harness/scale/scale_session.h"
#include "../checks/properties.h"

namespace gatecheck::scale_detail {

// The op's outputs, in its order.
std::vector<ScaleOutput> every_output(const ScaleCase& c);

// A failed run: the implementation's error on valid input; or, when it ran
// out of memory on a case this large, a skip (throws ScaleNoMemory).
Verdict failed_run(const Implementation& impl, ScaleSession& s, const ScaleCase& c, const std::string& what,
                   const Status& st);

// "<impl> on <case>: ", the head of every message.
std::string head(const Implementation& impl, const ScaleCase& c);

void sort_unique(std::vector<int64_t>& v);

}  // namespace gatecheck::scale_detail
