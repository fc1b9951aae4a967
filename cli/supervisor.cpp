#include "supervisor.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "cli.h"
#include "crash_guard.h"

namespace gatecheck {

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

volatile sig_atomic_t g_child = 0;

extern "C" void forward_to_child(int sig) {
  if (g_child > 0) ::kill(pid_t(g_child), sig);
}

bool traced() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("TracerPid:", 0) == 0) return std::atoi(line.c_str() + 10) != 0;
  return false;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGKILL: return "SIGKILL (the OOM killer, kill -9 or a job's limit: nothing in the process sees it)";
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGPIPE: return "SIGPIPE";
    case SIGXCPU: return "SIGXCPU (a CPU time limit)";
    default: return nullptr;
  }
}

void say(const char* s) { (void)!::write(2, s, std::strlen(s)); }

// The parent's whole life: wait for the child, then end as it did.
[[noreturn]] void supervise(pid_t child, const sigset_t& old_mask) {
  g_child = child;
  struct sigaction sa {};
  sa.sa_handler = forward_to_child;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);  // a closed stderr must not end the wait
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0)
    if (errno != EINTR) _exit(kExitCannotRun);  // (no such child: cannot happen)
  const bool unheard = ended_unheard_in_a_call();
  if (unheard) {
    char head[256];
    if (WIFSIGNALED(status)) {
      const char* name = signal_name(WTERMSIG(status));
      if (name)
        std::snprintf(head, sizeof head, "\ngatecheck: killed by %s during a call\n", name);
      else
        std::snprintf(head, sizeof head, "\ngatecheck: killed by signal %d during a call\n", WTERMSIG(status));
    } else {
      std::snprintf(head, sizeof head,
                    "\ngatecheck: the process ended with status %d during a call, without returning from it "
                    "(_exit() inside an implementation?)\n",
                    WEXITSTATUS(status));
    }
    say(head);
    say_calls_in_flight();
  }
  if (WIFSIGNALED(status)) {  // die of the same signal, as a shell or a scheduler expects
    const int sig = WTERMSIG(status);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // (the child's core, if any, is the one to keep)
    ::signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, nullptr);
    ::raise(sig);
    _exit(128 + sig);
  }
  // An implementation's own status (an _exit(0) mid-call) must not read as the run's.
  _exit(unheard ? kExitCannotRun : WEXITSTATUS(status));
}

}  // namespace

void run_supervised() {
  const char* off = std::getenv("GATECHECK_SUPERVISOR");
  if ((off && std::strcmp(off, "0") == 0) || traced()) return;
  share_crash_messages();  // before the fork: the parent reads the child's messages
  // The forwarded signals wait until the parent forwards them (or the child handles them).
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) sigaddset(&forwarded, sig);
  sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {  // run unsupervised rather than not at all
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return;
  }
  if (child > 0) supervise(child, old_mask);
  // The child: ends with its parent (a kill -9 of gatecheck ends the run).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::raise(SIGKILL);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
}

}  // namespace gatecheck
