#include "case_json.h"

#include "case_json_fields.h"
#include "case_snapshot.h"
#include "fnv1a.h"
#include "scale_json.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <type_traits>
#include <vector>

namespace gatecheck {

using nlohmann::json;
using json_fields::fail;
using json_fields::field;
using json_fields::shape_field;

namespace {


std::string hex_row(const HostTensor& t, int64_t r) {
  static const char* digits = "0123456789abcdef";
  const int width = dtype_size(t.dtype) * 2;
  std::string s;
  s.reserve(size_t(t.cols * (width + 1)));
  for (int64_t j = 0; j < t.cols; ++j) {
    if (j) s.push_back(' ');
    const uint32_t b = t.bits(r * t.cols + j);
    for (int k = width - 1; k >= 0; --k) s.push_back(digits[(b >> (4 * k)) & 0xf]);
  }
  return s;
}

json tensor_json(const HostTensor& t) {
  json rows = json::array();
  for (int64_t r = 0; r < t.rows; ++r) rows.push_back(hex_row(t, r));
  return rows;
}

int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

void parse_tensor(const json& j, const char* name, HostTensor* t, const std::string& origin) {
  if (!j.contains(name)) fail(origin, std::string("missing field '") + name + "'");
  const json& rows = j.at(name);
  if (!rows.is_array()) fail(origin, std::string("'") + name + "' must be an array of hex row strings");
  if (int64_t(rows.size()) != t->rows)
    fail(origin, std::string("'") + name + "' has " + std::to_string(rows.size()) + " rows, expected " +
                     std::to_string(t->rows));
  const int width = dtype_size(t->dtype) * 2;
  for (int64_t r = 0; r < t->rows; ++r) {
    const json& row = rows[size_t(r)];
    if (!row.is_string()) fail(origin, std::string(name) + "[" + std::to_string(r) + "] is not a string");
    const std::string& s = row.get_ref<const std::string&>();
    int64_t col = 0;
    size_t i = 0;
    while (i < s.size()) {
      if (s[i] == ' ') { ++i; continue; }
      uint32_t b = 0;
      int n = 0;
      for (; i < s.size() && s[i] != ' '; ++i, ++n) {
        const int d = hex_digit(s[i]);
        if (d < 0 || n >= width)
          fail(origin, std::string(name) + "[" + std::to_string(r) + "] element " + std::to_string(col) +
                           " is not " + std::to_string(width) + " hex digits");
        b = (b << 4) | uint32_t(d);
      }
      if (n != width)
        fail(origin, std::string(name) + "[" + std::to_string(r) + "] element " + std::to_string(col) +
                         " has " + std::to_string(n) + " hex digits, expected " + std::to_string(width) + " for " +
                         dtype_name(t->dtype));
      if (col >= t->cols)
        fail(origin, std::string(name) + "[" + std::to_string(r) + "] has more than " + std::to_string(t->cols) +
                         " elements");
      t->set_bits(r * t->cols + col, b);
      ++col;
    }
    if (col != t->cols)
      fail(origin, std::string(name) + "[" + std::to_string(r) + "] has " + std::to_string(col) +
                       " elements, expected " + std::to_string(t->cols));
  }
}

// The failure record and the note, in every kind of file.
void read_provenance(const json& j, CaseFile* out, const std::string& origin) {
  CaseFile& f = *out;
  if (j.contains("failure")) {
    const json& r = j.at("failure");
    if (!r.is_object()) fail(origin, "'failure' must be an object");
    FailureRecord rec;
    rec.impl = field<std::string>(r, "impl", origin);
    rec.device = r.contains("device") ? field<std::string>(r, "device", origin) : "cpu";
    if (!is_device_name(rec.device))
      fail(origin, "failure 'device' is '" + rec.device + "'; expected \"cpu\" or \"cuda\"");
    rec.property = field<std::string>(r, "property", origin);
    rec.claimed = r.contains("claimed") ? field<bool>(r, "claimed", origin) : true;
    rec.message = r.contains("message") ? field<std::string>(r, "message", origin) : "";
    rec.repro = r.contains("repro") ? field<std::string>(r, "repro", origin) : "";
    rec.evidence = r.contains("evidence") ? field<std::string>(r, "evidence", origin) : "";
    f.failure = rec;
  }
  if (j.contains("note")) f.note = field<std::string>(j, "note", origin);
}

}  // namespace

bool is_valid_utf8(const std::string& s) {
  try {
    (void)json(s).dump();  // the strict error handler throws on invalid UTF-8
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

namespace {
// The op's scalars, each at its default unless the file sets it (a version-2
// file of an op with scalars must have the field).
std::vector<double> read_scalars(const json& j, const OpSchema& op, int version, const std::string& origin) {
  std::vector<double> scalars;
  for (const auto& s : op.scalars) scalars.push_back(s.default_value);
  if (j.contains("scalars")) {
    const json& s = j.at("scalars");
    if (!s.is_object()) fail(origin, "'scalars' must be an object");
    for (const auto& kv : s.items()) {
      const int k = op.scalar_index(kv.key());
      if (k < 0) fail(origin, "'scalars' names '" + kv.key() + "', which " + op.name + " does not have");
      if (!kv.value().is_number()) fail(origin, "scalar '" + kv.key() + "' is not a number");
      scalars[size_t(k)] = kv.value().get<double>();  // its domain is the contract's business: files may hold bad input
    }
  } else if (!op.scalars.empty() && version >= 2) {
    fail(origin, std::string("missing field 'scalars' (") + op.name + " has " + std::to_string(op.scalars.size()) + ")");
  }
  return scalars;
}
}  // namespace

std::string case_to_json(const CaseFile& f) {
  const Case& c = f.c;
  json j;
  j["format"] = "gatecheck-case";
  // Version 1 is gate_residual's, naming no op; every other op's file is
  // version 2 and names its op (a version-1 file reads as gate_residual).
  const OpSchema* op = f.scale ? f.scale->spec.op : c.op;
  const bool names_op = op != &gate_residual_schema();
  j["version"] = names_op ? kCaseFormatVersion : 1;
  if (names_op) j["op"] = op->name;
  j["dtype"] = dtype_name(f.scale ? f.scale->spec.dtype : c.dtype);
  if (f.scale) {  // a scale-tier case: its spec and view, never values (scale_json.h)
    const ScaleShape v = view_shape(f.scale->spec, f.scale->view);
    j["rows"] = v.rows;
    j["dim"] = v.dim;
    j["gates"] = v.gates;
    j["scale"] = scale_to_json(f.scale->spec, f.scale->view);
  } else {
    j["rows"] = c.rows;
    j["dim"] = c.dim;
    j["gates"] = c.gates;
  }
  if (!c.index_pattern.empty()) j["index_pattern"] = c.index_pattern;
  if (!c.value_class.empty()) j["value_class"] = c.value_class;
  if (f.scale) {
    // nothing else: the spec and view are the case
  } else if (f.spec) {
    const CaseSpec& s = *f.spec;
    j["generator"] = {{"index_pattern", s.index_pattern}, {"value_class", s.value_class},
                      {"plan_kind", s.plan_kind},         {"index_seed", s.index_seed},
                      {"value_seed", s.value_seed},       {"plan_seed", s.plan_seed}};
  } else {
    j["index"] = c.index;
    size_t k = 0;
    for (const auto& in : c.op->inputs)
      if (in.role != Role::index) j[in.name] = tensor_json(c.inputs[k++]);
  }
  const std::vector<double>& scalars = f.scale ? f.scale->spec.scalars : c.scalars;
  if (!op->scalars.empty() && scalars.size() == op->scalars.size()) {
    json s = json::object();
    for (size_t i = 0; i < op->scalars.size(); ++i) s[op->scalars[i].name] = scalars[i];
    j["scalars"] = s;
  }
  if (c.plan) j["plan"] = {{"kind", c.plan->kind}, {"batches", c.plan->batches}, {"repeats", c.plan->repeats}};
  if (f.failure) {
    const FailureRecord& r = *f.failure;
    j["failure"] = {{"impl", r.impl},       {"device", r.device}, {"property", r.property},
                    {"claimed", r.claimed}, {"message", r.message}, {"repro", r.repro}};
    if (!r.evidence.empty()) j["failure"]["evidence"] = r.evidence;
  }
  if (!f.note.empty()) j["note"] = f.note;
  // Strings may hold any bytes (a plugin's error message, a snapshot's
  // fields): invalid UTF-8 becomes U+FFFD instead of an exception.
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

CaseFile case_from_json(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
    fail(origin, std::string("not valid JSON (truncated or corrupt?): ") + e.what());
  }
  if (!j.is_object()) fail(origin, "top level must be a JSON object");
  if (field<std::string>(j, "format", origin) != "gatecheck-case")
    fail(origin, "format is not \"gatecheck-case\"");
  const int version = field<int>(j, "version", origin);
  if (version < 1 || version > kCaseFormatVersion)
    fail(origin, "format version " + std::to_string(version) + " is not supported (this gatecheck reads versions 1 to " +
                     std::to_string(kCaseFormatVersion) + ")");
  const OpSchema* op = &gate_residual_schema();  // version 1 names no op: it is gate_residual's
  if (version >= 2) {
    const std::string name = field<std::string>(j, "op", origin);
    op = find_op_schema(name);
    if (!op) fail(origin, "'op' is " + unknown_op(name));
  } else if (j.contains("op") && !(j.at("op").is_string() && j.at("op").get_ref<const std::string&>() == op->name)) {
    // A version-1 file is gate_residual's: an edited version, not another op's tensors, is what to say
    fail(origin, "'op' is " + j.at("op").dump() + " in a version-1 file, which holds a " + op->name +
                     " case (a file of another op is version " + std::to_string(kCaseFormatVersion) + ")");
  }
  DType t;
  const std::string dt = field<std::string>(j, "dtype", origin);
  if (!parse_dtype(dt.c_str(), &t)) fail(origin, "dtype '" + dt + "' is not bf16, f16 or f32");
  const int64_t rows = shape_field(j, "rows", origin), dim = shape_field(j, "dim", origin),
                gates = shape_field(j, "gates", origin);
  CaseFile f;
  // A scale-tier case: its own limits, no values (scale_json.h). Its "scale"
  // is an object; an op's tensor of that name (rmsnorm_modulate's) is an array.
  if (j.contains("scale") && j.at("scale").is_object()) {
    f.c.op = op;
    f.scale = scale_from_json(j.at("scale"), *op, read_scalars(j, *op, version, origin), t, rows, dim, gates, origin);
    read_provenance(j, &f, origin);
    return f;
  }
  const int64_t n = checked_elements(rows, dim), ng = checked_elements(gates, dim);
  if (rows > kMaxCaseRows || gates > kMaxCaseRows)
    fail(origin, "shape rows=" + std::to_string(rows) + " gates=" + std::to_string(gates) + " exceeds the limit of " +
                     std::to_string(kMaxCaseRows) + " rows and gates");
  if (n < 0 || n > kMaxCaseElements || ng < 0 || ng > kMaxCaseElements)
    fail(origin, "shape rows=" + std::to_string(rows) + " dim=" + std::to_string(dim) + " gates=" +
                     std::to_string(gates) + " exceeds the " + std::to_string(kMaxCaseElements) +
                     "-element limit per tensor");
  if (const std::string why = case_shape_problem(*op, rows, dim, gates); !why.empty()) fail(origin, why);
  const std::vector<double> scalars = read_scalars(j, *op, version, origin);

  if (j.contains("generator")) {
    const json& g = j.at("generator");
    if (!g.is_object()) fail(origin, "'generator' must be an object");
    CaseSpec s;
    s.op = op;
    s.dtype = t;
    s.rows = rows;
    s.dim = dim;
    s.gates = gates;
    s.index_pattern = field<std::string>(g, "index_pattern", origin);
    s.value_class = field<std::string>(g, "value_class", origin);
    s.plan_kind = field<std::string>(g, "plan_kind", origin);
    s.index_seed = field<uint64_t>(g, "index_seed", origin);
    s.value_seed = field<uint64_t>(g, "value_seed", origin);
    s.plan_seed = field<uint64_t>(g, "plan_seed", origin);
    try {
      f.c = make_case_from_spec(s);
    } catch (const std::exception& e) {
      fail(origin, std::string("generator: ") + e.what());
    }
    f.spec = s;
  } else {
    // Check the row counts before allocating, so the file's own size bounds what we allocate.
    for (const auto& in : op->inputs) {
      if (in.role == Role::index) continue;
      const char* name = in.name;
      const int64_t want = role_rows(in.role, rows, gates);
      if (!j.contains(name)) fail(origin, std::string("missing field '") + name + "'");
      if (!j.at(name).is_array() || int64_t(j.at(name).size()) != want)
        fail(origin, std::string("'") + name + "' must be an array of " + std::to_string(want) + " hex row strings");
      if (want > 0 && dim > 0 && j.at(name)[0].is_string() &&
          int64_t(j.at(name)[0].get_ref<const std::string&>().size()) < dim * dtype_size(t) * 2)
        fail(origin, std::string("'") + name + "' row 0 is too short for dim = " + std::to_string(dim));
    }
    f.c = make_case(*op, t, rows, dim, gates);
    const auto index = field<std::vector<int64_t>>(j, "index", origin);
    if (int64_t(index.size()) != rows)
      fail(origin, "'index' has " + std::to_string(index.size()) + " entries, expected rows = " + std::to_string(rows));
    f.c.index = index;  // range is not checked here: corpus files may hold bad input on purpose
    size_t k = 0;
    for (const auto& in : op->inputs)
      if (in.role != Role::index) parse_tensor(j, in.name, &f.c.inputs[k++], origin);
  }
  if (j.contains("scalars") || !f.spec) f.c.scalars = scalars;  // a spec draws its own unless the file says
  if (j.contains("index_pattern")) f.c.index_pattern = field<std::string>(j, "index_pattern", origin);
  if (j.contains("value_class")) f.c.value_class = field<std::string>(j, "value_class", origin);
  if (j.contains("plan")) {
    const json& p = j.at("plan");
    if (!p.is_object()) fail(origin, "'plan' must be an object");
    BatchPlan plan;
    plan.kind = field<std::string>(p, "kind", origin);
    plan.batches = field<std::vector<std::vector<int64_t>>>(p, "batches", origin);
    plan.repeats = p.contains("repeats") ? field<int>(p, "repeats", origin) : 0;
    if (plan.repeats < 0 || plan.repeats > kMaxPlanRepeats)  // the snapshot reader's limit too
      fail(origin, "plan 'repeats' is " + std::to_string(plan.repeats) + ", outside [0, " +
                       std::to_string(kMaxPlanRepeats) + "]");
    for (size_t b = 0; b < plan.batches.size(); ++b)
      for (int64_t r : plan.batches[b])
        if (r < 0 || r >= rows)
          fail(origin, "plan batch " + std::to_string(b) + " names row " + std::to_string(r) +
                           ", outside [0, " + std::to_string(rows) + ")");
    f.c.plan = plan;
  }
  read_provenance(j, &f, origin);
  return f;
}

CaseFile read_case_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CaseFileError(path + ": cannot be opened");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  if (is_case_snapshot(bytes)) return case_from_snapshot(bytes, path);
  if (bytes.empty()) throw CaseFileError(path + ": the file is empty");
  // A binary snapshot cut short before its header (or another binary file under a snapshot's
  // name): JSON's parse error would only say 'syntax error at line 1'. (An in-flight snapshot
  // of a scale case is JSON, so the name alone does not decide.)
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  const bool json_like = first != std::string::npos && (bytes[first] == '{' || bytes[first] == '[');
  const bool snapshot_name = path.size() >= 9 && path.compare(path.size() - 9, 9, ".snapshot") == 0;
  const bool header_cut = bytes.size() < sizeof kSnapshotMagic &&
                          std::memcmp(bytes.data(), kSnapshotMagic, bytes.size()) == 0;
  if (header_cut || (snapshot_name && !json_like))
    throw CaseFileError(path + ": not a gatecheck snapshot (truncated or corrupt: a snapshot starts with " +
                        std::string(kSnapshotMagic, sizeof kSnapshotMagic) + ", a corpus file is JSON)");
  return case_from_json(bytes, path);
}

namespace {
// Writes the file's JSON to `target`, its errors (a full disk at the flush or the close) named
// by `path`.
void write_json_to(const std::string& target, const std::string& path, const CaseFile& f) {
  std::ofstream out(target, std::ios::binary | std::ios::trunc);
  if (!out) throw CaseFileError(path + ": cannot be written");
  out << case_to_json(f);
  out.close();
  if (!out) throw CaseFileError(path + ": write failed (" + std::strerror(errno) + ")");
}
}  // namespace

void write_case_file(const std::string& path, const CaseFile& f) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw CaseFileError(path + ": is a folder");
    // A device or FIFO (/dev/stdout, a pipe) is written in place: a rename onto it would replace
    // the node itself with a file.
    write_json_to(path, path, f);
    return;
  }
  const std::string tmp = path + ".tmp";  // a crash mid-write leaves the old file whole
  write_json_to(tmp, path, f);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw CaseFileError(path + ": rename failed (" + why + ")");
  }
}

std::string case_digest(const Case& c) {
  // FNV-1a over the semantic content; stable across runs and machines.
  uint64_t h = kFnv1aOffset;
  auto mix = [&](const void* p, size_t n) { h = fnv1a(p, n, h); };
  const int32_t dt = int32_t(c.dtype);
  mix(&dt, sizeof dt);
  mix(&c.rows, sizeof c.rows);
  mix(&c.dim, sizeof c.dim);
  mix(&c.gates, sizeof c.gates);
  mix(c.index.data(), c.index.size() * sizeof(int64_t));
  for (const HostTensor& t : c.inputs) mix(t.bytes.data(), t.bytes.size());
  for (double s : c.scalars) mix(&s, sizeof s);
  if (c.plan)
    for (const auto& b : c.plan->batches) mix(b.data(), b.size() * sizeof(int64_t));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace gatecheck
