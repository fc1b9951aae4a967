// Puts an implementation whose entry points return a Status behind the
// plugin C ABI: 0 on success, else the ErrorKind, with the message kept for
// last_error(). Tag keeps each implementation's last message apart.
#pragma once

#include <string>

#include "gate_residual.h"

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

 private:
  static std::string& message() {
    thread_local std::string m;
    return m;
  }
};

}  // namespace gatecheck
