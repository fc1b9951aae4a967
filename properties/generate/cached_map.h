// rc::shrinkable::map whose value is computed once: a Shrinkable's value()
// runs its mapper again at every call, and a generated case is asked for it
// several times (the vacuity filter, the engine, the post-shrinks), each a
// full materialisation of its tensors. Same values, same shrink tree; the
// children are cached the same way. A Shrinkable (and its copies, which share
// the cache) is used by one thread at a time.
#pragma once

#include <rapidcheck.h>

#include <optional>
#include <utility>

namespace gatecheck {

template <class T, class F>
auto cached_map(rc::Shrinkable<T> s, F f) -> rc::Shrinkable<decltype(f(std::declval<T>()))>;

namespace detail {
template <class T, class F>
class CachedMapShrinkable {
 public:
  using R = decltype(std::declval<F>()(std::declval<T>()));
  CachedMapShrinkable(rc::Shrinkable<T> s, F f) : s_(std::move(s)), f_(std::move(f)) {}
  R value() const {
    if (!cache_) cache_.emplace(f_(s_.value()));
    return *cache_;
  }
  rc::Seq<rc::Shrinkable<R>> shrinks() const {
    const F f = f_;
    return rc::seq::map(s_.shrinks(), [f](rc::Shrinkable<T>&& child) { return cached_map(std::move(child), f); });
  }

 private:
  rc::Shrinkable<T> s_;
  F f_;
  mutable std::optional<R> cache_;
};
}  // namespace detail

template <class T, class F>
auto cached_map(rc::Shrinkable<T> s, F f) -> rc::Shrinkable<decltype(f(std::declval<T>()))> {
  return rc::makeShrinkable<detail::CachedMapShrinkable<T, F>>(std::move(s), std::move(f));
}

}  // namespace gatecheck
