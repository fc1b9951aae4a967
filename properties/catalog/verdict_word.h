// The words every report gives a result, in check's table and JSON and in the
// sweep: "pass"; "fail", a claimed property failed (the run fails); "finding",
// a property the implementation does not claim failed (reported with the same
// evidence, and the run does not fail for it).
#pragma once

namespace gatecheck {

inline const char* verdict_word(bool passed, bool claimed) { return passed ? "pass" : claimed ? "fail" : "finding"; }

}  // namespace gatecheck
