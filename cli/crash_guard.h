// Crash safety for the CLI: the case under test is on disk before an
// implementation runs it, and a fatal signal (or an exit() from inside the
// implementation) prints which file holds it and how to replay it. A signal
// then kills the process with the same signal; an exit() ends it with
// kExitCannotRun, never with the status the implementation chose (a plugin's
// exit(0) must not read as a passing run).
#pragma once

#include <string>

namespace gatecheck {

// Several threads may run implementations at once (`check --jobs`): each has
// its own message, and the watchdog watches each. A crash prints the message
// of the thread that crashed (every message set, when that thread has none:
// a thread of the implementation's own).
constexpr int kCrashMessageSlots = 1024;  // threads with a message of their own (check's --jobs limit)

// Installs handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT, and an
// atexit/at_quick_exit trap (once). Forked children (--isolate) are left
// alone: their parent reports what happened to them.
void install_crash_guard();
// The message a crash on this thread prints from now on ("" clears it), and
// a watchdog kick. While any is set, an implementation may be running, so an
// exit() is trapped. Copied into a static buffer here, so the handler itself
// only calls write().
void set_crash_message(const std::string& message);
// Clears every thread's message (once the threads that set them are done).
void clear_crash_messages();

// A hang in a call we cannot interrupt (no --isolate): once armed, if a
// thread with a crash message set gets no watchdog_kick() for `seconds`, its
// message is printed with "no progress for S s" and the process ends with
// kExitCannotRun. The case is on disk already, so nothing is lost.
// `option` is the one the message names as the limit (0 seconds: no limit).
void watchdog_arm(double seconds, const char* option = "--timeout");
void watchdog_kick();

// Loading an implementation runs its code (a plugin's constructors, a Python
// module's import and gatecheck_setup), which no call's --timeout watches and
// nothing can interrupt. While a LoadWatch lives, the watchdog limits the load
// to `seconds` (naming --load-timeout; 0: no limit), and a stop signal ends the
// process at once (quit_if_loading): there is no case in hand to finish, and
// a hung load would never reach the next check of the stop. Its end puts back
// the watchdog's limit from before.
class LoadWatch {
 public:
  explicit LoadWatch(double seconds);
  ~LoadWatch();
  LoadWatch(const LoadWatch&) = delete;
  LoadWatch& operator=(const LoadWatch&) = delete;

 private:
  long long saved_ms_;
  const char* saved_option_;
};
// For a stop signal's handler (async-signal-safe): while a LoadWatch lives,
// says that the stop (stop_words: "interrupted by SIGINT") came during a load, prints what was loading, and ends the
// process with 128 + sig; otherwise it returns.
void quit_if_loading(int sig, const char* stop_words);

// For the supervisor (supervisor.h). The messages live in memory shared with
// a process forked after share_crash_messages(). Once the guarded process is
// gone, that one asks whether it ended during a call without saying so itself
// (a SIGKILL, _exit() inside an implementation: no handler ran), and prints
// every message set (returns how many).
void share_crash_messages();
bool ended_unheard_in_a_call();
int say_calls_in_flight();

// Sets the crash message for a scope, and clears it at the scope's end.
struct CrashMessageScope {
  explicit CrashMessageScope(const std::string& message) {
    set_crash_message(message);
    watchdog_kick();
  }
  ~CrashMessageScope() { set_crash_message(""); }
  CrashMessageScope(const CrashMessageScope&) = delete;
  CrashMessageScope& operator=(const CrashMessageScope&) = delete;
};

}  // namespace gatecheck
