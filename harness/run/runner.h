// The runner: executes one Implementation on one Case (forward then backward)
// in guarded, poisoned buffers, and reports outputs and memory findings.
// Properties are built on top of it; it never judges accuracy itself.
#pragma once

#include <string>
#include <vector>

#include "../../case/case.h"
#include "../impls/implementation.h"
#include "call_arena.h"

namespace gatecheck {

struct MemoryFinding {
  enum Kind { input_changed, unwritten, oob_write } kind;
  std::string tensor;     // the op's name for it
  int64_t first = -1;     // first element (or guard byte offset for oob_write)
  int64_t count = 0;      // elements (or guard bytes) affected
  std::string detail;     // a sentence a person can act on
};
const char* memory_finding_name(MemoryFinding::Kind k);

struct RunOptions {
  // Which poison fills the outputs before the call. Two different poisons
  // tell an unwritten element from one whose correct value equals the poison.
  int poison = 0;
  bool forward = true, backward = true;
};

struct RunResult {
  Status status;                       // first failing call, prefixed "forward: "/"backward: "
  Outputs outputs;                     // valid where status.ok()
  std::vector<MemoryFinding> memory;   // from canaries, poison and input snapshots
};

// The buffers are this thread's CallArena (call_arena.h): several threads may
// run cases at once, each in its own arena and, on CUDA, its own stream.
RunResult run_case(const Implementation& impl, const Case& c, const RunOptions& opt = {});

// The guarded regions of a call of c: the op's inputs, then its outputs, in
// the op's order (inputs hold their bytes; outputs are poisoned).
std::vector<CallArena::Region> arena_regions(const Case& c, const Outputs& o);
// The call of `pass` over an arena laid out by arena_regions.
OpCall call_in_arena(const Case& c, const CallArena& a, Pass pass, Device d, void* stream);

// The stream this thread passes as problem.stream on device d (nullptr on the CPU).
void* runner_stream(Device d);

// After a call on `stream`: waits for its device work (that stream alone when
// impl.calls_on_problem_stream, else the whole device) and turns a pending
// CUDA error into a Status of kind implementation. On the CPU, a no-op.
Status sync_after_call(const Implementation& impl, void* stream);

// The poison pattern for an output of dtype t (a NaN with a payload no
// canonical rounding produces).
uint32_t poison_bits(DType t, int poison);

}  // namespace gatecheck
