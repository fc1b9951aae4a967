// What isolate.cpp's two halves share: the child processes (isolate_fork.cpp)
// and the children kept from call to call (isolate_worker.cpp).
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "isolate.h"
#include "isolate_codec.h"

namespace gatecheck::isolate_detail {

// What kWorkerEnv holds for a worker kept from call to call
// (call_in_exec_worker): this prefix and its socket's descriptor.
constexpr const char* kWorkerEnv = "GATECHECK_ISOLATE_WORKER";
constexpr const char* kKeptWorkerPrefix = "kept:";

// Held from a child's pipe or socket being made until the parent has closed
// the child's end: so no other thread's fork copies that end into a child of
// its own, where it would keep the pipe from ever reaching end-of-file (a
// child kept from call to call lives long).
extern std::mutex g_forking;
// fork() while no other thread is mid-call in a plugin or inside a stdout
// scope, so that the child's copy of this process holds none of their locks.
// The caller holds g_forking.
pid_t fork_paused();
// A failed fork: the two ends made for the child are closed.
Status fork_failed(const int ends[2]);
std::string signal_name(int sig);
// What a child sent that does not decode. `who` (an implementation's label,
// or empty) leads the message.
Status malformed_result(const std::string& who, const std::exception& e, size_t bytes);
// The environment for execve of a worker: this process's, with kWorkerEnv
// set to `value` in `entry` (which must outlive the result).
std::vector<char*> worker_environment(const std::string& value, std::string* entry);

// The registered fresh-process tasks, and the Status for one that is not.
std::map<std::string, FreshProcessTask>& fresh_process_tasks();
Status unregistered_task(const std::string& task);
Status run_task(const Request& q, const Implementation& impl);

// The kept fresh-process worker's loop (isolate_worker.cpp), entered from the
// re-executed program's hook (isolate_fork.cpp).
[[noreturn]] void serve_exec_worker(int fd);

}  // namespace gatecheck::isolate_detail
