#include "plugin_call_lock.h"

#include <map>
#include <memory>
#include <vector>

namespace gatecheck {

namespace {

struct Registry {
  std::mutex m;  // guards `locks` (never held while waiting on a plugin's lock, but by PluginCallsPaused)
  std::map<const void*, std::unique_ptr<std::mutex>> locks;
  std::vector<std::mutex*> paused;  // what PluginCallsPaused locked
};

Registry& registry() {
  static Registry* r = new Registry;  // never freed: plugin calls may outlive static destructors
  return *r;
}

thread_local std::mutex* t_held = nullptr;  // the plugin lock this thread holds (calls do not nest)

std::mutex* lock_of(const void* api) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.m);
  auto& slot = r.locks[api];
  if (!slot) slot = std::make_unique<std::mutex>();
  return slot.get();
}

}  // namespace

PluginCallLock::PluginCallLock(const void* api, bool needed) {
  if (!needed || t_held) return;  // (a call from inside a call of the same thread: its lock is held already)
  m_ = lock_of(api);
  m_->lock();
  t_held = m_;
}

PluginCallLock::~PluginCallLock() {
  if (!m_) return;
  t_held = nullptr;
  m_->unlock();
}

PluginCallsPaused::PluginCallsPaused() {
  Registry& r = registry();
  r.m.lock();
  r.paused.clear();
  for (auto& kv : r.locks)
    if (kv.second.get() != t_held) {
      kv.second->lock();
      r.paused.push_back(kv.second.get());
    }
  held_ = true;
}

void PluginCallsPaused::release() {
  if (!held_) return;
  held_ = false;
  Registry& r = registry();
  for (std::mutex* m : r.paused) m->unlock();
  r.paused.clear();
  r.m.unlock();
}

}  // namespace gatecheck
