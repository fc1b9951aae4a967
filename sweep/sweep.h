// gatecheck sweep: the seed report (../shared/reference/h3_prior_art_b200.json)
// field for field for any implementation, computed as PRIOR_ART.md defines
// each field, plus what the prior art could not check: segment invariance,
// accuracy against the oracle's rigorous bounds, errors in ulps, eager
// exactness, and for each failed comparison where it differs and a case that
// replays it. The engine only computes; the CLI times, writes and renders.
//
// Any op of the catalog: its tensors, outputs and their kinds come from its
// schema, its reference and bounds from oracles/ (sweep_fields.h names the
// prior art's keys for them).
//
// Files: sweep_grid (the grids), sweep_cases (the cases and their replays),
// sweep_invariance, sweep_accuracy, sweep_plain, sweep.cpp (the run); the report:
// sweep_json, sweep_operator_report (an operator report's fields),
// sweep_schema, sweep_compare(_operator), sweep_html; sweep_timing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../case/case_json.h"
#include "../harness/run/batch_runner.h"
#include "../properties/catalog/contract.h"
#include "sweep_grid.h"
#include "sweep_plain.h"
#include "../properties/catalog/verdict_word.h"

namespace gatecheck {

// One failed comparison, and where it differs.
struct SweepFailure {
  std::string check;           // all_rows, params_repeatable, full_vs_sub_batches, batch_size_sweep,
                               // segment_invariance, split_invariance, accuracy, eager_exact
  std::string property;        // the gatecheck property that replays it
  bool claimed = false;        // breaks the implementation's contract
  uint64_t seed = 0;           // the prior art's seed of the batch
  int64_t full_rows = 0;       // rows of the full batch (the case)
  int64_t batch_rows = 0;      // rows of the batch compared (0: reruns of the whole case)
  int64_t position = -1, row = -1;  // the compared row: its offset in the batch, its row of the case
  std::optional<BatchPlan> plan;    // the batch plan that redoes the comparison (none: accuracy, eager_exact)
  // Where: the first differing (or out-of-bound) element.
  std::string output;          // the op's output
  int64_t at_row = -1, at_col = -1;  // of the output (a table's: the gate; a column's: row 0)
  uint32_t bits = 0, want_bits = 0;  // the batch's bits and the reference's (full batch, row alone, oracle)
  std::string detail;          // one line a person can act on
  // The replay (sweep_cases.h): filled when it is saved.
  std::string case_file, repro, replay_note;
  bool replayed = false;       // `repro` on the saved case fails, as it must
};

// Counts of one kind of comparison, and whether what failed was claimed.
struct Tally {
  int64_t compared = 0, failed = 0;
  bool claimed_failed = false, unclaimed_failed = false;
  std::string verdict() const { return verdict_word(failed == 0, claimed_failed); }
  void add(const Tally& o);
};

struct AllRowsCount {
  int64_t rows = 0, fwd_differ = 0, rowgrad_differ = 0;
};

struct InvarianceResult {
  std::map<int64_t, AllRowsCount> all_rows;  // by the full batch's rows
  Tally all_rows_tally;
  bool params_repeatable = true;
  Tally repeat_tally;
  int64_t sub_batches = 0, sub_fwd_differ = 0, sub_rowgrad_differ = 0;
  Tally sub_tally;
  int64_t comparisons = 0, sweep_differ = 0;
  std::vector<SweepFailure> sweep_first;     // the prior art's first_failures: the first 8
  Tally sweep_tally;
  Tally segments;                            // segment_invariance: whole gate segments compared
  int64_t segment_cases = 0;
  // split_invariance (the property) on the same full batches, each split
  // into parts (ranks, micro-batches) by sweep_splits(); the row reductions'
  // elements compared (splits.compared), a split that differs one failure.
  Tally splits;
  int64_t split_cases = 0;                   // splits checked
  std::string split_combine;                 // how the parts' partials were combined
  std::optional<SweepFailure> split_first;   // the first split that differed: the split and the element
  // true or false once a split was compared; unset when none was (the op has no row reductions)
  std::optional<bool> split_invariant() const {
    if (split_cases == 0) return std::nullopt;
    return splits.failed == 0;
  }
  bool batch_invariant() const {
    return all_rows_tally.failed == 0 && params_repeatable && sub_tally.failed == 0 && sweep_tally.failed == 0;
  }
  std::string verdict() const;  // of batch_invariant, by the claims of what failed
};

struct OutputAccuracy {
  double rel_err = 0;              // the prior art's: max |err| / max |oracle value|
  int64_t elements = 0, outside_bound = 0;
  double max_err_over_bound = 0;   // |err| / the oracle's rigorous bound
  double max_ulps = 0;             // |err| in units in the last place of the dtype at the oracle value
  std::string verdict;             // pass, fail, finding (accuracy:<output> claimed or not)
  int64_t eager_differ = -1;       // elements whose bits differ from the eager model (-1: not compared, not pinned)
};

// What the CLI's timer measured for one call (microseconds; < 0: not measured).
struct CallTiming {
  double event_us = -1;   // CUDA events around each call, free queue: the prior art's method
  double gpu_us = -1;     // GPU time only (held queue), as the kernel benchmark measures it
  double wall_us = -1;    // host clock per call until its results are ready
  double copy_event_us = -1, copy_gpu_us = -1, copy_wall_us = -1;  // a copy of the same bytes, timed the same ways
  double bytes = 0;       // each input read once and each output written once
  std::string gpu_method; // how gpu_us was had, or why not
};
struct Latency {
  CallTiming fwd, fwd_bwd;
  std::optional<CallTiming> bwd;  // the backward alone: measured for an operator report (sweep_operator_report.h)
};

struct AccuracyAt {
  int64_t rows = 0, dim = 0;
  std::vector<OutputAccuracy> outputs;  // the op's, in its order
  std::vector<std::string> output_names;
  std::string verdict;             // accuracy over the outputs
  std::string eager_verdict;       // eager_exact over the outputs the op's eager model pins
  std::optional<Latency> latency;
  std::string error;               // the implementation failed on this case
  // The op's plain part against its library op (sweep_plain.h), for an op
  // that has one; unset where the size was not reached.
  std::optional<PlainAt> plain;
};

struct SweepImplResult {
  std::string label, spec, source, contract;
  Device device = Device::cpu;
  std::string unavailable;               // why it could not be made (then nothing else is set)
  InvarianceResult invariance;
  std::vector<AccuracyAt> accuracy;      // by grid.accuracy_rows
  std::vector<SweepFailure> failures;    // kept failures of every check (the first `keep` of each)
  std::map<std::string, int64_t> failed_by_check;
  std::string error;                     // the implementation returned an error on valid input
  bool any_claimed_failure() const;
};

struct SweepRun;

struct SweepOptions {
  size_t keep_failures = 8;  // per check and implementation: listed with where, and saved (0: all)
  // Called between phases and on progress: "phase impl what".
  std::function<void(const std::string&)> progress;
  // Times the full case's calls (the CLI's bench/ timer); unset: no latency.
  std::function<Latency(BatchRunner&, const SweepGrid&)> time_calls;
  // Polled between batches: once it returns true the run stops after the batch in hand.
  std::function<bool()> stop_requested;
  // Called at the end for every kept failure (the CLI saves its replay: make_replay).
  std::function<void(const Subject&, SweepFailure*)> save_failure;
  // Called after each phase with the results so far (the CLI writes them, so
  // that a crash or a kill loses at most the phase in hand).
  std::function<void(const SweepRun&)> checkpoint;
  // The library op an op's plain part is compared with (OpSchema::plain),
  // made once a size and device; unset: not compared, and the report says so.
  PlainReferenceFn plain_reference = libtorch_plain_reference;
};

struct SweepRun {
  SweepGrid grid;
  std::vector<SweepImplResult> impls;
  bool interrupted = false;
  bool complete = false;  // every phase ran (false in a checkpoint, or when stopped)
  double seconds = 0;
};

// Runs the grid on every subject (unavailable ones are listed, not run).
// Phases run for every implementation in turn, so that they share each
// phase's cases (a 131072-row case is made once a seed) and are timed in the
// same run. Never throws for an implementation's failure: that is a result.
SweepRun run_sweep(const std::vector<Subject>& subjects, const std::vector<SweepImplResult>& unavailable,
                   const SweepGrid& grid, const SweepOptions& opt);

// The corpus case that replays a failure: the sweep's case (a generator
// spec) and the batch plan that redoes the comparison. A case above the
// corpus file limit (2^24 elements a tensor) is made at a smaller dim and kept
// only if the comparison still fails there. `fails`: check_property on the
// case as the file holds it fails, as `gatecheck repro` on the file will.
struct SweepReplay {
  std::optional<CaseFile> file;  // its failure record's repro is left for the caller
  bool fails = false;
  std::string note;
};
SweepReplay make_replay(const Subject& s, const SweepGrid& g, const SweepFailure& f);

}  // namespace gatecheck
