// A plugin shares gatecheck's process, and with it stdout, where gatecheck
// writes its report. What a plugin writes to stdout goes to stderr instead:
// printf, std::cout and write(1) alike, since fd 1 itself is pointed at
// stderr. Two ways:
//  - while a plugin's code runs on our thread (loading, its calls), with
//    PluginStdoutToStderr, in every program;
//  - for good, from the first plugin load on, in a program whose own stdout
//    output all goes through std::cout (the CLI, the fuzz tools) and that says
//    so with report_only_through_cout(): then a thread of the plugin's own,
//    printing between calls or at exit, cannot reach the report either.
#pragma once

namespace gatecheck {

// From construction to destruction fd 1 is a copy of fd 2 (when `active`;
// once diverted for good, it already is, and only the flushes are left).
// stdout is flushed at both ends: first gatecheck's own pending output
// (std::cout and C's stdout), to the real stdout; then what the plugin left
// in the C library's buffer (shared with gatecheck), to stderr. Scopes may be
// open on several threads at once: fd 1 is stderr while any is open.
class PluginStdoutToStderr {
 public:
  explicit PluginStdoutToStderr(bool active = true);
  ~PluginStdoutToStderr();
  PluginStdoutToStderr(const PluginStdoutToStderr&) = delete;
  PluginStdoutToStderr& operator=(const PluginStdoutToStderr&) = delete;

 private:
  bool active_ = false;
};

// std::cout and C's stdout flushed, in turn with the scopes above (a fork
// flushes them first, or the child would write their contents again).
void flush_stdout_streams();

// Around a fork() of ours, after PluginCallsPaused (a call holds its plugin's
// lock, then the scopes' lock): holds the scopes' lock, so that no other
// thread is half-way through a scope or a flush in the child's copy of the
// process, where its copy of the lock would stay taken and the child's first
// plugin call would wait for ever. Call release() once in the parent and once
// in the child after the fork.
class PluginStreamsPaused {
 public:
  PluginStreamsPaused();
  ~PluginStreamsPaused() { release(); }
  void release();
  PluginStreamsPaused(const PluginStreamsPaused&) = delete;
  PluginStreamsPaused& operator=(const PluginStreamsPaused&) = delete;

 private:
  bool held_ = false;
};

// Call at start-up in a program that writes its stdout output only through
// std::cout (never printf or write(1)).
void report_only_through_cout();

// Called as a plugin loads. In such a program, the first time: std::cout
// moves to a copy of fd 1, and fd 1 becomes a copy of fd 2 for the rest of
// the process. Elsewhere, or if a descriptor cannot be copied, nothing.
void divert_stdout_for_plugins();

}  // namespace gatecheck
