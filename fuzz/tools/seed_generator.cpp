#include "seed_generator.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "../../case/case_json.h"
#include "../../case/case_snapshot.h"
#include "../../kernels/op_schema.h"
#include "../op_target.h"

namespace gatecheck::fuzz {
namespace {

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}
void write_text(const std::string& path, const std::string& s) {
  std::ofstream f(path, std::ios::binary);
  f << s;
}

// The decoder seeds of one op's target into dir/fuzz_OP/, and a valid corpus
// file of each (pattern, dtype) into file_dir; returns {decoder seeds, files}.
std::pair<int, int> write_op_seeds(const std::string& dir, const std::string& file_dir, const OpSchema& op,
                                   int json_n) {
  const std::string gate_dir = dir + "/fuzz_" + op.name;
  std::filesystem::create_directories(gate_dir);
  const DecodeLimits lim;
  // Random inputs from a fixed splitmix64 stream; keep one per new
  // (pattern, dtype), (value class, dtype) and (plan, dtype), small cases only.
  std::set<std::string> seen;
  uint64_t s = 0x5eed5eed5eed5eedull;
  auto next = [&s] {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  int n = 0;
  const int json_first = json_n;
  for (int attempt = 0; attempt < 200000; ++attempt) {
    std::vector<uint8_t> bytes(size_t(24 + next() % 40));
    for (auto& b : bytes) b = uint8_t(next());
    DecodeInfo info;
    const Case c = decode_case(op, bytes.data(), bytes.size(), lim, &info);
    if (c.rows > 40) continue;  // seeds stay quick; the fuzzer grows them
    const std::string t = dtype_name(c.dtype);
    const std::string keys[] = {"p:" + info.spec.index_pattern + t, "v:" + info.spec.value_class + t,
                                "k:" + plan_choice_name(info.plan) + t};
    bool fresh = false;
    for (const auto& k : keys) fresh = seen.insert(k).second || fresh;
    if (!fresh) continue;
    write_bytes(gate_dir + "/seed-" + std::to_string(n++), bytes);
    // Every (pattern, dtype) also as a valid corpus file.
    if (seen.count("json:" + keys[0]) == 0 && c.rows <= 17 && c.dim <= 9) {
      seen.insert("json:" + keys[0]);
      CaseFile f;
      f.c = c;
      write_text(file_dir + "/seed-" + std::to_string(json_n++), case_to_json(f));
    }
  }
  return {n, json_n - json_first};
}

}  // namespace

int write_seeds(const std::string& dir) {
  const std::string file_dir = dir + "/fuzz_corpus_file";
  std::filesystem::create_directories(file_dir);
  // Each op's target in the catalog's order, each from the same fixed stream
  // (the first op's corpus-file seeds come first).
  int n = 0, json_n = 0;
  for (const OpSchema* op : op_schemas()) {
    const auto [seeds, files] = write_op_seeds(dir, file_dir, *op, json_n);
    n += seeds;
    json_n += files;
  }
  // A generator spec, a failure record, and corruptions that must be rejected cleanly.
  CaseFile spec;
  spec.spec = CaseSpec{op_schemas().front(), DType::bf16, 300, 8, 9, "sorted_equal", "normal", "partition", 7, 8, 9};
  spec.c = make_case_from_spec(*spec.spec);
  write_text(file_dir + "/seed-spec", case_to_json(spec));
  CaseFile failed;
  failed.c = decode_input(nullptr, 0);
  failed.failure = FailureRecord{"host", "cpu", "row_invariance", "example", "gatecheck repro x.json --impl host", true, ""};
  const std::string good = case_to_json(failed);
  write_text(file_dir + "/seed-failure", good);
  write_text(file_dir + "/seed-truncated", good.substr(0, good.size() / 2));
  std::string wrong_version = good;
  wrong_version.replace(wrong_version.find("\"version\": 1"), 12, "\"version\": 99");
  write_text(file_dir + "/seed-wrong-version", wrong_version);
  write_text(file_dir + "/seed-huge-shape",
             R"({"format":"gatecheck-case","version":1,"dtype":"f32","rows":9223372036854775807,"dim":2,"gates":1,"index":[],"res":[],"gate":[],"y":[],"grad_out":[]})");
  // Found by fuzz_corpus_file: a number too large for a double made the JSON
  // library throw out_of_range, which escaped case_from_json.
  std::string overflow = good;
  overflow.replace(overflow.find("\"version\": 1"), 12, "\"version\": 1e400");
  write_text(file_dir + "/seed-number-overflow", overflow);
  // The binary in-flight snapshot form, whole and truncated.
  const std::string snap = case_to_snapshot(failed);
  write_text(file_dir + "/seed-snapshot", snap);
  write_text(file_dir + "/seed-snapshot-truncated", snap.substr(0, snap.size() - 3));
  // Found by fuzz_corpus_file: a snapshot string with invalid UTF-8 made
  // case_to_json throw.
  CaseFile odd = failed;
  odd.failure->message = "bad bytes \x97\xff";
  write_text(file_dir + "/seed-snapshot-invalid-utf8", case_to_snapshot(odd));
  return n + json_n + 9;
}

}  // namespace gatecheck::fuzz
