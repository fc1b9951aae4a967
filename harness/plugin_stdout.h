// A plugin shares gatecheck's process, and with it stdout, where gatecheck
// writes its report. While a plugin's code runs (loading, its calls,
// unloading), what it writes to stdout goes to stderr instead: printf,
// std::cout and write(1) alike, since fd 1 itself is pointed at stderr.
#pragma once

namespace gatecheck {

// From construction to destruction fd 1 is a copy of fd 2 (when `active`).
// stdout is flushed at both ends: first gatecheck's own pending output, to
// the real stdout; then what the plugin left in the C library's buffer
// (shared with gatecheck), to stderr. Not for two threads at once: gatecheck
// calls a plugin from one thread at a time.
class PluginStdoutToStderr {
 public:
  explicit PluginStdoutToStderr(bool active = true);
  ~PluginStdoutToStderr();
  PluginStdoutToStderr(const PluginStdoutToStderr&) = delete;
  PluginStdoutToStderr& operator=(const PluginStdoutToStderr&) = delete;

 private:
  int saved_stdout_ = -1;  // fd 1 as it was, put back at the end (-1: nothing to put back)
};

}  // namespace gatecheck
