#include "device_gate.h"

#include <chrono>

namespace gatecheck {

DeviceGate::Shared::Shared(DeviceGate* g) : g_(g) {
  if (!g_) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(g_->m_);
  g_->cv_.wait(lock, [&] { return !g_->exclusive_ && g_->wanting_ == 0; });
  ++g_->shared_;
  waited_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

DeviceGate::Shared::~Shared() {
  if (!g_) return;
  {
    const std::lock_guard<std::mutex> lock(g_->m_);
    --g_->shared_;
  }
  g_->cv_.notify_all();
}

DeviceGate::Exclusive::Exclusive(DeviceGate* g) : g_(g) {
  if (!g_) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(g_->m_);
  ++g_->wanting_;
  g_->cv_.wait(lock, [&] { return !g_->exclusive_ && g_->shared_ == 0; });
  --g_->wanting_;
  g_->exclusive_ = true;
  waited_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

DeviceGate::Exclusive::~Exclusive() {
  if (!g_) return;
  {
    const std::lock_guard<std::mutex> lock(g_->m_);
    g_->exclusive_ = false;
  }
  g_->cv_.notify_all();
}

int DeviceGate::small_cases_running() const {
  const std::lock_guard<std::mutex> lock(m_);
  return shared_;
}

int DeviceGate::scale_cases_waiting() const {
  const std::lock_guard<std::mutex> lock(m_);
  return wanting_;
}

bool DeviceGate::scale_case_running() const {
  const std::lock_guard<std::mutex> lock(m_);
  return exclusive_;
}

DeviceGate* device_gate(Device d, bool cpu_too) {
  static DeviceGate cuda, cpu;
  if (d == Device::cuda) return &cuda;
  return cpu_too ? &cpu : nullptr;
}

}  // namespace gatecheck
