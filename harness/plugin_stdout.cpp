#include "plugin_stdout.h"

#include <unistd.h>

#include <cstdio>

namespace gatecheck {

PluginStdoutToStderr::PluginStdoutToStderr(bool active) {
  if (!active) return;
  std::fflush(stdout);
  saved_stdout_ = ::dup(1);
  if (saved_stdout_ >= 0 && ::dup2(2, 1) < 0) {  // no stderr to send it to: leave stdout as it is
    ::close(saved_stdout_);
    saved_stdout_ = -1;
  }
}

PluginStdoutToStderr::~PluginStdoutToStderr() {
  if (saved_stdout_ < 0) return;
  std::fflush(stdout);
  ::dup2(saved_stdout_, 1);
  ::close(saved_stdout_);
}

}  // namespace gatecheck
