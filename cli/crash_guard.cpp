#include "crash_guard.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "cli.h"

namespace gatecheck {

namespace {
char g_message[4096];
volatile sig_atomic_t g_len = 0;
pid_t g_guarded_pid = 0;  // the process that installed the guard (not its forked children)
std::atomic<long long> g_last_kick_ms{0};
std::atomic<long long> g_watchdog_ms{0};  // 0: not armed

void say(const char* s) { (void)!write(2, s, strlen(s)); }

void on_fatal(int sig) {
  if (getpid() == g_guarded_pid) {
    say("\ngatecheck: fatal signal ");
    say(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGILL ? "SIGILL" : sig == SIGFPE ? "SIGFPE" : "SIGABRT");
    say("\n");
    if (g_len > 0) (void)!write(2, g_message, size_t(g_len));
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// exit() while a message is set: an implementation ended the process.
void on_exit_during_call() {
  if (getpid() != g_guarded_pid || g_len == 0) return;
  say("\ngatecheck: an implementation ended the process (exit() or quick_exit()) before returning\n");
  (void)!write(2, g_message, size_t(g_len));
  _exit(kExitCannotRun);
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void watch() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const long long limit = g_watchdog_ms.load();
    if (limit <= 0 || g_len == 0 || now_ms() - g_last_kick_ms.load() <= limit) continue;
    char head[128];
    std::snprintf(head, sizeof head, "\ngatecheck: no progress for %g s: the implementation seems hung (--timeout)\n",
                  double(limit) / 1000);
    say(head);
    (void)!write(2, g_message, size_t(g_len));
    _exit(kExitCannotRun);
  }
}
}  // namespace

void install_crash_guard() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  g_guarded_pid = getpid();
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) signal(sig, on_fatal);
  atexit(on_exit_during_call);
  at_quick_exit(on_exit_during_call);
}

void set_crash_message(const std::string& message) {
  g_len = 0;
  const size_t n = message.size() < sizeof g_message - 1 ? message.size() : sizeof g_message - 1;
  memcpy(g_message, message.data(), n);
  g_len = sig_atomic_t(n);
}

void watchdog_arm(double seconds) {
  static bool started = false;
  g_last_kick_ms = now_ms();
  g_watchdog_ms = (long long)(seconds * 1000);
  if (!started && seconds > 0) {
    started = true;
    std::thread(watch).detach();
  }
}

void watchdog_kick() { g_last_kick_ms = now_ms(); }

}  // namespace gatecheck
