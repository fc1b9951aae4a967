#include "plugin_stdout.h"

#include "fd_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <streambuf>

namespace gatecheck {

namespace {
std::atomic<bool> g_cout_only{false};  // report_only_through_cout() was called
std::atomic<bool> g_diverted{false};   // fd 1 is a copy of fd 2 for good
// Scopes on several threads at once (two plugins called in parallel): the
// first to open points fd 1 at stderr, the last to close puts it back, and
// the flushes of the shared streams take turns.
std::mutex g_streams;
int g_open_scopes = 0;
int g_saved_stdout = -1;  // fd 1 as it was, while scopes are open (-1: nothing to put back)
}  // namespace

void flush_stdout_streams() {
  const std::lock_guard<std::mutex> lock(g_streams);
  std::cout.flush();
  std::fflush(stdout);
}

PluginStreamsPaused::PluginStreamsPaused() {
  g_streams.lock();
  held_ = true;
}

void PluginStreamsPaused::release() {
  if (!held_) return;
  held_ = false;
  g_streams.unlock();
}

PluginStdoutToStderr::PluginStdoutToStderr(bool active) : active_(active) {
  if (!active) return;
  const std::lock_guard<std::mutex> lock(g_streams);
  // gatecheck's pending report first: a plugin that crashes or exits in the
  // call must not take it with it (the crash guard ends with _exit).
  std::cout.flush();
  std::fflush(stdout);
  if (g_diverted) return;  // fd 1 is stderr already
  if (g_open_scopes++ > 0) return;
  g_saved_stdout = ::dup(1);
  if (g_saved_stdout >= 0 && ::dup2(2, 1) < 0) {  // no stderr to send it to: leave stdout as it is
    ::close(g_saved_stdout);
    g_saved_stdout = -1;
  }
}

PluginStdoutToStderr::~PluginStdoutToStderr() {
  if (!active_) return;
  const std::lock_guard<std::mutex> lock(g_streams);
  std::fflush(stdout);
  if (g_diverted) return;
  if (--g_open_scopes > 0 || g_saved_stdout < 0) return;
  ::dup2(g_saved_stdout, 1);
  ::close(g_saved_stdout);
  g_saved_stdout = -1;
}

namespace {

// std::cout's new buffer: writes to a file descriptor, a line at a time on a
// terminal (as stdout was), else when full, flushed or at exit.
class FdOutBuf : public std::streambuf {
 public:
  explicit FdOutBuf(int fd) : fd_(fd), line_(::isatty(fd) == 1) { setp(buf_, buf_ + sizeof buf_); }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
      if (line_ && ch == '\n' && !drain()) return traits_type::eof();
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::streamsize put = std::streambuf::xsputn(s, n);
    if (line_ && traits_type::find(s, size_t(n), '\n') && !drain()) return 0;
    return put;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    if (!write_all(fd_, pbase(), size_t(pptr() - pbase()))) return false;
    setp(buf_, buf_ + sizeof buf_);
    return true;
  }
  int fd_;
  bool line_;
  char buf_[1 << 13];
};

}  // namespace

void report_only_through_cout() { g_cout_only = true; }

void divert_stdout_for_plugins() {
  static std::once_flag once;
  if (!g_cout_only) return;
  std::call_once(once, [] {
    std::cout.flush();
    std::fflush(stdout);
    // close-on-exec: a process the plugin starts must not hold the report open
    const int report = ::fcntl(1, F_DUPFD_CLOEXEC, 0);
    if (report < 0) return;
    if (::dup2(2, 1) < 0) {
      ::close(report);
      return;
    }
    // Never freed: std::cout is flushed at exit, after every destructor of ours.
    std::cout.rdbuf(new FdOutBuf(report));
    g_diverted = true;
  });
}

}  // namespace gatecheck
