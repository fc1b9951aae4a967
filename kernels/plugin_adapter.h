// Puts an implementation whose entry points return a Status behind the
// plugin C ABI: 0 on success, else the ErrorKind, with the message kept for
// last_error(). Tag keeps each implementation's last message apart.
//
// A plugin built on another (the repro plugins: another's forward unchanged,
// its backward and then more; a device exchange that combines host states as
// the host's exchange does) calls it through forward_of, backward_of and
// combine_of, which pass its failure on as this plugin's own; an exchange that
// combines itself checks the arguments with check_combine_args.
#pragma once

#include <string>

#include "gate_residual.h"
#include "gatecheck_plugin_v2.h"
#include "gatecheck_split_exchange.h"

namespace gatecheck {

template <class Tag>
struct PluginAdapter {
  static int report(const Status& s) {
    if (s.ok()) return 0;
    message() = s.message;
    return int(s.kind);
  }
  static int null_problem(const char* op) {
    return report(Status::error(ErrorKind::null_pointer, std::string(op) + ": problem is null"));
  }
  // Another plugin's failure passed on: its code, its message kept as ours.
  static int relay(int rc, const char* msg) {
    if (rc) message() = msg ? msg : "";
    return rc;
  }
  static const char* last_error() { return message().c_str(); }

  // Plugin `to`'s entry point, its failure relayed as ours. The call comes
  // before last_error() is read: the order of a call's arguments is unspecified.
  static int forward_of(const gatecheck_plugin* to, const gatecheck_problem* p, const void* res, const void* gate,
                        const int64_t* index, const void* y, void* out) {
    const int rc = to->forward(p, res, gate, index, y, out);
    return relay(rc, to->last_error());
  }
  static int forward_of(const gatecheck_op_plugin* to, const gatecheck_call* c) {
    const int rc = to->forward(c);
    return relay(rc, to->last_error());
  }
  static int backward_of(const gatecheck_op_plugin* to, const gatecheck_call* c) {
    const int rc = to->backward(c);
    return relay(rc, to->last_error());
  }
  static int combine_of(const gatecheck_split_exchange* to, const gatecheck_problem* p, const uint64_t* const* states,
                        int32_t n, uint64_t* out) {
    const int rc = to->combine(p, states, n, out);
    return relay(rc, to->last_error());
  }

 private:
  static std::string& message() {
    thread_local std::string m;
    return m;
  }
};

// What every exchange's combine checks before it reads a state: the problem,
// out and the states present (n of them, none null), n not negative.
inline Status check_combine_args(const gatecheck_problem* p, const uint64_t* const* states, int32_t n,
                                 const uint64_t* out) {
  if (!p) return Status::error(ErrorKind::null_pointer, "combine: problem is null");
  if (!out || (n > 0 && !states)) return Status::error(ErrorKind::null_pointer, "combine: states or out is null");
  if (n < 0) return Status::error(ErrorKind::shape_mismatch, "combine: n=" + std::to_string(n) + " states, below 0");
  for (int32_t i = 0; i < n; ++i)
    if (!states[i]) return Status::error(ErrorKind::null_pointer, "combine: state " + std::to_string(i) + " is null");
  return Status::success();
}

}  // namespace gatecheck
