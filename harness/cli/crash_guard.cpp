#include "crash_guard.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

namespace gatecheck {

namespace {
char g_message[4096];
volatile sig_atomic_t g_len = 0;

void on_fatal(int sig) {
  static const char head[] = "\ngatecheck: fatal signal ";
  (void)!write(2, head, sizeof head - 1);
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGILL ? "SIGILL"
                     : sig == SIGFPE ? "SIGFPE" : "SIGABRT";
  (void)!write(2, name, strlen(name));
  (void)!write(2, "\n", 1);
  if (g_len > 0) (void)!write(2, g_message, size_t(g_len));
  signal(sig, SIG_DFL);
  raise(sig);
}
}  // namespace

void install_crash_guard() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) signal(sig, on_fatal);
}

void set_crash_message(const std::string& message) {
  g_len = 0;
  const size_t n = message.size() < sizeof g_message - 1 ? message.size() : sizeof g_message - 1;
  memcpy(g_message, message.data(), n);
  g_len = sig_atomic_t(n);
}

}  // namespace gatecheck
