// A failure's file in the corpus: its name, its contents (the minimal case's
// values, or its scale spec and view), its failure record with the repro
// line, and the write. What check, the fuzz targets and the sweep save goes
// through here, so that every front end names and records failures alike.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../case/case_json.h"
#include "../properties/engine/check_engine.h"

namespace gatecheck {

// One saved counterexample per failing result: result index -> path.
struct SavedFailures {
  std::vector<std::string> paths;  // parallel to report.results ("" where none)
};

// A name made safe for a file name: [A-Za-z0-9_-], at most 40 characters
// (a longer one keeps its tail and a hash of the whole).
std::string file_safe(const std::string& s);

// CORPUS/[PREFIX]IMPL-PROPERTY-DIGEST.json
std::string failure_file_path(const std::string& corpus, const std::string& prefix, const std::string& impl,
                              const std::string& property, const std::string& digest);

// A failure's file: the minimal case's values, or its scale spec and view.
CaseFile failure_case_file(const FailureReport& f);

// Who failed: the implementation (its name, without a device suffix), its
// device, the property, and whether the implementation claims it.
struct FailureSource {
  std::string impl;
  Device device = Device::cpu;
  std::string property;
  bool claimed = true;
};

// One failure's file: `file` (its case) written to
// CORPUS/IMPL-PROPERTY-DIGEST.json with its failure record (v's message and
// evidence) and its repro line, and `note`. Returns the path; throws what
// write_case_file throws.
std::string save_failure_file(const std::string& corpus, CaseFile file, const std::string& digest,
                              const FailureSource& who, const Verdict& v, const std::string& note);
std::string failure_digest(const FailureReport& f);

// Every failing result of a check run, written to the corpus with its record
// and repro line. `origin` is how the run was made ("--seed 42 ..."), for the
// file's note. A file that cannot be written is reported through `warn` and
// left out of the result.
SavedFailures save_failures(const CheckReport& r, const std::string& corpus, const std::string& origin,
                            const std::function<void(const std::string&)>& warn);

}  // namespace gatecheck
