// A fuzz target's findings go through the findings service: a failure found in
// a target's run (the planted plugin of GATECHECK_FUZZ_IMPL on the committed
// crash input, GATECHECK_TEST_CRASH_INPUT) is saved under the service's name
// (failure_file_path: IMPL-PROPERTY-DIGEST.json) with the service's failure
// record and repro line, whatever the op.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "case/case_json.h"
#include "findings/failure_files.h"
#include "findings/repro_command.h"
#include "fuzz/op_target.h"

namespace gatecheck::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> crash_input() {
  const char* path = std::getenv("GATECHECK_TEST_CRASH_INPUT");
  if (!path) return {};
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(FuzzSave, AFailureIsSavedUnderTheFindingsServicesNameWithItsRecord) {
  const std::vector<uint8_t> bytes = crash_input();
  ASSERT_FALSE(bytes.empty()) << "GATECHECK_TEST_CRASH_INPUT names no readable input";
  const auto found = run_fuzz_input(bytes.data(), bytes.size());
  ASSERT_FALSE(found.empty()) << "the planted plugin passed the crash input";
  const Case c = decode_input(bytes.data(), bytes.size());
  char t[] = "/tmp/gatecheck-fuzz-save-XXXXXX";
  const std::string dir = ::mkdtemp(t);
  for (const auto& f : found) {
    const std::string path = save_failure(dir, c, f);
    const std::string impl = split_spec(f.spec).name;
    const Verdict& v = f.failure.verdict;
    EXPECT_EQ(path, failure_file_path(dir, "", impl, v.property, case_digest(c)));
    const CaseFile file = read_case_file(path);
    EXPECT_EQ(case_digest(file.c), case_digest(c));
    ASSERT_TRUE(file.failure);
    EXPECT_EQ(file.failure->impl, impl);
    EXPECT_EQ(file.failure->device, device_name(f.device));
    EXPECT_EQ(file.failure->property, v.property);
    EXPECT_EQ(file.failure->message, v.message);
    EXPECT_EQ(file.failure->evidence, evidence_text(v));
    EXPECT_EQ(file.failure->repro, repro_command(path, impl, f.device, v));
    EXPECT_NE(file.note.find("signature " + f.failure.signature), std::string::npos) << file.note;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gatecheck::fuzz
