#include "case_snapshot.h"

#include <cstring>

namespace gatecheck {

namespace {
struct Writer {
  std::string out;
  void raw(const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void str(const std::string& s) { i64(int64_t(s.size())); raw(s.data(), s.size()); }
};

struct Reader {
  const std::string& in;
  const std::string& origin;
  size_t pos = 0;
  [[noreturn]] void fail(const std::string& what) const {
    throw CaseFileError(origin + ": snapshot " + what + " (at byte " + std::to_string(pos) + ")");
  }
  void raw(void* p, size_t n) {
    if (n > in.size() - pos) fail("is truncated");
    if (n) std::memcpy(p, in.data() + pos, n);  // an empty tensor's data() may be null
    pos += n;
  }
  int64_t i64() { int64_t v; raw(&v, sizeof v); return v; }
  int64_t count(int64_t max, const char* what) {
    const int64_t v = i64();
    if (v < 0 || v > max) fail(std::string("has a bad ") + what + " (" + std::to_string(v) + ")");
    return v;
  }
  std::string str() {
    const int64_t n = i64();
    if (n < 0 || uint64_t(n) > in.size() - pos) fail("is truncated (string of " + std::to_string(n) + " bytes)");
    std::string s(in.data() + pos, size_t(n));
    pos += size_t(n);
    return s;
  }
  // A name of the case (plan kind, index pattern, value class): valid UTF-8,
  // so that the case survives a JSON round trip (found by fuzz_corpus_file).
  std::string name(const char* what) {
    std::string s = str();
    if (!is_valid_utf8(s)) fail(std::string("has a ") + what + " that is not valid UTF-8");
    return s;
  }
};
}  // namespace

std::string case_to_snapshot(const CaseFile& f) {
  // A scale-tier case is its spec and view, a few hundred bytes: the JSON is
  // as cheap, and read_case_file() takes either.
  if (f.scale) return case_to_json(f);
  const Case& c = f.c;
  Writer w;
  w.raw(kSnapshotMagic, sizeof kSnapshotMagic);
  w.str(c.op->name);
  w.i64(int64_t(c.dtype));
  w.i64(c.rows);
  w.i64(c.dim);
  w.i64(c.gates);
  w.raw(c.index.data(), c.index.size() * sizeof(int64_t));
  for (const HostTensor& t : c.inputs) w.raw(t.bytes.data(), t.bytes.size());
  w.i64(int64_t(c.scalars.size()));
  w.raw(c.scalars.data(), c.scalars.size() * sizeof(double));
  w.i64(c.plan ? 1 : 0);
  if (c.plan) {
    w.str(c.plan->kind);
    w.i64(c.plan->repeats);
    w.i64(int64_t(c.plan->batches.size()));
    for (const auto& b : c.plan->batches) {
      w.i64(int64_t(b.size()));
      w.raw(b.data(), b.size() * sizeof(int64_t));
    }
  }
  const FailureRecord r = f.failure.value_or(FailureRecord{});
  w.i64(f.failure ? 1 : 0);
  for (const std::string* s : {&r.impl, &r.device, &r.property, &r.message, &r.repro}) w.str(*s);
  w.str(c.index_pattern);
  w.str(c.value_class);
  return w.out;
}

namespace {
bool has_magic(const std::string& bytes, const char (&magic)[8]) {
  return bytes.size() >= sizeof magic && std::memcmp(bytes.data(), magic, sizeof magic) == 0;
}
}  // namespace

bool is_case_snapshot(const std::string& bytes) {
  return has_magic(bytes, kSnapshotMagic) || has_magic(bytes, kSnapshotMagicV1);
}

CaseFile case_from_snapshot(const std::string& bytes, const std::string& origin) {
  if (!is_case_snapshot(bytes)) throw CaseFileError(origin + ": not a gatecheck snapshot");
  Reader rd{bytes, origin};
  rd.pos = sizeof kSnapshotMagic;
  const OpSchema* op = &gate_residual_schema();
  if (has_magic(bytes, kSnapshotMagic)) {
    const std::string name = rd.name("op name");
    op = find_op_schema(name);
    if (!op) rd.fail("names " + unknown_op(name));
  }
  const int64_t dt = rd.i64();
  if (dt < 0 || dt > 2) rd.fail("has an unknown dtype " + std::to_string(dt));
  const int64_t rows = rd.count(kMaxCaseRows, "row count"), dim = rd.count(kMaxCaseElements, "dim"),
                gates = rd.count(kMaxCaseRows, "gate count");
  if (const std::string why = case_shape_problem(*op, rows, dim, gates); !why.empty()) rd.fail("holds a " + why);
  const int64_t n = checked_elements(rows, dim), ng = checked_elements(gates, dim);
  const int64_t esz = dtype_size(DType(dt));
  if (n < 0 || ng < 0 || n > kMaxCaseElements || ng > kMaxCaseElements) rd.fail("describes too large a case");
  uint64_t tensor_bytes = 0;  // every input's, before any is allocated
  for (const auto& in : op->inputs)
    if (in.role != Role::index) tensor_bytes += uint64_t(role_rows(in.role, rows, gates) * dim * esz);
  if (uint64_t(rows * 8) + tensor_bytes > bytes.size() - rd.pos) rd.fail("is truncated");
  CaseFile f;
  f.c = make_case(*op, DType(dt), rows, dim, gates);
  rd.raw(f.c.index.data(), size_t(rows) * sizeof(int64_t));
  for (HostTensor& t : f.c.inputs) rd.raw(t.bytes.data(), t.bytes.size());
  if (has_magic(bytes, kSnapshotMagic)) {  // (version 01 had no scalars)
    const int64_t ns = rd.count(int64_t(op->scalars.size()), "scalar count");
    if (ns != int64_t(op->scalars.size())) rd.fail("holds " + std::to_string(ns) + " scalars, " + op->name + " has " +
                                                   std::to_string(op->scalars.size()));
    rd.raw(f.c.scalars.data(), size_t(ns) * sizeof(double));
  }
  if (rd.i64()) {
    BatchPlan p;
    p.kind = rd.name("plan kind");
    p.repeats = int(rd.count(kMaxPlanRepeats, "repeat count"));
    const int64_t nb = rd.i64();
    if (nb < 0 || uint64_t(nb) > (bytes.size() - rd.pos) / 8) rd.fail("is truncated (" + std::to_string(nb) + " batches)");
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t len = rd.i64();
      if (len < 0 || uint64_t(len) > (bytes.size() - rd.pos) / 8) rd.fail("is truncated (batch of " + std::to_string(len) + " rows)");
      std::vector<int64_t> rows_b(static_cast<size_t>(len));
      rd.raw(rows_b.data(), rows_b.size() * sizeof(int64_t));
      for (int64_t r : rows_b)
        if (r < 0 || r >= rows) rd.fail("plan names row " + std::to_string(r) + " outside the case");
      p.batches.push_back(std::move(rows_b));
    }
    f.c.plan = p;
  }
  const bool has_failure = rd.i64() != 0;
  FailureRecord r;
  for (std::string* s : {&r.impl, &r.device, &r.property, &r.message, &r.repro}) *s = rd.str();
  if (has_failure && !is_device_name(r.device)) rd.fail("failure device '" + r.device + "' is not cpu or cuda");
  if (has_failure) f.failure = r;
  f.c.index_pattern = rd.name("index pattern");
  f.c.value_class = rd.name("value class");
  return f;
}

}  // namespace gatecheck
