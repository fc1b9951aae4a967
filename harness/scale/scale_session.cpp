#include "scale_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "../../oracles/exact_expected.h"
#include "../run/split_runner.h"

namespace gatecheck {

namespace {

std::string gib(uint64_t bytes) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << double(bytes) / double(uint64_t(1) << 30) << " GiB";
  return s.str();
}

uint32_t element_bits(const std::vector<uint8_t>& bytes, size_t es) {
  uint32_t b = 0;
  for (size_t i = 0; i < es; ++i) b |= uint32_t(bytes[i]) << (8 * i);
  return b;
}

// Room left beside a session for the implementation's own scratch.
uint64_t headroom(Device d, uint64_t need) { return (d == Device::cuda ? uint64_t(2) << 30 : uint64_t(1) << 30) + need / 20; }

}  // namespace

std::string scale_output_name(const ScaleCase& c, ScaleOutput o) { return c.op().outputs.at(size_t(o)).name; }

ScaleSession::ScaleSession(const Implementation& impl, const ScaleCase& c, int output_sets, uint64_t memory_budget)
    : impl_(impl), c_(c) {
  if (output_sets < 1 || output_sets > 2) throw std::invalid_argument("ScaleSession: 1 or 2 output sets");
  max_rows_ = c.rows;
  if (c.plan)
    for (const auto& b : c.plan->batches) max_rows_ = std::max<int64_t>(max_rows_, int64_t(b.size()));
  es_ = size_t(dtype_size(c.dtype));
  const size_t buffers = c.op().inputs.size() + size_t(output_sets) * c.op().outputs.size();
  const uint64_t need = scale_case_bytes(c.op(), c.dtype, max_rows_, c.dim, c.gates, output_sets) + (buffers + 3) * 2 * kGuardBytes;
  if (memory_budget > 0 && need > memory_budget)
    throw ScaleNoMemory("needs " + gib(need) + ", over the scale tier's memory budget of " + gib(memory_budget));
  const uint64_t free_b = scale_free_bytes(impl.device);
  if (free_b < need + headroom(impl.device, need))
    throw ScaleNoMemory("needs " + gib(need) + " and " + gib(headroom(impl.device, need)) + " to spare, " + gib(free_b) +
                        " free on the " + device_name(impl.device));
  backend_ = impl.device == Device::cuda ? make_device_scale_backend() : make_host_scale_backend();
  try {
    auto bytes = [&](Role r) {
      return r == Role::index ? size_t(max_rows_) * 8
                              : size_t(role_rows(r, max_rows_, c.gates)) * size_t(role_cols(r, c.dim)) * es_;
    };
    for (const auto& in : c.op().inputs) {
      if (in.role == Role::index) index_at_ = inputs_.size();
      inputs_.push_back(make_buffer(in.name, bytes(in.role)));
    }
    outputs_.resize(size_t(output_sets));
    for (auto& set : outputs_)
      for (const auto& out : c.op().outputs) set.push_back(make_buffer(out.name, bytes(out.role)));
    std::vector<int64_t> cols(size_t(c.dim)), gates(size_t(c.gates));
    for (int64_t j = 0; j < c.dim; ++j) cols[size_t(j)] = c.orig_col(j);
    for (int64_t k = 0; k < c.gates; ++k) gates[size_t(k)] = c.orig_gate(k);
    col_map_ = backend_->alloc(std::max<size_t>(cols.size(), 1) * 8);
    gate_map_ = backend_->alloc(std::max<size_t>(gates.size(), 1) * 8);
    upload_i64(col_map_, cols);
    upload_i64(gate_map_, gates);
    zero_map_ = backend_->alloc(8);
    upload_i64(zero_map_, {0});
  } catch (...) {
    release_all();
    throw;
  }
  set_rows_.assign(size_t(output_sets), 0);
  set_batch_.resize(size_t(output_sets));
}

ScaleSession::~ScaleSession() { release_all(); }

void ScaleSession::release_all() {
  if (!backend_) return;
  for (auto& b : inputs_)
    if (b.base) backend_->release(b.base), b.base = nullptr;
  for (auto& set : outputs_)
    for (auto& b : set)
      if (b.base) backend_->release(b.base), b.base = nullptr;
  for (void** p : {&col_map_, &gate_map_, &zero_map_, &scratch_[0], &scratch_[1], &scratch_[2], &scratch_[3]})
    if (*p) backend_->release(*p), *p = nullptr;
  backend_.reset();
}

ScaleSession::Buffer ScaleSession::make_buffer(const char* name, size_t bytes) {
  Buffer b;
  b.name = name;
  b.bytes = bytes;
  b.base = static_cast<uint8_t*>(backend_->alloc(bytes + 2 * kGuardBytes));
  backend_->fill_bytes(b.base, kCanaryByte, bytes + 2 * kGuardBytes);
  return b;
}

// The implementation is given `used` bytes; the rest up to the end of the
// trailing guard holds canaries, so a write past the end of a shorter batch
// is seen too. Both guards are refilled, so each run's check is its own.
void ScaleSession::set_used(Buffer& b, size_t used) {
  backend_->fill_bytes(b.base, kCanaryByte, kGuardBytes);
  backend_->fill_bytes(static_cast<uint8_t*>(b.ptr()) + used, kCanaryByte, b.bytes - used + kGuardBytes);
  b.used = used;
}

void ScaleSession::upload_i64(void* dst, const std::vector<int64_t>& v) {
  backend_->upload(dst, v.data(), v.size() * 8);
}

void* ScaleSession::scratch_i64(size_t n, int which) {
  if (scratch_n_[which] < n || !scratch_[which]) {
    if (scratch_[which]) backend_->release(scratch_[which]);
    scratch_[which] = backend_->alloc(std::max<size_t>(n, 1) * 8);
    scratch_n_[which] = std::max<size_t>(n, 1);
  }
  return scratch_[which];
}

ScaleGeom ScaleSession::geom(int64_t rows, const void* row_map, const void* gate_of_row) const {
  ScaleGeom g;
  g.rows = rows;
  g.dim = c_.dim;
  g.orig_dim = c_.spec.dim;
  g.row_map = static_cast<const int64_t*>(row_map);
  g.col_map = static_cast<const int64_t*>(col_map_);
  g.gate_of_row = static_cast<const int64_t*>(gate_of_row);
  return g;
}

ScaleGeom ScaleSession::input_geom(size_t i, int64_t n, const void* row_map) const {
  switch (c_.op().inputs[i].role) {
    case Role::table: return geom(c_.gates, gate_map_, nullptr);
    case Role::column: return geom(1, zero_map_, nullptr);  // position 0 * orig_dim + col
    default: return geom(n, row_map, nullptr);
  }
}

const ScaleSession::Buffer& ScaleSession::output_buffer(int set, ScaleOutput o) const {
  return outputs_.at(size_t(set)).at(size_t(o));
}

int64_t ScaleSession::output_rows(int set, ScaleOutput o) const {
  const Role r = output_role(o);
  return r == Role::row ? set_rows_.at(size_t(set)) : role_rows(r, 0, c_.gates);
}

namespace {

// Runs body, a harness error (not the implementation's) becoming a Status.
template <class Body>
Status guarded(Body body) {
  try {
    return body();
  } catch (const ScaleNoMemory&) {
    throw;
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {  // the harness's own CUDA calls, after the implementation's
    return Status::error(ErrorKind::implementation, std::string("harness: ") + e.what());
  }
}

}  // namespace

double ScaleCallTimes::parts_own_seconds() const {
  if (whole_rows <= 0 || part_calls <= 0) return -1;
  return std::max(0.0, part_seconds - whole_seconds * double(part_rows) / double(whole_rows));
}

template <class Body>
Status ScaleSession::timed(const std::vector<int64_t>* batch, Body body) {
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = body();
  if (times_) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t rows = batch ? int64_t(batch->size()) : c_.rows;
    if (rows == c_.rows) {
      times_->whole_seconds += s;
      times_->whole_rows += rows;
    } else {
      times_->part_seconds += s;
      times_->part_rows += rows;
      ++times_->part_calls;
    }
  }
  return st;
}

Status ScaleSession::run(int set, const std::vector<int64_t>* batch, int poison, const StressSetting& stress) {
  return timed(batch, [&] { return guarded([&] { return run_unguarded(set, batch, poison, stress); }); });
}

int64_t ScaleSession::prepare(int set, const std::vector<int64_t>* batch, int poison) {
  std::vector<int64_t> rows;
  if (batch) {
    rows = *batch;
  } else {
    rows.resize(size_t(c_.rows));
    for (int64_t r = 0; r < c_.rows; ++r) rows[size_t(r)] = r;
  }
  const int64_t n = int64_t(rows.size());
  if (n > max_rows_) throw std::invalid_argument("ScaleSession::run: a batch of " + std::to_string(n) + " rows, room for " + std::to_string(max_rows_));
  std::vector<int64_t> row_map(rows.size()), index(rows.size());
  for (size_t j = 0; j < rows.size(); ++j) {
    if (rows[j] < 0 || rows[j] >= c_.rows) throw std::invalid_argument("ScaleSession::run: row " + std::to_string(rows[j]) + " out of range");
    row_map[j] = c_.orig_row(rows[j]);
    index[j] = c_.index[size_t(rows[j])];
  }
  void* map_dev = scratch_i64(rows.size(), 0);
  upload_i64(map_dev, row_map);
  const OpSchema& op = c_.op();
  const ValueRule rule = c_.spec.rule();
  for (size_t i = 0, k = 0; i < op.inputs.size(); ++i) {  // k: the float input (its generated tensor)
    Buffer& b = inputs_[i];
    if (i == index_at_) {
      set_used(b, size_t(n) * 8);
      upload_i64(b.ptr(), index);
      continue;
    }
    const ScaleGeom g = input_geom(i, n, map_dev);
    set_used(b, size_t(g.rows) * size_t(c_.dim) * es_);
    backend_->generate(b.ptr(), c_.dtype, rule, ScaleTensor(scale_tensor_of_input(k++)), g);
  }
  auto& out = outputs_.at(size_t(set));
  const uint32_t pb = poison_bits(c_.dtype, poison);
  set_rows_[size_t(set)] = n;
  for (size_t o = 0; o < out.size(); ++o) {
    const int64_t elems = output_rows(set, int(o)) * c_.dim;
    set_used(out[o], size_t(elems) * es_);
    backend_->fill_elements(out[o].ptr(), elems, c_.dtype, pb);
  }
  const Status st = backend_->sync();
  if (!st.ok()) throw std::runtime_error("scale session: preparing the inputs: " + st.message);
  set_batch_[size_t(set)] = rows;
  last_batch_ = std::move(rows);
  last_index_ = std::move(index);
  return n;
}

// The op's inputs and outputs in its order (ScaleOutput), its scalars the spec's.
OpCall ScaleSession::call_of(Pass pass, int set, int64_t n, void* stream) const {
  const gatecheck_problem p{n, c_.dim, c_.gates, int32_t(c_.dtype), int32_t(impl_.device), nullptr};
  OpCall call = OpCall::shaped(c_.op(), pass, p);
  call.p.stream = stream;
  if (!c_.spec.scalars.empty()) call.scalars = c_.spec.scalars;
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (call.takes(i)) call.inputs[i].data = inputs_[i].ptr();
  const auto& out = outputs_.at(size_t(set));
  for (size_t i = 0; i < call.outputs.size(); ++i)
    if (call.makes(i)) call.outputs[i].data = out[i].ptr();
  return call;
}

Status ScaleSession::run_unguarded(int set, const std::vector<int64_t>* batch, int poison, const StressSetting& stress) {
  const int64_t n = prepare(set, batch, poison);
  Status st;
  {
    StressScope scope(impl_.device, stress);
    st = impl_.call(call_of(Pass::forward, set, n, scope.stream()));
    if (st.ok()) st = backend_->sync();
    if (!st.ok()) st.message = "forward: " + st.message;
  }
  if (st.ok()) {
    StressScope scope(impl_.device, stress);
    st = impl_.call(call_of(Pass::backward, set, n, scope.stream()));
    if (st.ok()) st = backend_->sync();
    if (!st.ok()) st.message = "backward: " + st.message;
  }
  return st;
}

Status ScaleSession::exchange_partial(const std::vector<int64_t>& batch, std::vector<uint64_t>* state) {
  return timed(&batch, [&] { return guarded([&] {
    const int64_t n = prepare(1, &batch, 0);
    StressScope scope(impl_.device, StressSetting{});
    OpCall call = call_of(Pass::backward, 1, n, scope.stream());
    for (auto& t : call.outputs) t.data = nullptr;  // a partial writes no output
    Status st = impl_.exchange_partial(call, state);
    if (st.ok()) st = backend_->sync();
    if (!st.ok()) st.message = "the exchange's partial: " + st.message;
    return st;
  }); });
}

Status ScaleSession::exchange_finalize(int set, const std::vector<int64_t>* batch, const std::vector<uint64_t>& state) {
  return guarded([&] {
    const int64_t n = prepare(set, batch, 0);
    StressScope scope(impl_.device, StressSetting{});
    OpCall call = call_of(Pass::backward, set, n, scope.stream());
    const std::vector<int> sums = row_reduction_outputs(c_.op());
    for (size_t i = 0; i < call.outputs.size(); ++i)
      if (std::find(sums.begin(), sums.end(), int(i)) == sums.end()) call.outputs[i].data = nullptr;
    Status st = impl_.exchange_finalize(call, state);
    if (st.ok()) st = backend_->sync();
    if (!st.ok()) st.message = "the exchange's finalize: " + st.message;
    return st;
  });
}

std::vector<uint64_t> ScaleSession::prints(int set, ScaleOutput o) {
  const int64_t rows = output_rows(set, o);
  std::vector<uint64_t> v(static_cast<size_t>(rows));
  backend_->row_prints(output_buffer(set, o).ptr(), rows, c_.dim, c_.dtype, v.data());
  return v;
}

namespace {

// A Comparison (oracles/oracle.h) of one output from a backend's DiffCount;
// `bits_of(pos)` gives (got, want) bits for an element, `row_of` the row
// label of a run row.
template <class Bits, class RowOf>
Comparison comparison_of(const std::string& name, DType t, int64_t dim, int64_t n, const DiffCount& d, Bits bits_of,
                         RowOf row_of, const std::string& why) {
  Comparison cmp;
  cmp.tensor = name;
  cmp.dtype = t;
  cmp.cols = dim;
  cmp.bitwise = true;
  cmp.checked = n;
  cmp.failed = d.count;
  if (d.count == 0) return cmp;
  std::vector<int64_t> pos = d.some;
  pos.push_back(d.first);
  std::sort(pos.begin(), pos.end());
  pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
  const int64_t cols = dim ? dim : 1;
  cmp.first_bad = row_of(d.first / cols) * cols + d.first % cols;
  cmp.last_bad = row_of(pos.back() / cols) * cols + pos.back() % cols;
  for (int64_t i : pos) {
    if (cmp.first.size() >= kMaxMismatches) break;
    const auto [got, want] = bits_of(i);
    Mismatch m;
    m.tensor = name;
    m.row = row_of(i / cols);
    m.col = i % cols;
    m.got_bits = got;
    m.want_bits = want;
    m.got = bits_to_float(t, got);
    m.want = bits_to_float(t, want);
    m.why = why;
    cmp.first.push_back(m);
  }
  return cmp;
}

}  // namespace

Comparison ScaleSession::compare(int set_a, int set_b, ScaleOutput o) {
  const bool gates = output_role(o) != Role::row;  // rows that are not batch rows
  const int64_t rows = output_rows(set_a, o);
  if (rows != output_rows(set_b, o)) throw std::invalid_argument("ScaleSession::compare: sets ran different batches");
  const Buffer &a = output_buffer(set_a, o), &b = output_buffer(set_b, o);
  const DiffCount d = backend_->compare(a.ptr(), b.ptr(), rows * c_.dim, c_.dtype);
  std::vector<uint8_t> ga(es_), gb(es_);
  auto bits = [&](int64_t i) {
    backend_->download(ga.data(), static_cast<const uint8_t*>(a.ptr()) + size_t(i) * es_, es_);
    backend_->download(gb.data(), static_cast<const uint8_t*>(b.ptr()) + size_t(i) * es_, es_);
    return std::pair<uint32_t, uint32_t>(element_bits(ga, es_), element_bits(gb, es_));
  };
  const auto& batch = set_batch_.at(size_t(set_a));
  auto row_of = [&](int64_t r) { return gates ? r : batch[size_t(r)]; };
  return comparison_of(scale_output_name(c_, o), c_.dtype, c_.dim, rows * c_.dim, d, bits, row_of, "bits differ");
}

Comparison ScaleSession::exact(int set, ScaleOutput o) {
  if (const std::string why = exact_values_problem(c_); !why.empty()) throw std::invalid_argument(why);
  const auto& batch = set_batch_.at(size_t(set));
  const int64_t n = int64_t(batch.size());
  std::vector<int64_t> row_map(batch.size()), gate_of_row(batch.size());
  for (size_t j = 0; j < batch.size(); ++j) {
    row_map[j] = c_.orig_row(batch[j]);
    gate_of_row[j] = c_.orig_gate(c_.index[size_t(batch[j])]);
  }
  void* map_dev = scratch_i64(batch.size(), 0);
  void* gor_dev = scratch_i64(batch.size(), 1);
  upload_i64(map_dev, row_map);
  upload_i64(gor_dev, gate_of_row);
  const ScaleGeom g = geom(n, map_dev, gor_dev);
  const ValueRule rule = c_.spec.rule();
  const Buffer& got = output_buffer(set, o);
  const bool gates = output_role(o) == Role::table;  // (exact values: gate_residual's outputs, by position)
  // grad_gate: each gate's rows of this batch, gate by gate (a CSR)
  std::vector<int64_t> offsets(size_t(c_.gates) + 1, 0), members;
  if (gates) {
    for (int64_t r : batch) ++offsets[size_t(c_.index[size_t(r)]) + 1];
    for (size_t k = 1; k < offsets.size(); ++k) offsets[k] += offsets[k - 1];
    members.resize(batch.size());
    std::vector<int64_t> at(offsets.begin(), offsets.end() - 1);
    for (size_t j = 0; j < batch.size(); ++j) members[size_t(at[size_t(c_.index[size_t(batch[j])])]++)] = int64_t(j);
  }
  DiffCount d;
  if (gates) {
    void* off_dev = scratch_i64(offsets.size(), 2);
    void* mem_dev = scratch_i64(members.size(), 3);
    upload_i64(off_dev, offsets);
    upload_i64(mem_dev, members);
    d = backend_->exact_gates(got.ptr(), c_.gates, c_.dtype, rule, g, static_cast<const int64_t*>(off_dev),
                              static_cast<const int64_t*>(mem_dev));
  } else {
    d = backend_->exact_rows(got.ptr(), int(o), c_.dtype, rule, g);
  }
  std::vector<uint8_t> gb(es_);
  auto bits = [&](int64_t i) {
    backend_->download(gb.data(), static_cast<const uint8_t*>(got.ptr()) + size_t(i) * es_, es_);
    const int64_t r = i / c_.dim, col = i % c_.dim;
    uint32_t want = 0;
    if (gates) {  // the gate's exact sum, recomputed here for the message
      int64_t sum = 0;
      bool nz = false;
      for (int64_t m = offsets[size_t(r)]; m < offsets[size_t(r) + 1]; ++m) {
        const int64_t u = exact_term_units(rule, c_.row_pos(batch[size_t(members[size_t(m)])], col));
        sum += u;
        nz |= u != 0;
      }
      want = exact_grad_gate_bits(c_.dtype, rule.frac_bits, sum, offsets[size_t(r) + 1] > offsets[size_t(r)], nz).bits;
    } else {
      const uint64_t pos = c_.row_pos(batch[size_t(r)], col);
      const uint64_t gpos = c_.gate_pos(c_.index[size_t(batch[size_t(r)])], col);
      want = o == 0 ? exact_out_bits(c_.dtype, rule, pos, gpos)
             : o == 1 ? exact_grad_res_bits(c_.dtype, rule, pos)
                      : exact_grad_y_bits(c_.dtype, rule, pos, gpos);
    }
    return std::pair<uint32_t, uint32_t>(element_bits(gb, es_), want);
  };
  auto row_of = [&](int64_t r) { return gates ? r : batch[size_t(r)]; };
  const int64_t elems = (gates ? c_.gates : n) * c_.dim;
  return comparison_of(scale_output_name(c_, o), c_.dtype, c_.dim, elems, d, bits, row_of,
                       "want: the exact value, exact by construction");
}

MemoryFinding ScaleSession::unwritten(int set_p0, int set_p1, ScaleOutput o, int64_t* checked) {
  const bool gates = output_role(o) != Role::row;
  const int64_t rows = output_rows(set_p0, o);
  const int64_t n = rows * c_.dim;
  *checked = n;
  const DiffCount d = backend_->both_poisoned(output_buffer(set_p0, o).ptr(), poison_bits(c_.dtype, 0),
                                              output_buffer(set_p1, o).ptr(), poison_bits(c_.dtype, 1), n, c_.dtype);
  const std::string name = scale_output_name(c_, o);
  MemoryFinding f{MemoryFinding::unwritten, name, -1, 0, ""};
  if (d.count == 0) return f;
  const int64_t cols = c_.dim ? c_.dim : 1;
  const int64_t row = gates ? d.first / cols : set_batch_.at(size_t(set_p0))[size_t(d.first / cols)];
  f.first = row * cols + d.first % cols;
  f.count = d.count;
  f.detail = std::to_string(d.count) + " of " + std::to_string(n) + " elements of " + name +
             " were never written (they kept both poisons), first at [" + std::to_string(row) + ", " +
             std::to_string(d.first % cols) + "]";
  return f;
}

std::vector<MemoryFinding> ScaleSession::guards() {
  std::vector<MemoryFinding> found;
  auto scan = [&](const Buffer& b) {
    int64_t f1 = 0, l1 = 0, f2 = 0, l2 = 0;
    const int64_t before = backend_->count_not_byte(b.base, kGuardBytes, kCanaryByte, &f1, &l1);
    const int64_t after = backend_->count_not_byte(static_cast<const uint8_t*>(b.ptr()) + b.used,
                                                   b.bytes - b.used + kGuardBytes, kCanaryByte, &f2, &l2);
    if (before + after == 0) return;
    const int64_t first = before ? f1 - int64_t(kGuardBytes) : int64_t(b.used) + f2;
    const int64_t last = after ? int64_t(b.used) + l2 : l1 - int64_t(kGuardBytes);
    found.push_back({MemoryFinding::oob_write, b.name, first, before + after,
                     std::to_string(before + after) + " bytes outside " + b.name + " were overwritten, at byte offsets " +
                         std::to_string(first) + ".." + std::to_string(last) + " relative to its start (size " +
                         std::to_string(b.used) + " bytes)"});
  };
  for (const auto& b : inputs_) scan(b);
  for (const auto& set : outputs_)
    for (const auto& b : set) scan(b);
  return found;
}

std::vector<MemoryFinding> ScaleSession::inputs_changed() {
  std::vector<MemoryFinding> found;
  const int64_t n = int64_t(last_batch_.size());
  std::vector<int64_t> row_map(last_batch_.size());
  for (size_t j = 0; j < last_batch_.size(); ++j) row_map[j] = c_.orig_row(last_batch_[j]);
  void* map_dev = scratch_i64(row_map.size(), 0);
  upload_i64(map_dev, row_map);
  const ValueRule rule = c_.spec.rule();
  auto report = [&](const char* name, const DiffCount& d, const std::vector<int64_t>* batch) {
    if (d.count == 0) return;
    const int64_t cols = c_.dim ? c_.dim : 1;
    const int64_t row = batch ? (*batch)[size_t(d.first / cols)] : d.first / cols;
    found.push_back({MemoryFinding::input_changed, name, row * cols + d.first % cols, d.count,
                     std::string("input ") + name + " was modified: " + std::to_string(d.count) +
                         " elements differ from their generated values, first at [" + std::to_string(row) + ", " +
                         std::to_string(d.first % cols) + "]"});
  };
  const OpSchema& op = c_.op();
  for (size_t i = 0, k = 0; i < op.inputs.size(); ++i) {
    if (i == index_at_) continue;
    const ScaleGeom g = input_geom(i, n, map_dev);
    const bool batch_rows = op.inputs[i].role == Role::row;
    report(op.inputs[i].name,
           backend_->verify(inputs_[i].ptr(), c_.dtype, rule, ScaleTensor(scale_tensor_of_input(k++)), g),
           batch_rows ? &last_batch_ : nullptr);
  }
  const char* index_name = op.inputs[index_at_].name;
  std::vector<int64_t> index(last_index_.size());
  backend_->download(index.data(), inputs_[index_at_].ptr(), index.size() * 8);
  int64_t first = -1, count = 0;
  for (size_t j = 0; j < index.size(); ++j)
    if (index[j] != last_index_[j]) {
      if (first < 0) first = int64_t(j);
      ++count;
    }
  if (count)
    found.push_back({MemoryFinding::input_changed, index_name, first, count,
                     std::string("input ") + index_name + " was modified: " + std::to_string(count) +
                         " entries changed, first " + index_name + "[" + std::to_string(first) + "] (batch row)"});
  return found;
}

HostTensor ScaleSession::fetch(int set, ScaleOutput o, const std::vector<int64_t>& rows) {
  HostTensor t(c_.dtype, int64_t(rows.size()), c_.dim);
  const Buffer& b = output_buffer(set, o);
  const size_t rb = size_t(c_.dim) * es_;
  const int64_t limit = output_rows(set, o);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= limit) throw std::invalid_argument("ScaleSession::fetch: row out of range");
    backend_->download(t.bytes.data() + i * rb, static_cast<const uint8_t*>(b.ptr()) + size_t(rows[i]) * rb, rb);
  }
  return t;
}

}  // namespace gatecheck
