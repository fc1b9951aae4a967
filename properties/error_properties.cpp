// error_inputs: every bad input of the op contract that the plugin ABI can
// express must be rejected with a non-zero return, a message naming the
// argument (and the bad value, where there is one), and nothing written:
// outputs keep their poison, inputs and guard bytes are unchanged.
// An implementation called with tensors (Python) gets the bad inputs a tensor
// can carry: a bad index, gates = 0 with rows, and shapes that disagree; its
// exception is the rejection, and its message (not the traceback) must name
// the argument.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include "../harness/call_arena.h"
#include "../harness/isolate.h"
#include "../harness/stage_clock.h"
#include "property_impls.h"

namespace gatecheck::detail {

namespace {

// Pointers of one call, each may be replaced by a probe.
struct Args {
  gatecheck_problem p;
  const void *res, *gate, *y, *grad_out;
  const int64_t* index;
  void *out, *grad_res, *grad_gate, *grad_y;
};

struct Probe {
  std::string what;                 // "index out of range (index[1] = 2)"
  bool forward;                     // which op it calls
  std::vector<std::string> words;   // identifiers / values the message must contain
  std::function<void(Args&, std::vector<int64_t>& index)> apply;
  bool full_case = false;           // run on the case as generated, not trimmed
  // Tensor implementations only: gives one input a shape that disagrees
  // with the others (the C ABI cannot express it).
  std::function<void(Case&)> reshape = nullptr;
};

// Does `msg` contain `word` as a whole identifier or number?
bool names(const std::string& msg, const std::string& word) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (size_t at = msg.find(word); at != std::string::npos; at = msg.find(word, at + 1)) {
    const bool left = at == 0 || !ident(msg[at - 1]);
    const bool right = at + word.size() == msg.size() || !ident(msg[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

// A small valid case when c itself cannot carry every probe (no rows, no
// columns), within the contract's valid inputs.
Case base_case(const Case& c, const ValidInputs& valid) {
  if (c.rows >= 1 && c.dim >= 1 && c.gates >= 1) return c;
  auto in = [](int64_t want, int64_t lo, int64_t hi) { return std::max(std::max<int64_t>(lo, 1), std::min(want, hi)); };
  const int64_t rows = in(3, valid.min_rows, valid.max_rows), gates = in(2, valid.min_gates, valid.max_gates);
  Case b = make_case(c.dtype, rows, in(4, valid.min_dim, valid.max_dim), gates);
  for (int64_t r = 0; r < rows; ++r) b.index[size_t(r)] = (r + 1) / 2 % gates;  // 0, 1, 1, ...
  for (HostTensor* t : {&b.res, &b.gate, &b.y, &b.grad_out})
    for (int64_t i = 0; i < t->numel(); ++i) t->set_value_rn(i, 1.0f + float(i % 3));
  return b;
}

// The first rows and columns of c (no fewer columns than the contract's
// smallest valid dim): enough for every probe that is not about index
// contents, at a fraction of the cost of copying a large case ~40 times.
Case trimmed(const Case& c, int64_t min_dim) {
  const int64_t keep_dim = std::max<int64_t>(8, min_dim);
  if (c.rows <= 4 && c.dim <= keep_dim) return c;
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < std::min<int64_t>(c.rows, 4); ++r) rows.push_back(r);
  Case s = sub_case(c, rows);
  const int64_t d = std::min<int64_t>(c.dim, keep_dim);
  Case t = make_case(c.dtype, s.rows, d, c.gates);
  t.index = s.index;
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t j = 0; j < d; ++j) {
      t.res.set_bits(r * d + j, s.res.bits(r * c.dim + j));
      t.y.set_bits(r * d + j, s.y.bits(r * c.dim + j));
      t.grad_out.set_bits(r * d + j, s.grad_out.bits(r * c.dim + j));
    }
  for (int64_t k = 0; k < c.gates; ++k)
    for (int64_t j = 0; j < d; ++j) t.gate.set_bits(k * d + j, c.gate.bits(k * c.dim + j));
  return t;
}

// Inputs whose shape disagrees with the others, for implementations called
// with tensors: one more row of res, one more column of gate or y, one more
// entry of index (a valid one).
void shape_probes(const Case& c, bool fwd, std::vector<Probe>* v) {
  auto wider = [](HostTensor& t, int64_t rows, int64_t cols) {
    HostTensor w(t.dtype, rows, cols);
    for (int64_t i = 0; i < w.numel(); ++i) w.set_value_rn(i, 1.0f);
    t = w;
  };
  auto none = [](Args&, std::vector<int64_t>&) {};
  auto shape = [](int64_t rows, int64_t cols) { return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]"; };
  const std::string rows_dim = shape(c.rows, c.dim);
  if (fwd)
    v->push_back({"res of shape " + shape(c.rows + 1, c.dim) + " with y of " + rows_dim, fwd, {"res"}, none, false,
                  [wider](Case& m) { wider(m.res, m.rows + 1, m.dim); }});
  v->push_back({"gate of shape " + shape(c.gates, c.dim + 1) + " with y of " + rows_dim, fwd, {"gate"}, none, false,
                [wider](Case& m) { wider(m.gate, m.gates, m.dim + 1); }});
  v->push_back({"y of shape " + shape(c.rows, c.dim + 1) + " with res of " + rows_dim, fwd, {"y"}, none, false,
                [wider](Case& m) { wider(m.y, m.rows, m.dim + 1); }});
  v->push_back({"index of " + std::to_string(c.rows + 1) + " entries with " + std::to_string(c.rows) + " rows", fwd,
                {"index"}, none, false, [](Case& m) { m.index.push_back(0); }});
}

// Probes of index contents run on the case as generated (a large-batch path
// may skip a check a small one does); every other probe on trimmed(c). An
// implementation called with tensors gets only what a tensor can carry.
std::vector<Probe> probes(const Case& c, const Implementation& impl) {
  const uint32_t devices = impl.devices();
  const std::string g = std::to_string(c.gates);
  const int64_t r = c.rows / 2;
  const std::string at = "index[" + std::to_string(r) + "]";
  std::vector<Probe> v;
  for (bool fwd : {true, false}) {
    const int64_t gates = c.gates;
    v.push_back({"index out of range (" + at + " = " + g + ", gates = " + g + ")", fwd, {"index", g},
                 [r, gates](Args&, std::vector<int64_t>& idx) { idx[size_t(r)] = gates; }, true});
    v.push_back({"negative index (" + at + " = -1)", fwd, {"index", "-1"},
                 [r](Args&, std::vector<int64_t>& idx) { idx[size_t(r)] = -1; }, true});
    v.push_back({"gates = 0 with rows > 0", fwd, {"gates"},
                 [](Args& a, std::vector<int64_t>&) { a.p.gates = 0; }});
    if (impl.takes_tensors()) {
      shape_probes(c, fwd, &v);
      continue;
    }
    v.push_back({"invalid dtype value 7", fwd, {"dtype", "7"}, [](Args& a, std::vector<int64_t>&) { a.p.dtype = 7; }});
    v.push_back({"negative rows (-3)", fwd, {"rows", "-3"}, [](Args& a, std::vector<int64_t>&) { a.p.rows = -3; }});
    v.push_back({"negative dim (-2)", fwd, {"dim", "-2"}, [](Args& a, std::vector<int64_t>&) { a.p.dim = -2; }});
    v.push_back({"negative gates (-1)", fwd, {"gates", "-1"}, [](Args& a, std::vector<int64_t>&) { a.p.gates = -1; }});
    v.push_back({"unknown device value 7", fwd, {"device", "7"}, [](Args& a, std::vector<int64_t>&) { a.p.device = 7; }});
    for (int32_t d : {int32_t(GATECHECK_CPU), int32_t(GATECHECK_CUDA)})
      if (!(devices & (1u << d)))
        v.push_back({std::string("unsupported device ") + device_name(Device(d)), fwd, {"device"},
                     [d](Args& a, std::vector<int64_t>&) { a.p.device = d; }});
    const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
    v.push_back({"rows*dim overflow (rows = " + std::to_string(huge) + ")", fwd, {"rows", std::to_string(huge)},
                 [huge](Args& a, std::vector<int64_t>&) { a.p.rows = huge; }});
    v.push_back({"gates*dim overflow (gates = " + std::to_string(huge) + ")", fwd,
                 {"gates", std::to_string(huge)}, [huge](Args& a, std::vector<int64_t>&) { a.p.gates = huge; }});
  }
  if (impl.takes_tensors()) return v;  // a tensor has no null pointer
  auto null = [&v](const char* name, bool fwd, auto member) {
    v.push_back({std::string("null ") + name + " with non-zero size", fwd, {name},
                 [member](Args& a, std::vector<int64_t>&) { a.*member = nullptr; }});
  };
  null("res", true, &Args::res);
  null("gate", true, &Args::gate);
  null("index", true, &Args::index);
  null("y", true, &Args::y);
  null("out", true, &Args::out);
  null("grad_out", false, &Args::grad_out);
  null("gate", false, &Args::gate);
  null("index", false, &Args::index);
  null("y", false, &Args::y);
  null("grad_res", false, &Args::grad_res);
  null("grad_gate", false, &Args::grad_gate);
  null("grad_y", false, &Args::grad_y);
  return v;
}

// The call of one probe.
Status call(const Implementation& impl, const Probe& pr, const Args& a, const Case& m) {
  if (impl.takes_tensors()) {  // each input with its own extent
    CallShapes s = CallShapes::of(a.p);
    s.res = {m.res.rows, m.res.cols};
    s.gate = {a.p.gates == m.gates ? m.gate.rows : a.p.gates, m.gate.cols};
    s.y = {m.y.rows, m.y.cols};
    s.grad_out = {m.grad_out.rows, m.grad_out.cols};
    s.index = int64_t(m.index.size());
    return pr.forward ? impl.tensors->forward(a.p, s, a.res, a.gate, a.index, a.y, a.out)
                      : impl.tensors->backward(a.p, s, a.grad_out, a.res, a.gate, a.index, a.y, a.grad_res,
                                               a.grad_gate, a.grad_y);
  }
  return pr.forward ? impl.forward(a.p, a.res, a.gate, a.index, a.y, a.out)
                    : impl.backward(a.p, a.grad_out, a.gate, a.index, a.y, a.grad_res, a.grad_gate, a.grad_y, a.res);
}

// Runs one probe in guarded buffers (this thread's arena); returns "" if it
// was rejected correctly, otherwise what went wrong.
std::string run_probe(const Implementation& impl, const Case& c0, const Probe& pr) {
  const Device d = impl.device;
  Case reshaped;
  if (pr.reshape) {
    reshaped = c0;
    pr.reshape(reshaped);
  }
  const Case& c = pr.reshape ? reshaped : c0;  // its tensors are the inputs; outputs keep c0's shapes
  std::vector<int64_t> idx = c.index;
  Args a{};
  a.p = c0.problem(d, runner_stream(d));
  pr.apply(a, idx);  // may change idx before upload
  const uint32_t pb = poison_bits(c.dtype, 0);
  std::vector<uint8_t> pattern(size_t(dtype_size(c.dtype)));
  std::memcpy(pattern.data(), &pb, pattern.size());
  const size_t row_bytes = size_t(c0.dim * dtype_size(c0.dtype));
  enum { res, gate, index, y, grad_out, out, grad_res, grad_gate, grad_y, kRegions };
  CallArena buf(d,
                {{"res", c.res.bytes.size(), c.res.bytes.data()},
                 {"gate", c.gate.bytes.size(), c.gate.bytes.data()},
                 {"index", idx.size() * sizeof(int64_t), idx.data()},
                 {"y", c.y.bytes.size(), c.y.bytes.data()},
                 {"grad_out", c.grad_out.bytes.size(), c.grad_out.bytes.data()},
                 {"out", size_t(c0.rows) * row_bytes, nullptr},
                 {"grad_res", size_t(c0.rows) * row_bytes, nullptr},
                 {"grad_gate", size_t(c0.gates) * row_bytes, nullptr},
                 {"grad_y", size_t(c0.rows) * row_bytes, nullptr}},
                pattern);
  if (d == Device::cuda && !impl.calls_on_problem_stream) {  // it may read the inputs from any stream
    const Status s = sync_after_call(impl, a.p.stream);
    if (!s.ok()) return "harness error: " + s.message;
  }
  // Fill in every pointer the probe did not null.
  Args full = a;
  full.res = buf.ptr(res);
  full.gate = buf.ptr(gate);
  full.index = static_cast<const int64_t*>(buf.ptr(index));
  full.y = buf.ptr(y);
  full.grad_out = buf.ptr(grad_out);
  full.out = buf.ptr(out);
  full.grad_res = buf.ptr(grad_res);
  full.grad_gate = buf.ptr(grad_gate);
  full.grad_y = buf.ptr(grad_y);
  Args probe_args = full;
  pr.apply(probe_args, idx);  // re-apply: nulls pointers / edits the problem
  const Status s = call(impl, pr, probe_args, c);
  std::ostringstream bad;
  const char* op = pr.forward ? "forward" : "backward";
  const std::string said = without_traceback(s.message);  // its own words, not its code's
  if (s.ok()) {
    bad << op << " accepted it (" << (impl.takes_tensors() ? "no exception" : "returned 0") << ")";
  } else {
    for (const auto& w : pr.words)
      if (!names(said, w)) {
        bad << op << "'s message \"" << said << "\" does not name '" << w << "'";
        break;
      }
  }
  const Status sync = sync_after_call(impl, a.p.stream);
  if (!sync.ok()) bad << (bad.tellp() > 0 ? "; " : "") << op << " left a device error: " << sync.message;
  buf.fetch();
  int64_t f = 0, l = 0;
  for (size_t i = 0; i < out; ++i) {
    if (buf.changed_input_bytes(i, &f)) bad << (bad.tellp() > 0 ? "; " : "") << "input " << buf.name(i) << " was modified";
    if (buf.damaged_guard_bytes(i, &f, &l))
      bad << (bad.tellp() > 0 ? "; " : "") << "guard bytes around " << buf.name(i) << " were overwritten";
  }
  for (size_t i = out; i < kRegions; ++i) {
    const uint8_t* now = buf.host(i);
    size_t changed = 0;
    for (size_t k = 0; k < buf.size(i); ++k) changed += now[k] != pattern[k % pattern.size()];
    if (changed)
      bad << (bad.tellp() > 0 ? "; " : "") << op << " wrote " << changed << " bytes of " << buf.name(i)
          << (s.ok() ? "" : " before rejecting");
    if (buf.damaged_guard_bytes(i, &f, &l))
      bad << (bad.tellp() > 0 ? "; " : "") << "guard bytes around " << buf.name(i) << " were overwritten";
  }
  return bad.str();
}


// What a probe's failure looks like coming back from a child process (a
// crash comes back as a plain implementation error instead).
const char kProbeFailed[] = "\x1egatecheck-probe-failed\x1e";

std::string probe_safely(const Implementation& impl, const Case& c, const Probe& pr) {
  try {
    return run_probe(impl, c, pr);
  } catch (const std::exception& e) {
    return std::string("harness error: ") + e.what();
  }
}

// Which probe (-1: all) and the contract's smallest valid dim, in the one
// integer a fresh-process task takes.
int64_t probe_arg(int64_t which, int64_t min_dim) { return (std::min<int64_t>(min_dim, 1 << 30) << 16) | (which & 0xffff); }
int64_t probe_which(int64_t arg) { return (arg & 0xffff) == 0xffff ? -1 : arg & 0xffff; }
int64_t probe_min_dim(int64_t arg) { return arg >> 16; }

// Runs the probes of base case c (all of them, or only the one probe_arg
// names) in this process: success, or kProbeFailed and a line
// "index<TAB>why" for each probe not rejected as documented. What a child
// process runs.
Status probe_status(const Implementation& impl, const Case& c, int64_t arg) {
  const int64_t which = probe_which(arg);
  const Case small = trimmed(c, probe_min_dim(arg));
  const auto all = probes(c, impl);
  std::string lines;
  for (size_t i = 0; i < all.size(); ++i) {
    if (which >= 0 && int64_t(i) != which) continue;
    const std::string w = probe_safely(impl, all[i].full_case ? c : small, all[i]);
    if (!w.empty()) lines += std::to_string(i) + "\t" + w + "\n";
  }
  return lines.empty() ? Status::success() : Status::error(ErrorKind::implementation, kProbeFailed + lines);
}

// The same in a fresh process, for CUDA and torch-eager under --isolate.
constexpr const char* kProbeTask = "error_inputs";
struct ProbeTaskRegistrar {
  ProbeTaskRegistrar() { register_fresh_process_task(kProbeTask, probe_status); }
} probe_task_registrar __attribute__((init_priority(kFreshProcessTaskPriority)));

}  // namespace

Verdict error_inputs(const Implementation& impl, const Case& c0, const PropertyOptions& o) {
  Verdict v;
  v.property = "error_inputs";
  const Case c = base_case(c0, o.valid);
  const auto all = probes(c, impl);
  std::vector<std::string> why(all.size());
  // Bad input is where implementations crash: probe in a child process (one
  // for all probes; only if it dies, one per probe to name the culprit). On
  // the CPU always, in a fork that this thread keeps from case to case (a
  // fork a case cost more than the probes). A forked child cannot use CUDA once this
  // process has (asking whether a GPU exists already does: "initialization
  // error" for every probe, seen on the H200), nor LibTorch 2.x's autograd:
  // under --isolate, CUDA and torch-eager probe in a fresh process (this
  // program re-executed, kept by this thread from case to case while it
  // stays healthy: call_in_exec_worker); without it, CUDA probes in this
  // process. A Python implementation raises on bad input rather than crash:
  // it probes in this process, but on CUDA in a fresh one (an unchecked index
  // makes a device-side assert, which ends CUDA for the rest of the process;
  // a worker that saw one is retired). After a death, each probe runs alone,
  // and a probe that kills or poisons its worker leaves the next one a new one.
  const bool fresh = (o.isolate && needs_fresh_process(impl)) || (impl.takes_tensors() && impl.device == Device::cuda);
  auto in_child = [&](int64_t which) {
    const StageTimer t(Stage::child);
    const int64_t arg = probe_arg(which, o.valid.min_dim);
    return fresh ? call_in_exec_worker(kProbeTask, impl, c, arg, o.isolate_timeout_seconds)
                 : call_in_forked_worker(kProbeTask, impl, c, arg, o.isolate_timeout_seconds);
  };
  // kProbeFailed's lines into why[]; false if s is not such a result
  auto take_lines = [&](const Status& s) {
    if (s.ok() || s.message.rfind(kProbeFailed, 0) != 0) return s.ok();
    std::istringstream in(s.message.substr(sizeof kProbeFailed - 1));
    for (std::string line; std::getline(in, line);) {
      const size_t tab = line.find('\t');
      if (tab == std::string::npos) continue;
      const size_t i = size_t(std::stoul(line.substr(0, tab)));
      if (i < why.size()) why[i] = line.substr(tab + 1);
    }
    return true;
  };
  if (!fresh && (impl.device != Device::cpu || impl.takes_tensors())) {
    const StageTimer t(Stage::calls);  // the probes in this process: their buffers, calls and checks
    take_lines(probe_status(impl, c, probe_arg(-1, o.valid.min_dim)));  // (never anything but kProbeFailed's lines)
  } else if (!take_lines(in_child(-1))) {
    for (size_t i = 0; i < all.size(); ++i) {
      const Status s = in_child(int64_t(i));
      if (!take_lines(s)) why[i] = "the call did not return: " + s.message;
    }
  }
  std::ostringstream msg;
  int64_t failed = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    ++v.compared;
    if (why[i].empty()) continue;
    if (failed++ < 6) msg << (failed > 1 ? "; " : "") << all[i].what << ": " << why[i];
  }
  if (failed) {
    v.passed = false;
    v.message = impl.label() + " on " + describe(c) + ": " + std::to_string(failed) + " of " +
                std::to_string(v.compared) + " bad inputs not rejected as documented: " + msg.str();
  }
  return v;
}

}  // namespace gatecheck::detail
