// The sweep's run: each phase's cases made once and run on every
// implementation in turn (sweep.h).
#include "sweep.h"

#include <chrono>
#include <map>
#include <sstream>
#include <stdexcept>

#include "../oracles/op_oracles.h"
#include "../oracles/oracle.h"
#include "sweep_detail.h"

namespace gatecheck {

using namespace sweep_detail;

void Tally::add(const Tally& o) {
  compared += o.compared;
  failed += o.failed;
  claimed_failed = claimed_failed || o.claimed_failed;
  unclaimed_failed = unclaimed_failed || o.unclaimed_failed;
}

std::string InvarianceResult::verdict() const {
  Tally all;
  for (const Tally* t : {&all_rows_tally, &repeat_tally, &sub_tally, &sweep_tally}) all.add(*t);
  return all.verdict();
}

bool SweepImplResult::any_claimed_failure() const {
  if (!error.empty()) return true;
  const InvarianceResult& v = invariance;
  for (const Tally* t : {&v.all_rows_tally, &v.repeat_tally, &v.sub_tally, &v.sweep_tally, &v.segments, &v.splits})
    if (t->claimed_failed) return true;
  for (const AccuracyAt& a : accuracy)
    if (a.verdict == "fail" || a.eager_verdict == "fail" || !a.error.empty()) return true;
  return false;
}

namespace {

std::string seconds_since(std::chrono::steady_clock::time_point t0) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s";
  return s.str();
}

// The op's plain part at accuracy size `a`: every implementation's plain
// output against the library op's on its device (made once a device).
template <class Announce, class Guarded>
void plain_phase(const Case& c, const std::vector<Subject>& subjects, const SweepOptions& opt, size_t a,
                 std::vector<SweepImplResult>* res, const Announce& announce, const Guarded& guarded) {
  const Case p = plain_case(c);
  std::map<Device, PlainReference> refs;
  for (size_t i = 0; i < subjects.size(); ++i) {
    const Subject& s = subjects[i];
    const std::string where = "plain part at " + std::to_string(c.rows) + " rows";
    announce(i, where + ": " + s.label());
    guarded(i, where, [&] {
      PlainAt& at = (*res)[i].accuracy[a].plain.emplace();
      at.rows = c.rows;
      auto ref = refs.find(s.device);
      if (ref == refs.end()) {
        PlainReference made;
        if (opt.plain_reference) made = opt.plain_reference(p, s.device);
        else made.unavailable = "no library op to compare with was given";
        ref = refs.emplace(s.device, std::move(made)).first;
      }
      if (!ref->second.unavailable.empty()) {
        at.note = ref->second.unavailable;
        return;
      }
      at = compare_plain(plain_output(s, p), ref->second.out);
      at.note = ref->second.by;
    });
  }
}

}  // namespace

SweepRun run_sweep(const std::vector<Subject>& subjects, const std::vector<SweepImplResult>& unavailable,
                   const SweepGrid& g, const SweepOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  SweepRun run;
  run.grid = g;
  std::vector<SweepImplResult>& res = run.impls;
  std::vector<FailureSink> sinks;
  res.reserve(subjects.size() + unavailable.size());
  for (const Subject& s : subjects) {
    SweepImplResult r;
    r.label = s.label();
    r.spec = s.name;
    r.device = s.device;
    r.contract = s.contract.describe();
    res.push_back(r);
  }
  for (const SweepImplResult& u : unavailable) res.push_back(u);
  for (size_t i = 0; i < subjects.size(); ++i) sinks.emplace_back(&res[i], opt.keep_failures);
  auto say = [&](const std::string& what) {
    if (opt.progress) opt.progress("[" + seconds_since(t0) + "] " + what);
  };
  auto stopped = [&] { return run.interrupted = run.interrupted || (opt.stop_requested && opt.stop_requested()); };
  // Whether implementation i's next phase runs: not after an error on valid input (it ends that
  // implementation's sweep: it is the finding), nor once the sweep is stopped.
  auto runs = [&](size_t i) { return res[i].error.empty() && !stopped(); };
  // A phase's progress line, only where the phase runs: a stopped sweep names no case it does not start.
  auto announce = [&](size_t i, const std::string& what) {
    if (runs(i)) say(what);
  };
  auto guarded = [&](size_t i, const std::string& where, const std::function<void()>& phase) {
    if (!runs(i)) return;
    try {
      phase();
    } catch (const std::exception& e) {
      res[i].error = where + ": " + e.what();
      say(res[i].label + ": " + res[i].error);
    }
  };

  if (subjects.empty()) return run;  // nothing can run here: the report lists why
  auto checkpoint = [&] {
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (opt.checkpoint) opt.checkpoint(run);
  };

  // all_rows and params_repeatable, segment_invariance, split_invariance, and on the largest
  // full batch the batch-size sweep (the prior art makes the same case for both).
  for (int64_t n : g.full_batches) {
    for (uint64_t seed : g.seeds) {
      if (stopped()) break;
      const Case c = sweep_case(sweep_spec(g, n, g.dim, seed));
      for (size_t i = 0; i < subjects.size(); ++i) {
        const Subject& s = subjects[i];
        const std::string where = "n=" + std::to_string(n) + " seed " + std::to_string(seed);
        announce(i, "all_rows " + where + ": " + s.label());
        guarded(i, "all_rows " + where, [&] {
          BatchRunner r(s, c, n);
          const Status st = r.run_full();
          if (!st.ok()) throw std::runtime_error("the full batch: " + st.message);
          all_rows(r, s, seed, &res[i].invariance, &sinks[i], opt.stop_requested);
          if (n == g.full_batches.back()) {
            announce(i, "batch_size_sweep " + where + ": " + s.label());
            batch_size_sweep(r, s, seed, &res[i].invariance, &sinks[i], opt.stop_requested);
          }
        });
        guarded(i, "segment_invariance " + where, [&] { segments(c, s, seed, &res[i].invariance, &sinks[i]); });
        announce(i, "split_invariance " + where + ": " + s.label());
        guarded(i, "split_invariance " + where, [&] { splits(c, s, seed, &res[i].invariance, &sinks[i]); });
      }
    }
  }
  checkpoint();
  // full_vs_sub_batches: the big batch with the first seeds.
  int64_t largest_sub = 1;
  for (int64_t sz : g.sub_batch_sizes) largest_sub = std::max(largest_sub, std::min(sz, g.big_batch));
  for (size_t k = 0; k < std::min(g.sub_batch_seeds, g.seeds.size()) && !stopped(); ++k) {
    const uint64_t seed = g.seeds[k];
    say("full_vs_sub_batches: making the " + std::to_string(g.big_batch) + " x " + std::to_string(g.dim) +
        " case of seed " + std::to_string(seed));
    const Case c = sweep_case(sweep_spec(g, g.big_batch, g.dim, seed));
    for (size_t i = 0; i < subjects.size(); ++i) {
      const Subject& s = subjects[i];
      announce(i, "full_vs_sub_batches seed " + std::to_string(seed) + ": " + s.label());
      guarded(i, "full_vs_sub_batches seed " + std::to_string(seed), [&] {
        BatchRunner r(s, c, largest_sub);
        const Status st = r.run_full();
        if (!st.ok()) throw std::runtime_error("the full batch: " + st.message);
        full_vs_sub(r, s, g, seed, &res[i].invariance, &sinks[i], opt.stop_requested);
      });
    }
  }
  checkpoint();
  // accuracy and latency: the oracle and the eager model once a size.
  for (size_t a = 0; a < g.accuracy_rows.size() && !stopped(); ++a) {
    const int64_t rows = g.accuracy_rows[a];
    say("accuracy " + std::to_string(rows) + " x " + std::to_string(g.accuracy_dim) + ": the oracle");
    const Case c = sweep_case(sweep_spec(g, rows, g.accuracy_dim, g.accuracy_seed));
    const Reference ref = oracle_reference(c);
    // (an op without an eager model pins nothing: eager_exact compares nothing)
    const Outputs eager = op_oracle(*c.op).eager_model ? eager_model(c) : Outputs{};
    for (size_t i = 0; i < subjects.size(); ++i) {
      const Subject& s = subjects[i];
      res[i].accuracy.resize(g.accuracy_rows.size());
      AccuracyAt& at = res[i].accuracy[a];
      at.rows = rows;
      at.dim = c.dim;
      announce(i, "accuracy and latency at " + std::to_string(rows) + " rows: " + s.label());
      guarded(i, "accuracy at " + std::to_string(rows) + " rows", [&] {
        BatchRunner r(s, c, 1);
        const Status st = r.run_full();
        if (!st.ok()) {
          at.error = st.message;
          throw std::runtime_error(st.message);
        }
        accuracy(r.download_full(), ref, eager, s, c, g.accuracy_seed, &at, &sinks[i]);
        if (opt.time_calls) at.latency = opt.time_calls(r, g);
      });
    }
    if (c.op->plain.field) plain_phase(c, subjects, opt, a, &res, announce, guarded);
    checkpoint();  // each size: the largest take minutes (the oracle), and a kill loses only the one in hand
  }
  // The replays of the failures kept.
  if (opt.save_failure)
    for (size_t i = 0; i < subjects.size(); ++i)
      for (SweepFailure& f : res[i].failures) {
        if (stopped()) break;
        say("saving the replay of a failed " + f.check + " comparison: " + subjects[i].label());
        try {
          opt.save_failure(subjects[i], &f);
        } catch (const std::exception& e) {
          f.replay_note = std::string("could not be saved: ") + e.what();
        }
      }
  run.complete = !stopped();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

}  // namespace gatecheck
