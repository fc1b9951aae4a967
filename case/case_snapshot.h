// In-flight snapshots: before an implementation runs a case, the CLI writes
// the case in this compact binary form (a JSON dump per call would cost more
// than the call). If the process then dies, the snapshot is a replayable
// corpus file: read_case_file() accepts it, and `gatecheck shrink` turns it
// into readable JSON.
#pragma once

#include <string>

#include "case_json.h"

namespace gatecheck {

// Version 02 names the op and holds its scalars; 01 (gate_residual's, before
// there were others) still reads.
constexpr char kSnapshotMagic[8] = {'G', 'C', 'S', 'N', 'A', 'P', '0', '2'};
constexpr char kSnapshotMagicV1[8] = {'G', 'C', 'S', 'N', 'A', 'P', '0', '1'};

std::string case_to_snapshot(const CaseFile& f);
bool is_case_snapshot(const std::string& bytes);
// Throws CaseFileError naming `origin` on any truncation or inconsistency.
CaseFile case_from_snapshot(const std::string& bytes, const std::string& origin);

}  // namespace gatecheck
