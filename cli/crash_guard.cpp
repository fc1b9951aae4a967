#include "crash_guard.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "../harness/impls/plugin_stdout.h"
#include "cli.h"

namespace gatecheck {

namespace {
// One message per thread that runs cases (the workers of `check --jobs`, and
// the main thread), each in a fixed slot, so that a handler reads it with no
// lock and no allocation.
struct Slot {
  char message[4096];
  std::atomic<int> len;
  std::atomic<long long> last_kick_ms;
};
// In memory shared with the supervisor (supervisor.h), mapped before it forks,
// so that it can say what was in flight when this process died unheard. Zero
// pages are zero atomics; only the guarded process writes here (its forked
// children have the same pages, and leave them alone).
struct Shared {
  std::atomic<int> slots_taken;
  std::atomic<int> reported;  // the process said itself why it ends (a signal, exit(), a hang, a quit)
  Slot slots[kCrashMessageSlots];
};
static_assert(std::atomic<int>::is_always_lock_free, "atomics in shared memory must be lock-free");
Shared* map_shared() {
  void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) p = new Shared();  // (unshared: the supervisor then sees no message)
  return static_cast<Shared*>(p);
}
Shared& shared() {
  static Shared* s = map_shared();
  return *s;
}
Slot* const g_slots = shared().slots;
std::atomic<int>& g_slots_taken = shared().slots_taken;
thread_local int t_slot = -1;  // this thread's slot (-1: none yet)
pid_t g_guarded_pid = 0;       // the process that installed the guard (not its forked children)
std::atomic<long long> g_watchdog_ms{0};  // 0: not armed
std::atomic<const char*> g_watchdog_option{"--timeout"};  // the limit the message names
std::atomic<int> g_loading{0};  // LoadWatches alive
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<long long>::is_always_lock_free,
              "signal handlers need lock-free atomics");

void say(const char* s) { (void)!write(2, s, strlen(s)); }
void say_slot(const Slot& s) {
  const int n = s.len.load();
  if (n > 0) (void)!write(2, s.message, size_t(n));
}
int slots_in_use() { return std::min(g_slots_taken.load(), kCrashMessageSlots); }
void say_every_slot() {
  for (int i = 0; i < slots_in_use(); ++i) say_slot(g_slots[i]);
}

// This thread's message if it has one, else every message set (the thread is
// one of the implementation's own, and any call in flight may be the cause).
void say_messages() {
  if (t_slot >= 0 && g_slots[t_slot].len.load() > 0) {
    say_slot(g_slots[t_slot]);
    return;
  }
  say_every_slot();
}

bool any_message() {
  for (int i = 0; i < slots_in_use(); ++i)
    if (g_slots[i].len.load() > 0) return true;
  return false;
}

void on_fatal(int sig) {
  if (getpid() == g_guarded_pid) {
    shared().reported = 1;
    say("\ngatecheck: fatal signal ");
    say(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGILL ? "SIGILL" : sig == SIGFPE ? "SIGFPE" : "SIGABRT");
    say("\n");
    say_messages();
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// exit() while a message is set: an implementation ended the process.
void on_exit_during_call() {
  if (getpid() != g_guarded_pid || !any_message()) return;
  shared().reported = 1;
  say("\ngatecheck: an implementation ended the process (exit() or quick_exit()) before returning\n");
  say_messages();
  _exit(kExitCannotRun);
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The slot with a message whose last kick is the oldest, if older than the
// limit: the call that has made no progress the longest (a worker waiting on
// a plugin's lock that a hung call holds has waited less long).
void watch() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const long long limit = g_watchdog_ms.load();
    if (limit <= 0) continue;
    const long long now = now_ms();
    int stale = -1, others = 0;
    for (int i = 0; i < slots_in_use(); ++i) {
      if (g_slots[i].len.load() == 0 || now - g_slots[i].last_kick_ms.load() <= limit) continue;
      if (stale >= 0) ++others;
      if (stale < 0 || g_slots[i].last_kick_ms.load() < g_slots[stale].last_kick_ms.load()) stale = i;
    }
    if (stale < 0) continue;
    shared().reported = 1;
    char head[160];
    std::snprintf(head, sizeof head, "\ngatecheck: no progress for %g s: the implementation seems hung (%s)\n",
                  double(limit) / 1000, g_watchdog_option.load());
    say(head);
    say_slot(g_slots[stale]);
    if (others > 0) {
      std::snprintf(head, sizeof head, "  (%d other worker%s made no progress either: waiting on it, or hung too)\n",
                    others, others == 1 ? "" : "s");
      say(head);
    }
    _exit(kExitCannotRun);
  }
}

// Slots given back by threads that ended (a run's workers end with it), to
// be taken again before a new one.
std::mutex g_free_mutex;
std::vector<int> g_free_slots;

// Gives the thread's slot back when the thread ends. A thread that ends
// with its message set ends in a call: exit() inside an implementation runs
// this thread's thread_local destructors first, before any atexit handler
// or static destructor, so the trap springs here, while the other workers
// still have every static they use (at the atexit handler, ours, the
// statics made after it were already gone under them: a SIGSEGV).
struct SlotOwner {
  ~SlotOwner() {
    if (t_slot < 0) return;
    if (g_slots[t_slot].len.load() != 0) on_exit_during_call();
    if (t_slot == kCrashMessageSlots - 1) return;  // (the last one may be shared)
    const std::lock_guard<std::mutex> lock(g_free_mutex);
    g_free_slots.push_back(t_slot);
  }
};

// This thread's slot, taken on first use; beyond kCrashMessageSlots threads
// at once, the last slot is shared.
Slot& my_slot() {
  if (t_slot < 0) {
    thread_local SlotOwner owner;
    {
      const std::lock_guard<std::mutex> lock(g_free_mutex);
      if (!g_free_slots.empty()) {
        t_slot = g_free_slots.back();
        g_free_slots.pop_back();
      }
    }
    if (t_slot < 0) t_slot = std::min(g_slots_taken.fetch_add(1), kCrashMessageSlots - 1);
  }
  return g_slots[t_slot];
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

namespace {
// Not in a forked child of the guarded process: the slots are shared.
bool slots_are_mine() { return g_guarded_pid == 0 || getpid() == g_guarded_pid; }
}  // namespace

void set_crash_message(const std::string& message) {
  if (!slots_are_mine()) return;
  Slot& s = my_slot();
  s.len = 0;
  const size_t n = message.size() < sizeof s.message - 1 ? message.size() : sizeof s.message - 1;
  memcpy(s.message, message.data(), n);
  s.last_kick_ms = now_ms();
  s.len = int(n);
}

void clear_crash_messages() {
  if (!slots_are_mine()) return;
  for (int i = 0; i < slots_in_use(); ++i) g_slots[i].len = 0;
}

void watchdog_arm(double seconds, const char* option) {
  static bool started = false;
  g_watchdog_option.store(option);
  for (int i = 0; i < slots_in_use(); ++i) g_slots[i].last_kick_ms = now_ms();
  g_watchdog_ms = (long long)(seconds * 1000);
  if (!started && seconds > 0) {
    started = true;
    std::thread(watch).detach();
  }
}

void watchdog_kick() {
  if (slots_are_mine()) my_slot().last_kick_ms = now_ms();
}

void share_crash_messages() { (void)shared(); }

bool ended_unheard_in_a_call() { return shared().reported.load() == 0 && any_message(); }

int say_calls_in_flight() {
  int n = 0;
  for (int i = 0; i < slots_in_use(); ++i) n += g_slots[i].len.load() > 0;
  if (n > 1) {
    char head[96];
    std::snprintf(head, sizeof head, "  (%d calls were in flight; any of them may have done it)\n", n);
    say(head);
  }
  say_every_slot();
  return n;
}

LoadWatch::LoadWatch(double seconds) : saved_ms_(g_watchdog_ms.load()), saved_option_(g_watchdog_option.load()) {
  flush_stdout_streams();  // what was printed before must not end with a load that is quit or hung
  watchdog_arm(seconds, "--load-timeout");
  ++g_loading;
}

LoadWatch::~LoadWatch() {
  --g_loading;
  watchdog_arm(double(saved_ms_) / 1000, saved_option_);
}

void quit_if_loading(int sig, const char* stop_words) {
  if (g_loading.load() == 0 || getpid() != g_guarded_pid) return;
  shared().reported = 1;
  say("\ngatecheck: ");
  say(stop_words);
  say(" while an implementation was loading: quitting at once\n");
  say_every_slot();
  _exit(128 + sig);
}

}  // namespace gatecheck
