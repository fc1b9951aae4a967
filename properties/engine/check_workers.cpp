#include "check_workers.h"

#include <algorithm>
#include <chrono>

namespace gatecheck {

namespace {
thread_local int t_worker = 0;
}

int check_worker_index() { return t_worker; }

int default_check_jobs() { return int(std::max(1u, std::thread::hardware_concurrency())); }

CheckWorkers::CheckWorkers(int jobs) {
  for (int w = 0; w < std::max(1, jobs); ++w) threads_.emplace_back([this, w] { loop(w); });
}

CheckWorkers::~CheckWorkers() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    quit_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void CheckWorkers::loop(int w) {
  t_worker = w;
  long seen = 0;
  for (;;) {
    const std::function<void(int)>* job;
    {
      std::unique_lock<std::mutex> lock(m_);
      wake_.wait(lock, [&] { return quit_ || generation_ != seen; });
      if (quit_) return;
      seen = generation_;
      job = job_;
    }
    std::exception_ptr error;
    try {
      (*job)(w);
    } catch (...) {
      error = std::current_exception();
    }
    {
      const std::lock_guard<std::mutex> lock(m_);
      if (error && !error_) error_ = error;
      --running_;
    }
    done_.notify_all();
  }
}

void CheckWorkers::run(const std::function<void(int)>& job, const std::function<void()>& tick, double tick_seconds) {
  std::unique_lock<std::mutex> lock(m_);
  job_ = &job;
  error_ = nullptr;
  running_ = size();
  ++generation_;
  wake_.notify_all();
  const auto period = std::chrono::duration<double>(tick_seconds);
  while (running_ > 0) {
    if (done_.wait_for(lock, period, [&] { return running_ == 0; })) break;
    lock.unlock();
    if (tick) tick();
    lock.lock();
  }
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

}  // namespace gatecheck
