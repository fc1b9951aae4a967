// Corpus files: a Case as versioned, human-readable JSON with bit-exact
// values (hex of each element's bits, one string per row), the batch plan,
// and, for failures, which implementation and property failed and the
// command that reproduces it. Large cases may hold a generator spec and
// seeds (case_spec.h) instead of explicit values.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "case.h"
#include "case_spec.h"
#include "scale_case.h"

namespace gatecheck {

// The newest version this build writes and reads (case_to_json says which
// version each file gets).
constexpr int kCaseFormatVersion = 2;
// Refuse files describing more than this many elements per tensor: a corrupt
// or hostile file must not make us allocate without bound.
constexpr int64_t kMaxCaseElements = int64_t(1) << 24;
// And more rows or gates than this: each is an entry of the JSON file even at
// dim 0 (a 9.9-million-gate, dim-0 snapshot took the fuzzer's JSON round trip
// past its 10 s timeout). Cases this large are stored as generator specs.
constexpr int64_t kMaxCaseRows = int64_t(1) << 20;

// Provenance of a failure, stored with the case.
struct FailureRecord {
  std::string impl, device, property, message, repro;
  bool claimed = true;
  // The evidence of the run that found it: the differing bits seen, which a
  // failure that depends on scheduling may not show again on a replay.
  std::string evidence;
};

// A scale-tier case as a file holds it: spec and view, not materialised (a
// file cannot make a reader build a large index unless it is used).
struct ScaleFileCase {
  ScaleSpec spec;
  ScaleView view;
  ScaleCase make() const { return make_scale_case(spec, view); }  // throws std::invalid_argument
};

struct CaseFile {
  Case c;
  std::optional<CaseSpec> spec;  // when set, the file stores this generator spec (case_spec.h) instead of values
  std::optional<FailureRecord> failure;
  std::string note;  // free text, e.g. how the shrinker got here
  // When set, a scale-tier case (scale_case.h): the file stores its spec and
  // view, and `c` is empty. Every reader of a CaseFile looks here first.
  std::optional<ScaleFileCase> scale = std::nullopt;
};

// A failure record's device, in both file formats.
inline bool is_device_name(const std::string& d) { return d == "cpu" || d == "cuda"; }

// Any problem reading a file: message names the file, the field and what is wrong.
struct CaseFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string case_to_json(const CaseFile& f);
// `origin` names the source in error messages (a path, "<fuzz input>").
CaseFile case_from_json(const std::string& text, const std::string& origin);

CaseFile read_case_file(const std::string& path);
// Writes atomically (temp file + rename), so a crash never leaves half a file.
void write_case_file(const std::string& path, const CaseFile& f);

// True if s is valid UTF-8 (nlohmann's own check): a case's names must be, or
// the JSON writer would replace bytes and the case would not round-trip.
bool is_valid_utf8(const std::string& s);

// A short content hash of the case (hex), used to name corpus files.
std::string case_digest(const Case& c);

}  // namespace gatecheck
