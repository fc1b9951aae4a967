// fuzz_corpus_file: the corpus file readers (JSON, and the binary in-flight
// snapshot) and the Case decoder under ASan and UBSan. Any input must either
// parse or raise CaseFileError: no crash, hang or unbounded allocation. What
// parses must round-trip exactly through its writer, and whatever the decoder
// makes of the same bytes must round-trip through both formats.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../case/case_json.h"
#include "../case/case_snapshot.h"
#include "op_target.h"

using namespace gatecheck;

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_corpus_file: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void round_trip(const CaseFile& f, const char* source) {
  const std::string text = case_to_json(f);
  CaseFile back;
  try {
    back = case_from_json(text, "<round trip>");
  } catch (const CaseFileError& e) {
    fail(source, std::string("case_to_json wrote a file case_from_json rejects: ") + e.what() + "\n" + text);
  }
  if (!(back.c == f.c)) fail(source, "case changed in a JSON round trip:\n" + text);
  try {
    back = case_from_snapshot(case_to_snapshot(f), "<snapshot round trip>");
  } catch (const CaseFileError& e) {
    fail(source, std::string("case_to_snapshot wrote a snapshot case_from_snapshot rejects: ") + e.what());
  }
  if (!(back.c == f.c)) fail(source, "case changed in a snapshot round trip:\n" + text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const CaseFile f = is_case_snapshot(text) ? case_from_snapshot(text, "<fuzz input>")
                                              : case_from_json(text, "<fuzz input>");
    if (f.scale) {  // a scale spec and view: they must round-trip exactly
      CaseFile back;
      try {
        back = case_from_json(case_to_json(f), "<round trip>");
      } catch (const CaseFileError& e) {
        fail("a parsed scale file", std::string("case_to_json wrote a file case_from_json rejects: ") + e.what());
      }
      if (!back.scale || !(back.scale->spec == f.scale->spec) || !(back.scale->view == f.scale->view))
        fail("a parsed scale file", "scale spec or view changed in a JSON round trip:\n" + case_to_json(f));
    } else if (!f.spec) {
      round_trip(f, "a parsed file");
    }
  } catch (const CaseFileError&) {
    // the documented outcome for bad input
  }
  CaseFile decoded;
  decoded.c = fuzz::decode_input(data, size);
  round_trip(decoded, "a decoded case");
  return 0;
}
