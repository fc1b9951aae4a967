// Comparisons put off until a case's calls are over, so that its device hold
// is given back first (PropertyOptions::device_done), each kept with the
// outputs it compares. Within a budget of kept bytes: past it, those kept so
// far are compared at once, in order, then the newest (kept, or compared at
// once if it alone is past the budget), with the device still held. A corpus
// plan may ask for a thousand repeats of a large case.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "../../case/case.h"
#include "../../harness/run/stage_clock.h"

namespace gatecheck::checks {

class DeferredComparisons {
 public:
  using Compare = std::function<void(const std::vector<HostTensor>&)>;
  static constexpr size_t kDefaultBudgetBytes = size_t(256) << 20;

  explicit DeferredComparisons(size_t budget_bytes = kDefaultBudgetBytes) : budget_(budget_bytes) {}

  void add(std::vector<HostTensor> outs, Compare cmp) {
    size_t bytes = 0;
    for (const HostTensor& t : outs) bytes += t.bytes.size();
    if (kept_bytes_ + bytes > budget_) flush();
    if (bytes > budget_) {
      run(outs, cmp);
      return;
    }
    kept_bytes_ += bytes;
    kept_.emplace_back(std::move(outs), std::move(cmp));
  }
  // Every comparison kept, in the order added.
  void flush() {
    for (auto& [outs, cmp] : kept_) run(outs, cmp);
    kept_.clear();
    kept_bytes_ = 0;
  }
  size_t kept() const { return kept_.size(); }

 private:
  static void run(const std::vector<HostTensor>& outs, const Compare& cmp) {
    const StageTimer t(Stage::compare);
    cmp(outs);
  }
  size_t budget_;
  std::vector<std::pair<std::vector<HostTensor>, Compare>> kept_;
  size_t kept_bytes_ = 0;
};

}  // namespace gatecheck::checks
