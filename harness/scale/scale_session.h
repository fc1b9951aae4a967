// One scale-tier case (case/scale_case.h) of any op on one implementation,
// with one buffer per tensor of the op's schema (op_schema.h), each sized by
// its role, where the implementation runs: host memory on the CPU, device
// memory only on CUDA, so a case past 2^31 elements never touches the host.
// Inputs are generated in place from their positions; outputs are checked in
// place (row fingerprints, bitwise comparison of two output sets, the
// exact-value check, poison, guard bytes, inputs against their generated
// values) and only counts, a few positions and requested rows come back.
//
// Every buffer has kGuardBytes of canary before and after it; a run on a
// sub-batch shorter than the buffer also canary-fills the buffer's unused
// tail, so a write past the sub-batch's end is caught like one past a buffer's.
//
// The properties at scale (properties/scale_properties.h) are built on this.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../../case/scale_case.h"
#include "../../oracles/oracle.h"
#include "../run/guarded_buffer.h"
#include "../impls/implementation.h"
#include "../run/runner.h"
#include "scale_backend.h"
#include "scale_stress.h"

namespace gatecheck {

// An output of the case's op: its position in OpSchema::outputs.
using ScaleOutput = int;

// What a session's calls took, each with its inputs' generation and its sync:
// those on the whole case (every row) and those on a part of its rows (a
// plan's batch, a split's partial), for the scale tier's cost model
// (properties/scale/scale_cost.h). A part costs its rows' share of the
// whole's time plus a time of its own (its call, its syncs, its tables
// generated again, its state brought back), which a GPU exchange makes large.
struct ScaleCallTimes {
  double whole_seconds = 0, part_seconds = 0;
  int64_t whole_rows = 0, part_rows = 0, part_calls = 0;
  // The parts' own time: their time past what the whole's time a row gives
  // their rows, never negative; -1 when no call on the whole or no part ran.
  double parts_own_seconds() const;
};

class ScaleSession {
 public:
  // Allocates the inputs and `output_sets` sets of outputs, for the case's rows
  // and its plan's largest batch. Throws ScaleNoMemory (with the bytes needed
  // and free) when they do not fit in `memory_budget` bytes (0: no budget of
  // its own) or in the memory free where the implementation runs.
  ScaleSession(const Implementation& impl, const ScaleCase& c, int output_sets, uint64_t memory_budget = 0);
  ~ScaleSession();
  ScaleSession(const ScaleSession&) = delete;
  ScaleSession& operator=(const ScaleSession&) = delete;

  // Forward, then backward, on `batch` (rows of the case, in order; null: the
  // whole case), outputs into `set` after filling them with poison `poison`
  // (runner.h's two poisons), each call under `stress`.
  Status run(int set, const std::vector<int64_t>* batch, int poison = 0, const StressSetting& stress = {});

  // The implementation's split exchange (impl.exchange must be declared) on
  // these buffers: the state of `batch`'s rows (its inputs generated as run()
  // generates them; nothing written, set 1's outputs poisoned), and the row
  // reductions of `batch` (null: the whole case) finished from a state into
  // `set` (its other outputs left poisoned).
  Status exchange_partial(const std::vector<int64_t>& batch, std::vector<uint64_t>* state);
  Status exchange_finalize(int set, const std::vector<int64_t>* batch, const std::vector<uint64_t>& state);

  // Adds each call's time from now on to *times (null: none kept).
  void time_calls(ScaleCallTimes* times) { times_ = times; }

  int64_t rows_of(int set) const { return set_rows_[size_t(set)]; }
  const ScaleCase& scale_case() const { return c_; }
  Device device() const { return impl_.device; }
  // After a failed run: can this process still use the device? (false after
  // a sticky CUDA error, which ends every later CUDA call in the process.)
  bool usable() { return backend_->usable(); }

  // Checks on what the last runs left.
  // Per-row fingerprints (scale_fingerprint.h) of an output of `set`: one a
  // row of the output (a batch row, a gate, or the one row of a column output).
  std::vector<uint64_t> prints(int set, ScaleOutput o);
  // Bitwise comparison of one output of two sets that ran the same batch.
  Comparison compare(int set_a, int set_b, ScaleOutput o);
  // Exact values only (exact_values_problem() must be "", and the op's oracle
  // exact_at_scale): every element of one output of `set` against the
  // exact-by-construction result.
  Comparison exact(int set, ScaleOutput o);
  // Elements holding poison 0 in `set_p0` and poison 1 in `set_p1`: never written.
  MemoryFinding unwritten(int set_p0, int set_p1, ScaleOutput o, int64_t* checked);
  // Canary bytes around (and past the last batch in) every buffer.
  std::vector<MemoryFinding> guards();
  // The inputs of the last run against their generated values, and the index.
  std::vector<MemoryFinding> inputs_changed();
  // Rows of one output of `set` (batch rows, gates, or {0}), as a tensor [rows.size() x dim].
  // Rows of an output: the set's batch, the gates, or 1.
  int64_t output_rows(int set, ScaleOutput o) const;
  HostTensor fetch(int set, ScaleOutput o, const std::vector<int64_t>& rows);

 private:
  struct Buffer {
    const char* name = "";
    uint8_t* base = nullptr;  // guard, user bytes, guard
    size_t bytes = 0;         // user capacity
    size_t used = 0;          // bytes the last run gave the implementation
    void* ptr() const { return base + kGuardBytes; }
  };
  Status run_unguarded(int set, const std::vector<int64_t>* batch, int poison, const StressSetting& stress);
  // body(), its time added to times_ as a call on `batch` (null: the whole case).
  template <class Body>
  Status timed(const std::vector<int64_t>* batch, Body body);
  // Inputs generated for `batch` (null: every row), `set`'s outputs poisoned: its rows.
  int64_t prepare(int set, const std::vector<int64_t>* batch, int poison);
  OpCall call_of(Pass pass, int set, int64_t n, void* stream) const;
  void release_all();
  Buffer make_buffer(const char* name, size_t bytes);
  void set_used(Buffer& b, size_t used);
  void upload_i64(void* dst, const std::vector<int64_t>& v);
  void* scratch_i64(size_t n, int which);
  ScaleGeom geom(int64_t rows, const void* row_map, const void* gate_of_row) const;
  // Where input i (op->inputs order) is generated from, for a run of n batch rows.
  ScaleGeom input_geom(size_t i, int64_t n, const void* row_map) const;
  const Buffer& output_buffer(int set, ScaleOutput o) const;
  Role output_role(ScaleOutput o) const { return c_.op().outputs[size_t(o)].role; }

  Implementation impl_;
  ScaleCase c_;
  ScaleCallTimes* times_ = nullptr;
  std::unique_ptr<ScaleBackend> backend_;
  int64_t max_rows_ = 0;
  size_t es_ = 2;
  std::vector<Buffer> inputs_;                // op->inputs order (the index among them)
  size_t index_at_ = 0;                       // the index's position in inputs_
  std::vector<std::vector<Buffer>> outputs_;  // [set][op->outputs order]
  std::vector<int64_t> set_rows_;
  std::vector<std::vector<int64_t>> set_batch_;  // each set's batch (case rows)
  // backend copies: the column and gate maps, and the last run's row map, gate-of-row and index
  void* col_map_ = nullptr;
  void* gate_map_ = nullptr;
  void* zero_map_ = nullptr;  // {0}: a column tensor's one row
  void* scratch_[4] = {nullptr, nullptr, nullptr, nullptr};
  size_t scratch_n_[4] = {0, 0, 0, 0};
  std::vector<int64_t> last_batch_;  // case rows of the last run
  std::vector<int64_t> last_index_;  // its index (what the implementation was given)
};

// The name of output o of c's op.
std::string scale_output_name(const ScaleCase& c, ScaleOutput o);

}  // namespace gatecheck
