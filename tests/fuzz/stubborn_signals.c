/* Linked into a copy of the example plugin for nightly_stubborn.sh: on load
 * it catches SIGINT and SIGTERM and does nothing with them, as a user's
 * library may. The fuzzer that loads it then outlives Ctrl-C and the
 * watchdog's SIGTERM; the campaign must still stop (SIGKILL after a grace
 * period) and leave no fuzzer behind. */
#include <signal.h>
#include <string.h>

static void ignore_signal(int sig) { (void)sig; }

__attribute__((constructor)) static void catch_and_ignore_stop_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = ignore_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}
