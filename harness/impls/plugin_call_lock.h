// The plugin ABI promises that a plugin is called from one thread at a time
// (kernels/gatecheck_plugin.h). A parallel check keeps that promise with one
// lock per plugin, taken around every call of an implementation that is not
// known to be thread-safe (Implementation::thread_safe): every Implementation
// made from the same library (the same plugin table, its key) shares it.
#pragma once

#include <mutex>


namespace gatecheck {

// Holds api's lock for a scope (no lock at all when `needed` is false).
class PluginCallLock {
 public:
  PluginCallLock(const void* key, bool needed);  // key: Implementation::call_lock_key()
  ~PluginCallLock();
  PluginCallLock(const PluginCallLock&) = delete;
  PluginCallLock& operator=(const PluginCallLock&) = delete;

 private:
  std::mutex* m_ = nullptr;
};

// Around a fork() of ours (harness/isolate.cpp): holds every plugin's lock,
// but one this thread holds itself, so that no plugin is half-way through a
// call in the child's copy of the process, and the child (one thread) can
// call any plugin without waiting on a lock that a thread it does not have
// holds. Call release() once in the parent and once in the child after the
// fork.
class PluginCallsPaused {
 public:
  PluginCallsPaused();
  ~PluginCallsPaused() { release(); }
  void release();
  PluginCallsPaused(const PluginCallsPaused&) = delete;
  PluginCallsPaused& operator=(const PluginCallsPaused&) = delete;

 private:
  bool held_ = false;
};

}  // namespace gatecheck
