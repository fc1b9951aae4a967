// The Python door (python_impl.h). The only translation unit with Python's
// and pybind11's headers, and the DLPack ABI header LibTorch ships.
#include <Python.h>  // first, as Python asks
#include <pybind11/pybind11.h>

#if __has_include(<ATen/dlpack.h>)  // LibTorch ships the DLPack ABI header
#include <ATen/dlpack.h>
#else
#include <dlpack/dlpack.h>
#endif
#include <cuda_runtime.h>
#include <signal.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "plugin_stdout.h"
#include "python_impl.h"

namespace py = pybind11;

namespace gatecheck {

namespace {

// ---- the interpreter -----------------------------------------------------------

// Where the gatecheck package lives: installed beside this program
// (GATECHECK_PYTHON_INSTALL_RELDIR from its folder), else in the build tree.
std::string package_dir() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, size_t(n));
    dir = dir.substr(0, dir.rfind('/')) + "/" + GATECHECK_PYTHON_INSTALL_RELDIR;
    if (::access((dir + "/gatecheck/_door.py").c_str(), R_OK) == 0) return dir;
  }
  return GATECHECK_PYTHON_BUILD_DIR;
}

// SIGINT stays the process's. CPython puts its own handler wherever SIGINT has
// the default action when a module imports signal (torch does), and that
// handler only raises KeyboardInterrupt in Python code on the main thread:
// calls made from worker threads never see it, so the Ctrl-C was lost, and
// one during an import failed the implementation's load. A command that stops
// gracefully has its own handler in before the interpreter starts; otherwise
// this one, which does what the default action does, keeps CPython out.
extern "C" void sigint_as_by_default(int sig) {
  signal(sig, SIG_DFL);
  raise(sig);
}
void keep_sigint_from_python() {
  struct sigaction now {};
  if (sigaction(SIGINT, nullptr, &now) != 0 || (now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_DFL) return;
  struct sigaction sa {};
  sa.sa_handler = sigint_as_by_default;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

// Starts the interpreter, once. It is never finalised: torch's threads may
// outlive any point we could pick.
void ensure_interpreter() {
  static std::once_flag once;
  static std::string failed;
  std::call_once(once, [] {
    if (Py_IsInitialized()) return;
    keep_sigint_from_python();
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;  // Ctrl-C stays gatecheck's (it stops after the case in hand)
    config.parse_argv = 0;
    // The interpreter whose torch this build links: as program_name, it makes
    // Python find its own prefix and, for a virtual environment, pyvenv.cfg
    // and its site-packages. GATECHECK_PYTHON names another.
    const char* exe = std::getenv("GATECHECK_PYTHON");
    PyStatus st = PyConfig_SetBytesString(&config, &config.program_name,
                                          exe && *exe ? exe : GATECHECK_PYTHON_EXECUTABLE);
    // Marks this process for the package: gatecheck.check() called while it imports a module (a
    // script's top level without a __main__ guard) would start another gatecheck, which would
    // import the module again, without end. check() refuses there (python/gatecheck/__init__.py).
    setenv("GATECHECK_EMBEDDED_PID", std::to_string(getpid()).c_str(), 1);
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
      failed = std::string("could not start Python (") + (st.err_msg ? st.err_msg : "no reason given") + ")";
      return;
    }
    try {
      // The package (no set-up needed: python:gatecheck.peers:... works as is),
      // and the current folder, as `python -m` has it. print() goes to stderr:
      // stdout carries the report.
      py::module_ sys = py::module_::import("sys"), os = py::module_::import("os");
      py::list path = sys.attr("path");
      path.insert(0, package_dir());
      path.insert(0, os.attr("getcwd")());
      sys.attr("stdout") = sys.attr("stderr");
    } catch (const py::error_already_set& e) {
      failed = std::string("could not set up Python: ") + e.what();
    }
    PyEval_SaveThread();  // release the GIL: every call takes it (PyGILState)
  });
  if (!failed.empty()) throw std::runtime_error("python: " + failed);
}

// One call into Python at a time, process-wide, whatever threads the engine
// runs: a Python implementation need not be thread-safe, and the GIL alone
// does not serialise calls (torch releases it inside its ops). Taken before
// the GIL, never while holding it.
std::mutex& call_mutex() {
  static std::mutex m;
  return m;
}

// A worker thread's Python thread state, made at its first call and kept
// until the thread ends. Otherwise pybind11 makes one and deletes it around
// every call: 12 µs a call on the CI machine, 20 with torch's autograd in it.
// Threads that have one already (the interpreter's own) are left as they are.
class KeptThreadState {
 public:
  KeptThreadState() {  // the caller holds call_mutex(), not the GIL
    if (PyGILState_GetThisThreadState()) return;
    state_ = PyGILState_Ensure();
    ts_ = PyEval_SaveThread();
  }
  ~KeptThreadState() {  // at the thread's end: nothing of ours holds the GIL for long
    if (!ts_ || !Py_IsInitialized()) return;
    PyEval_RestoreThread(ts_);
    PyGILState_Release(state_);
  }
  KeptThreadState(const KeptThreadState&) = delete;
  KeptThreadState& operator=(const KeptThreadState&) = delete;

 private:
  PyGILState_STATE state_{};
  PyThreadState* ts_ = nullptr;
};

void keep_thread_state() { thread_local KeptThreadState kept; }

// gatecheck._door, imported once and never released (it lives as long as
// the interpreter). The caller holds the GIL.
py::handle door_module() {
  static PyObject* module = nullptr;
  if (!module) module = py::module_::import("gatecheck._door").release().ptr();
  return module;
}

// "TypeName: message" of the Python exception in hand (e.what() of
// pybind11 adds its own traceback format).
std::string exception_text(const py::error_already_set& e) {
  try {
    py::object lines = py::module_::import("traceback").attr("format_exception_only")(e.type(), e.value());
    std::string s;
    for (py::handle l : lines) s += l.cast<std::string>();
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  } catch (const py::error_already_set&) {
    return e.what();
  }
}

// ---- DLPack views of gatecheck's buffers ------------------------------------------

struct View {
  DLManagedTensor managed{};
  int64_t shape[2] = {0, 0};
  int64_t strides[2] = {0, 1};
};

void free_unconsumed(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {  // never handed to torch
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    m->deleter(m);
  }
}

DLDataType dl_dtype(int32_t dtype) {
  switch (DType(dtype)) {
    case DType::f16: return {kDLFloat, 16, 1};
    case DType::bf16: return {kDLBfloat, 16, 1};
    default: return {kDLFloat, 32, 1};
  }
}

// A capsule torch.from_dlpack turns into a tensor over `data` (never copied,
// never freed by torch): [rows, cols] row-major, or [rows] when cols < 0.
py::object capsule(const void* data, DLDataType t, DLDevice dev, int64_t rows, int64_t cols) {
  auto* v = new View;
  v->managed.manager_ctx = v;
  v->managed.deleter = [](DLManagedTensor* m) { delete static_cast<View*>(m->manager_ctx); };
  DLTensor& d = v->managed.dl_tensor;
  d.data = const_cast<void*>(data);
  d.device = dev;
  d.dtype = t;
  d.ndim = cols < 0 ? 1 : 2;
  v->shape[0] = rows;
  v->shape[1] = cols;
  v->strides[0] = cols < 0 ? 1 : cols;
  d.shape = v->shape;
  d.strides = v->strides;
  d.byte_offset = 0;
  PyObject* c = PyCapsule_New(&v->managed, "dltensor", free_unconsumed);
  if (!c) {
    delete v;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(c);
}

// The capsule of one buffer of a call: [rows, cols], or one dimension for
// the index ([rows]) and a column tensor ([dim]).
py::object capsule(Role role, const TensorBuf& b, DLDataType t, DLDevice dev) {
  if (role == Role::index) return capsule(b.data, {kDLInt, 64, 1}, dev, b.rows, -1);
  if (role == Role::column) return capsule(b.data, t, dev, b.cols, -1);
  return capsule(b.data, t, dev, b.rows, b.cols);
}

// The capsules of the inputs the pass takes and the outputs it makes (both
// passes' with `all`), in the op's order (the door puts gradients in its
// own order: _door._Op).
py::list capsules(const OpCall& c, DLDataType t, DLDevice dev, bool all = false) {
  py::list l;
  for (size_t i = 0; i < c.op->inputs.size(); ++i)
    if (all || c.takes(i)) l.append(capsule(c.op->inputs[i].role, c.inputs[i], t, dev));
  for (size_t i = 0; i < c.op->outputs.size(); ++i)
    if (all || c.makes(i)) l.append(capsule(c.op->outputs[i].role, c.outputs[i], t, dev));
  return l;
}

py::dict scalars_of(const OpCall& c) {
  py::dict d;
  for (size_t i = 0; i < c.op->scalars.size(); ++i) d[c.op->scalars[i].name] = c.scalars[i];
  return d;
}

// The op as the door reads it: its tensors with role, pass and what each
// gradient is the gradient of, and its scalars.
py::dict op_description(const OpSchema& op) {
  auto entry = [](const char* name, Role role, Pass pass, const char* grad_of) {
    py::dict e;
    e["name"] = name;
    e["role"] = role_name(role);
    e["pass"] = pass_name(pass);
    e["grad_of"] = grad_of ? py::object(py::str(grad_of)) : py::object(py::none());
    return e;
  };
  py::list inputs, outputs, scalars;
  for (const auto& in : op.inputs) inputs.append(entry(in.name, in.role, in.pass, in.grad_of));
  for (const auto& out : op.outputs) {
    py::dict e = entry(out.name, out.role, out.pass, out.grad_of);
    e["reduces"] = out.kind == OutputKind::segment_sum || out.kind == OutputKind::all_rows_sum;  // over rows
    outputs.append(e);
  }
  for (const auto& s : op.scalars) scalars.append(py::str(s.name));
  py::dict d;
  d["name"] = op.name;
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  d["scalars"] = scalars;
  return d;
}

// ---- the implementation ------------------------------------------------------

class PythonCalls final : public TensorCalls {
 public:
  PythonCalls(py::object door, Device device) : door_(std::move(door)), device_(device) {}
  ~PythonCalls() override {
    if (!Py_IsInitialized()) {
      door_.release();  // nothing left to tell
      return;
    }
    py::gil_scoped_acquire gil;
    door_ = py::object();
  }

  Status call(const OpCall& c) const override {
    const char* op = c.pass == Pass::forward ? "forward" : "backward";
    return call(op, c.p, [&](DLDataType t, DLDevice dev) { return py::make_tuple(capsules(c, t, dev), scalars_of(c)); });
  }

  Status forward_backward(const OpCall& fwd, const OpCall& bwd, bool* failed_in_forward) const override {
    *failed_in_forward = true;
    // Every buffer of the two calls: bwd takes every input, and the outputs
    // of both passes are fwd's and bwd's, which share the arena's buffers.
    OpCall both = bwd;
    for (size_t i = 0; i < both.outputs.size(); ++i)
      if (fwd.makes(i)) both.outputs[i] = fwd.outputs[i];
    return call(
        "forward_backward", fwd.p,
        [&](DLDataType t, DLDevice dev) { return py::make_tuple(capsules(both, t, dev, true), scalars_of(fwd)); },
        failed_in_forward);
  }

  std::string exchange_state() const override { return exchange_state_; }

  Status exchange_partial(const OpCall& bwd, std::vector<uint64_t>* state) const override {
    return call_exchange("exchange_partial", bwd.p, state, [&](DLDataType t, DLDevice dev) {
      return py::make_tuple(inputs_of(bwd, t, dev), scalars_of(bwd));
    });
  }

  Status exchange_combine(const std::vector<const std::vector<uint64_t>*>& states,
                          std::vector<uint64_t>* out) const override {
    gatecheck_problem p{};
    p.device = int32_t(Device::cpu);
    return call_exchange("exchange_combine", p, out, [&](DLDataType, DLDevice) {
      py::list l;
      for (const auto* s : states)
        l.append(py::bytes(reinterpret_cast<const char*>(s->data()), s->size() * sizeof(uint64_t)));
      return py::make_tuple(l, py::dict());
    });
  }

  Status exchange_finalize(const OpCall& bwd, const std::vector<uint64_t>& state) const override {
    return call_exchange("exchange_finalize", bwd.p, nullptr, [&](DLDataType t, DLDevice dev) {
      py::list l = inputs_of(bwd, t, dev);
      for (size_t i = 0; i < bwd.op->outputs.size(); ++i)  // the row reductions: the outputs with buffers
        if (bwd.outputs[i].data) l.append(capsule(bwd.op->outputs[i].role, bwd.outputs[i], t, dev));
      py::dict sc = scalars_of(bwd);
      return py::make_tuple(py::make_tuple(py::bytes(reinterpret_cast<const char*>(state.data()),
                                                     state.size() * sizeof(uint64_t)),
                                           l),
                            sc);
    });
  }

  std::string exchange_state_;  // from the door, "" for none

 private:
  // The capsules of every input a backward call takes, in the op's order.
  static py::list inputs_of(const OpCall& c, DLDataType t, DLDevice dev) {
    py::list l;
    for (size_t i = 0; i < c.op->inputs.size(); ++i)
      if (c.takes(i)) l.append(capsule(c.op->inputs[i].role, c.inputs[i], t, dev));
    return l;
  }

  // The device the DLPack capsules name: this implementation's.
  DLDevice dl_device() const {
    if (device_ != Device::cuda) return {kDLCPU, 0};
    int id = 0;
    cudaGetDevice(&id);
    return {kDLCUDA, id};
  }

  // A door failure (head, traceback, ...) as one message: the traceback under
  // its heading, each line indented one step more.
  static std::string failure_message(const py::tuple& t) {
    std::string msg = t[0].cast<std::string>();
    const std::string frames = t[1].cast<std::string>();
    if (frames.empty()) return msg;
    msg += kTracebackHeading;
    size_t at = 0;
    for (size_t nl; at <= frames.size(); at = nl + 1) {
      nl = frames.find('\n', at);
      if (nl == std::string::npos) nl = frames.size();
      msg += "\n  " + frames.substr(at, nl - at);
    }
    return msg;
  }

  // Calls gatecheck._door.FN(door, args..., stream, device), which returns
  // (failure or None, state bytes or None); the bytes go to *state.
  template <class MakeArgs>
  Status call_exchange(const char* fn, const gatecheck_problem& p, std::vector<uint64_t>* state,
                       MakeArgs make) const {
    std::lock_guard<std::mutex> one_at_a_time(call_mutex());
    keep_thread_state();
    py::gil_scoped_acquire gil;
    try {
      const py::tuple args = make(dl_dtype(p.dtype), dl_device());
      const py::tuple r = door_module()
                              .attr(fn)(door_, args[0], args[1], reinterpret_cast<uintptr_t>(p.stream),
                                        device_name(device_))
                              .cast<py::tuple>();
      if (!r[0].is_none()) return Status::error(ErrorKind::implementation, failure_message(r[0].cast<py::tuple>()));
      if (state) {
        const std::string b = r[1].cast<std::string>();
        state->assign(b.size() / sizeof(uint64_t), 0);
        if (!b.empty()) std::memcpy(state->data(), b.data(), state->size() * sizeof(uint64_t));
      }
      return Status::success();
    } catch (const py::error_already_set& e) {
      return Status::error(ErrorKind::implementation, std::string("python door (") + fn + "): " + exception_text(e));
    } catch (const std::exception& e) {
      return Status::error(ErrorKind::implementation, std::string("python door (") + fn + "): " + e.what());
    }
  }

  // Calls gatecheck._door.OP. It returns None, or (head, traceback), or for
  // forward_backward (head, traceback, failed in forward).
  template <class MakeCapsules>
  Status call(const char* op, const gatecheck_problem& p, MakeCapsules make, bool* failed_in_forward = nullptr) const {
    std::lock_guard<std::mutex> one_at_a_time(call_mutex());
    keep_thread_state();
    py::gil_scoped_acquire gil;
    try {
      const py::tuple args = make(dl_dtype(p.dtype), dl_device());
      py::object failure = door_module().attr(op)(door_, args[0], args[1], reinterpret_cast<uintptr_t>(p.stream),
                                                  device_name(device_));
      if (failure.is_none()) return Status::success();
      const auto t = failure.cast<py::tuple>();
      if (failed_in_forward && t.size() > 2) *failed_in_forward = t[2].cast<bool>();
      return Status::error(ErrorKind::implementation, failure_message(t));
    } catch (const py::error_already_set& e) {  // the glue itself failed
      return Status::error(ErrorKind::implementation, std::string("python door (") + op + "): " + exception_text(e));
    } catch (const std::exception& e) {
      return Status::error(ErrorKind::implementation, std::string("python door (") + op + "): " + e.what());
    }
  }

  py::object door_;  // gatecheck._door.Door
  Device device_;
};

// An implementation from a resolved Door; the caller holds the GIL.
Implementation from_door(py::object door, Device device, const OpSchema& op) {
  Implementation impl;
  impl.op = &op;
  impl.name = "python:" + door.attr("name").cast<std::string>();
  impl.device = device;
  impl.declared_claims = door.attr("claims")(device_name(device)).cast<std::string>();
  auto calls = std::make_shared<PythonCalls>(door, device);
  const py::object state = door.attr("exchange_state");
  calls->exchange_state_ = state.is_none() ? "" : state.cast<std::string>();
  // Declaring an exchange claims split_invariance, unless the target says what it claims.
  if (!calls->exchange_state_.empty() && impl.declared_claims.empty()) impl.declared_claims = "default, split_invariance";
  impl.tensors = std::move(calls);
  return impl;
}

// Turns what the glue raised while resolving a target into our exceptions:
// BadTarget is a malformed spec (SpecError), anything else means it cannot run.
[[noreturn]] void rethrow(const py::error_already_set& e) {
  const std::string what = exception_text(e);
  const auto colon = what.find(": ");
  const std::string message = colon == std::string::npos ? what : what.substr(colon + 2);
  try {
    if (e.matches(door_module().attr("BadTarget"))) throw SpecError(message);
    if (e.matches(door_module().attr("Unavailable"))) throw std::runtime_error(message);
  } catch (const py::error_already_set&) {
  }
  throw std::runtime_error(what);
}

Implementation make_python(const std::string& target, Device device, const OpSchema& op) {
  if (target.empty()) throw SpecError("python: needs a target (python:MODULE:ATTR or python:FILE.py:ATTR)");
  divert_stdout_for_plugins();  // print() and C extensions write to fd 1: the report keeps stdout
  ensure_interpreter();
  std::lock_guard<std::mutex> one_at_a_time(call_mutex());
  py::gil_scoped_acquire gil;
  try {
    return from_door(door_module().attr("resolve")(target, device_name(device), op_description(op)), device, op);
  } catch (const py::error_already_set& e) {
    rethrow(e);
  }
}

}  // namespace

void enable_python_implementations() { register_implementation_maker("python:", make_python); }

}  // namespace gatecheck
