// The threads of a parallel check: `jobs` workers, started once per run and
// given one job after another (each implementation x property). Each worker
// keeps what the runner makes per thread for the whole run: its buffer arena
// and, on CUDA, its stream (harness/call_arena.h).
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gatecheck {

// Which worker this thread is: 0 .. jobs-1 on a worker, 0 on any other thread
// (the one that called run_check shrinks there while the workers wait). A
// front end keeps one in-flight snapshot per worker by it.
int check_worker_index();

// The number of workers `check --jobs` defaults to: the machine's cores.
int default_check_jobs();

class CheckWorkers {
 public:
  explicit CheckWorkers(int jobs);
  ~CheckWorkers();
  CheckWorkers(const CheckWorkers&) = delete;
  CheckWorkers& operator=(const CheckWorkers&) = delete;

  int size() const { return int(threads_.size()); }
  // Runs job(w) on every worker w and returns once all have returned. Until
  // then, the calling thread calls tick() every `tick_seconds`. The first
  // exception a job throws is rethrown here (after every job has returned).
  void run(const std::function<void(int worker)>& job, const std::function<void()>& tick, double tick_seconds);

 private:
  void loop(int w);
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  long generation_ = 0;  // one per run()
  int running_ = 0;
  bool quit_ = false;
  std::exception_ptr error_;
};

}  // namespace gatecheck
