#include "stop_signal.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "crash_guard.h"

namespace gatecheck {

namespace {
// Lock-free atomics: safe in a handler, and seen by every thread (the
// handler may run on the watchdog's thread as well as the main one).
std::atomic<int> g_stop{0};
std::atomic<long long> g_first_ms{0};  // CLOCK_MONOTONIC milliseconds of the first signal
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<long long>::is_always_lock_free,
              "signal handlers need lock-free atomics");

long long now_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

}  // namespace

const char* stop_words_for(int sig) {  // (async-signal-safe: the handler below calls it)
  switch (sig) {
    case SIGTERM: return "interrupted by SIGTERM";
    case SIGHUP: return "interrupted by SIGHUP";
    default: return "interrupted by SIGINT";
  }
}

namespace {
extern "C" void on_stop(int sig) {
  quit_if_loading(sig, stop_words_for(sig));  // a hung load never reaches the next check of the stop
  const long long now = now_ms();
  if (g_stop.load() != 0) {
    // The same signal sent twice at once is one request: timeout(1) and
    // `kill 0` send it to the process and to its group, and the two may even
    // run this handler on two threads at the same time. A later one means now.
    const long long first = g_first_ms.load();
    if (first == 0 || now - first < 1000) return;
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_first_ms.store(now);  // before g_stop: whoever sees g_stop set sees the time too
  g_stop.store(sig);
  static const char msg[] = "\ngatecheck: stopping after the case in hand; again to quit at once\n";
  const ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)n;
}
}  // namespace

void install_stop_handlers() {
  static bool done = false;
  if (done) return;
  done = true;
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a read or write in progress finishes
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);  // a closed terminal: the report and the saved cases still go out
}

int stop_signal() { return g_stop.load(); }
bool stop_requested() { return stop_signal() != 0; }
const char* stop_words() { return stop_words_for(stop_signal()); }
int stop_exit_code() { return 128 + stop_signal(); }

}  // namespace gatecheck
