// error_inputs: every bad input of the op contract that the plugin ABI can
// express must be rejected with a non-zero return, a message naming the
// argument (and the bad value, where there is one), and nothing written:
// outputs keep their poison, inputs and guard bytes are unchanged. The bad
// inputs follow from the op's description (kernels/op_schema.h): its index,
// its shape rules, each of its tensors, its scalars' domains.
// An implementation called with tensors (Python) gets the bad inputs a tensor
// can carry: a bad index, gates = 0 with rows, shapes that disagree, bad
// scalars; its exception is the rejection, and its message (not the
// traceback) must name the argument.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include "../../harness/run/call_arena.h"
#include "../../harness/isolate/isolate.h"
#include "../../harness/run/stage_clock.h"
#include "property_impls.h"

namespace gatecheck::checks {

using namespace detail;

namespace {

// The call a probe makes, which it may change: the problem, a buffer set to
// null, a scalar; `index` is the index's contents, uploaded with the rest.
struct Args {
  OpCall call;
  std::vector<int64_t>& index;
};

struct Probe {
  std::string what;                 // "index out of range (index[1] = 2)"
  Pass pass;                        // which call it makes
  std::vector<std::string> words;   // identifiers / values the message must contain
  std::function<void(Args&)> apply;
  bool full_case = false;           // run on the case as generated, not trimmed
  // Tensor implementations only: gives one input a shape that disagrees
  // with the others (the C ABIs cannot express it).
  std::function<void(Case&)> reshape = nullptr;
};

// The op's index input's name, which a message about the index must name.
std::string index_name(const OpSchema& op) {
  const int i = op.index_input();
  return i >= 0 ? op.inputs[size_t(i)].name : "index";
}

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

// A small valid case, within the contract's valid inputs, for a case that
// cannot carry every probe (error_inputs_stand_in).
Case base_case(const Case& c, const ValidInputs& valid) {
  auto in = [](int64_t want, int64_t lo, int64_t hi) { return std::max(std::max<int64_t>(lo, 1), std::min(want, hi)); };
  const int64_t rows = in(3, valid.min_rows, valid.max_rows), gates = in(2, valid.min_gates, valid.max_gates);
  Case b = make_case(*c.op, c.dtype, rows, in(4, valid.min_dim, valid.max_dim), gates);
  for (int64_t r = 0; r < rows; ++r) b.index[size_t(r)] = (r + 1) / 2 % gates;  // 0, 1, 1, ...
  for (HostTensor& t : b.inputs)
    for (int64_t i = 0; i < t.numel(); ++i) t.set_value_rn(i, 1.0f + float(i % 3));
  b.scalars = c.scalars;
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
  const Case s = sub_case(c, rows);
  const int64_t d = std::min<int64_t>(c.dim, keep_dim);
  Case t = make_case(*c.op, c.dtype, s.rows, d, c.gates);
  t.index = s.index;
  t.scalars = c.scalars;
  for (size_t k = 0; k < t.inputs.size(); ++k)
    for (int64_t r = 0; r < t.inputs[k].rows; ++r)
      for (int64_t j = 0; j < d; ++j) t.inputs[k].set_bits(r * d + j, s.inputs[k].bits(r * c.dim + j));
  return t;
}

std::string shape(int64_t rows, int64_t cols) { return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]"; }

// Inputs whose shape disagrees with the others, for implementations called
// with tensors: one more row of the first row input (forward only), one more
// column of every other forward input, one more entry of index (a valid one).
void shape_probes(const Case& c, Pass pass, std::vector<Probe>* v) {
  const OpSchema& op = *c.op;
  auto widened = [](HostTensor& t, int64_t rows, int64_t cols) {
    HostTensor w(t.dtype, rows, cols);
    for (int64_t i = 0; i < w.numel(); ++i) w.set_value_rn(i, 1.0f);
    t = w;
  };
  // The other tensor named beside the one made wrong: the first other forward row input, else the index.
  auto beside = [&](const char* name) {
    for (const auto& in : op.inputs)
      if (in.role == Role::row && in.pass == Pass::forward && std::string(in.name) != name)
        return std::string(" with ") + in.name + " of " + shape(c.rows, c.dim);
    return " with " + index_name(op) + " of " + std::to_string(c.rows) + " entries";
  };
  bool first_row = true;
  for (const auto& in : op.inputs) {
    if (in.role == Role::index || in.pass != Pass::forward) continue;
    const int k = op.float_input(in.name);
    const int64_t rows = role_rows(in.role, c.rows, c.gates);
    if (in.role == Role::row && first_row) {
      first_row = false;
      if (pass == Pass::forward)
        v->push_back({std::string(in.name) + " of shape " + shape(c.rows + 1, c.dim) + beside(in.name), pass,
                      {in.name}, [](Args&) {}, false,
                      [widened, k](Case& m) { widened(m.inputs[size_t(k)], m.rows + 1, m.dim); }});
      continue;
    }
    const bool flat = in.role == Role::column;
    v->push_back({std::string(in.name) + " of shape " + (flat ? "[" + std::to_string(c.dim + 1) + "]" : shape(rows, c.dim + 1)) +
                      beside(in.name),
                  pass, {in.name}, [](Args&) {}, false,
                  [widened, k](Case& m) { widened(m.inputs[size_t(k)], m.inputs[size_t(k)].rows, m.dim + 1); }});
  }
  const std::string idx = index_name(op);
  v->push_back({idx + " of " + std::to_string(c.rows + 1) + " entries with " + std::to_string(c.rows) + " rows", pass,
                {idx}, [](Args&) {}, false, [](Case& m) { m.index.push_back(0); }});
}

// Probes of index contents run on the case as generated (a large-batch path
// may skip a check a small one does); every other probe on trimmed(c). An
// implementation called with tensors gets only what a tensor can carry.
std::vector<Probe> probes(const Case& c, const Implementation& impl) {
  const OpSchema& op = *c.op;
  const uint32_t devices = impl.devices();
  const std::string g = std::to_string(c.gates);
  const int64_t r = c.rows / 2;
  const std::string idx = index_name(op);
  const std::string at = idx + "[" + std::to_string(r) + "]";
  std::vector<Probe> v;
  for (Pass pass : {Pass::forward, Pass::backward}) {
    const int64_t gates = c.gates;
    v.push_back({idx + " out of range (" + at + " = " + g + ", gates = " + g + ")", pass, {idx, g},
                 [r, gates](Args& a) { a.index[size_t(r)] = gates; }, true});
    v.push_back({"negative " + idx + " (" + at + " = -1)", pass, {idx, "-1"},
                 [r](Args& a) { a.index[size_t(r)] = -1; }, true});
    v.push_back({"gates = 0 with rows > 0", pass, {"gates"}, [](Args& a) { a.call.p.gates = 0; }});
    if (op.min_dim_with_rows > 0)  // (a tensor carries it as tensors of no columns)
      v.push_back({"dim = 0 with rows > 0", pass, {"dim", "0"}, [](Args& a) { a.call.p.dim = 0; }, false,
                   impl.takes_tensors() ? std::function<void(Case&)>([](Case& m) {
                     for (HostTensor& t : m.inputs) t = HostTensor(t.dtype, t.rows, 0);
                   })
                                        : nullptr});
    for (size_t s = 0; s < op.scalars.size(); ++s) {
      const char* name = op.scalars[s].name;
      std::vector<std::pair<double, const char*>> bad = {{std::nan(""), "nan"}, {HUGE_VAL, "inf"}};
      if (op.scalars[s].positive) bad.insert(bad.begin(), {{0.0, "0"}, {-1.0, "-1"}});
      for (const auto& [value, word] : bad)
        v.push_back({std::string(name) + " = " + word, pass, {name, word},
                     [s, value = value](Args& a) { a.call.scalars[s] = value; }});
    }
    if (impl.takes_tensors()) {
      shape_probes(c, pass, &v);
      continue;
    }
    v.push_back({"invalid dtype value 7", pass, {"dtype", "7"}, [](Args& a) { a.call.p.dtype = 7; }});
    v.push_back({"negative rows (-3)", pass, {"rows", "-3"}, [](Args& a) { a.call.p.rows = -3; }});
    v.push_back({"negative dim (-2)", pass, {"dim", "-2"}, [](Args& a) { a.call.p.dim = -2; }});
    v.push_back({"negative gates (-1)", pass, {"gates", "-1"}, [](Args& a) { a.call.p.gates = -1; }});
    v.push_back({"unknown device value 7", pass, {"device", "7"}, [](Args& a) { a.call.p.device = 7; }});
    for (int32_t d : {int32_t(GATECHECK_CPU), int32_t(GATECHECK_CUDA)})
      if (!(devices & (1u << d)))
        v.push_back({std::string("unsupported device ") + device_name(Device(d)), pass, {"device"},
                     [d](Args& a) { a.call.p.device = d; }});
    const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
    v.push_back({"rows*dim overflow (rows = " + std::to_string(huge) + ")", pass, {"rows", std::to_string(huge)},
                 [huge](Args& a) { a.call.p.rows = huge; }});
    v.push_back({"gates*dim overflow (gates = " + std::to_string(huge) + ")", pass,
                 {"gates", std::to_string(huge)}, [huge](Args& a) { a.call.p.gates = huge; }});
  }
  if (impl.takes_tensors()) return v;  // a tensor has no null pointer
  // A null pointer for every buffer each call receives: the inputs it takes
  // (as the implementation's ABI passes them), then the outputs it makes.
  for (Pass pass : {Pass::forward, Pass::backward}) {
    const OpCall shaped = OpCall::shaped(op, pass, c.problem(impl.device));
    for (size_t i = 0; i < op.inputs.size(); ++i)
      if (shaped.takes(i) && impl.receives(pass, i))
        v.push_back({std::string("null ") + op.inputs[i].name + " with non-zero size", pass, {op.inputs[i].name},
                     [i](Args& a) { a.call.inputs[i].data = nullptr; }});
    for (size_t i = 0; i < op.outputs.size(); ++i)
      if (shaped.makes(i))
        v.push_back({std::string("null ") + op.outputs[i].name + " with non-zero size", pass, {op.outputs[i].name},
                     [i](Args& a) { a.call.outputs[i].data = nullptr; }});
  }
  return v;
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
  {
    Args a{OpCall::shaped(*c0.op, pr.pass, c0.problem(d, runner_stream(d))), idx};
    pr.apply(a);  // may change idx before upload
  }
  const uint32_t pb = poison_bits(c.dtype, 0);
  std::vector<uint8_t> pattern(size_t(dtype_size(c.dtype)));
  std::memcpy(pattern.data(), &pb, pattern.size());
  Case with_index = c;  // the inputs as the probe made them (the index may be edited)
  with_index.index = idx;
  std::vector<CallArena::Region> regions = arena_regions(with_index, outputs_for(c0));
  const size_t n_in = c0.op->inputs.size(), n_regions = regions.size();
  CallArena buf(d, regions, pattern);
  if (d == Device::cuda && !impl.calls_on_problem_stream) {  // it may read the inputs from any stream
    const Status s = sync_after_call(impl, runner_stream(d));
    if (!s.ok()) return "harness error: " + s.message;
  }
  // Every buffer in place, each input with the extent it has (a reshaped
  // one's own), then the probe's edits again: nulls, the problem, a scalar.
  Args probe_args{call_in_arena(with_index, buf, pr.pass, d, runner_stream(d)), idx};
  probe_args.call.p = c0.problem(d, runner_stream(d));
  size_t k = 0;
  for (size_t i = 0; i < n_in; ++i) {
    const Role role = c0.op->inputs[i].role;
    TensorBuf& b = probe_args.call.inputs[i];
    if (role == Role::index) {
      b.rows = int64_t(idx.size());
      continue;
    }
    b.rows = c.inputs[k].rows;
    b.cols = c.inputs[k].cols;
    ++k;
  }
  pr.apply(probe_args);
  if (impl.takes_tensors()) {
    // A tensor carries its own shape: table inputs have as many rows as the
    // call says gates (gates = 0 among the probes), and the outputs are
    // shaped as the call's problem says.
    const gatecheck_problem& p = probe_args.call.p;
    for (size_t i = 0; i < n_in; ++i)
      if (c0.op->inputs[i].role == Role::table && p.gates != c0.gates) probe_args.call.inputs[i].rows = p.gates;
    for (size_t i = 0; i < c0.op->outputs.size(); ++i) {
      const Role role = c0.op->outputs[i].role;
      probe_args.call.outputs[i].rows = role_rows(role, p.rows, p.gates);
      probe_args.call.outputs[i].cols = role_cols(role, p.dim);
    }
  }
  const Status s = impl.takes_tensors() ? impl.tensors->call(probe_args.call) : impl.call(probe_args.call);
  std::ostringstream bad;
  const char* op = pass_name(pr.pass);
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
  const Status sync = sync_after_call(impl, runner_stream(d));
  if (!sync.ok()) bad << (bad.tellp() > 0 ? "; " : "") << op << " left a device error: " << sync.message;
  buf.fetch();
  int64_t f = 0, l = 0;
  for (size_t i = 0; i < n_in; ++i) {
    if (buf.changed_input_bytes(i, &f)) bad << (bad.tellp() > 0 ? "; " : "") << "input " << buf.name(i) << " was modified";
    if (buf.damaged_guard_bytes(i, &f, &l))
      bad << (bad.tellp() > 0 ? "; " : "") << "guard bytes around " << buf.name(i) << " were overwritten";
  }
  for (size_t i = n_in; i < n_regions; ++i) {
    const uint8_t* now = buf.host(i);
    size_t changed = 0;
    for (size_t b = 0; b < buf.size(i); ++b) changed += now[b] != pattern[b % pattern.size()];
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
constexpr const char* kProbeTask = "bad_input_probes";
struct ProbeTaskRegistrar {
  ProbeTaskRegistrar() { register_fresh_process_task(kProbeTask, probe_status); }
} probe_task_registrar __attribute__((init_priority(kFreshProcessTaskPriority)));

}  // namespace

// A case with no rows, columns or gates cannot carry every probe: they run on a small valid one.
bool error_inputs_stand_in(const Case& c, const ValidInputs& valid, Case* out) {
  if (c.rows >= 1 && c.dim >= 1 && c.gates >= 1) return false;
  *out = base_case(c, valid);
  return true;
}

Verdict error_inputs(const Implementation& impl, const Case& c0, const PropertyOptions& o) {
  Verdict v;
  Case c = c0;
  error_inputs_stand_in(c0, o.valid, &c);
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
  } else if (const Status at_once = in_child(-1); !take_lines(at_once)) {
    if (!o.name_probes) {  // a shrinking step: that it still fails is all it asks
      v.passed = false;
      v.compared = int64_t(all.size());
      v.probes_unnamed = true;
      v.message = impl.label() + " on " + describe(c) + ": the child running its " + std::to_string(all.size()) +
                  " bad-input probes did not return: " + at_once.message +
                  " (each probe runs alone on the minimal case, to name the one that did)";
      return v;
    }
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
  if (failed > 6) msg << "; and " << failed - 6 << " more";  // (the first six name the kinds)
  if (failed) {
    v.passed = false;
    v.message = impl.label() + " on " + describe(c) + ": " + std::to_string(failed) + " of " +
                std::to_string(v.compared) + " bad inputs not rejected as documented: " + msg.str();
  }
  return v;
}

}  // namespace gatecheck::checks
