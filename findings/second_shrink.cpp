#include "second_shrink.h"

namespace gatecheck {

void shrink_failures_further(CheckReport* report, const std::vector<Subject>& impls, const BeforeShrinkRun& before,
                             const PropertyOptions& popt, const ShrinkStop& stop, double max_seconds) {
  for (auto& p : report->results) {
    if (!p.failure || p.failure->scale_shrunk) continue;  // still a scale case: shrunk by the scale tier
    if (report->interrupted || stop()) {  // its shrink never ran: say so, as for one cut short
      report->interrupted = true;
      p.failure->shrink_cut_short = true;
      continue;
    }
    for (const auto& impl : impls) {
      if (impl.name != p.impl || impl.device != p.device) continue;
      before(impl, p.property, p.failure->shrunk);
      try {
        const ShrinkResult sr = shrink_case(impl, p.property, p.failure->shrunk, nullptr, max_seconds, popt, stop);
        report->interrupted = sr.interrupted;
        p.failure->shrink_cut_short = sr.cut_short;
        if (sr.steps > 0) {
          p.failure->shrunk = sr.minimal;
          p.failure->verdict = sr.verdict;
          p.failure->shrink_steps += sr.steps;
        }
      } catch (const std::exception&) {
        // the failure did not reproduce outside the engine (e.g. flaky): keep RapidCheck's case
      }
    }
  }
}

}  // namespace gatecheck
