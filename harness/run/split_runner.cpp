#include "split_runner.h"

#include <cstring>
#include <exception>
#include <string>

#include "call_arena.h"
#include "runner.h"
#include "stage_clock.h"

namespace gatecheck {

namespace {

Status no_exchange(const Implementation& impl) {
  return Status::error(ErrorKind::implementation, impl.label() + " declares no split exchange");
}

// A backward call of c in an arena; only the outputs `keep` (positions in
// the op's outputs) get their buffers, the others are NULL.
template <class Use>
Status with_backward_call(const Implementation& impl, const Case& c, Outputs* o, const std::vector<int>& keep,
                          Use use) {
  try {
    const size_t n_in = c.op->inputs.size();
    StageTimer setup(Stage::buffers);  // the stages as run_case times them
    CallArena a(impl.device, arena_regions(c, *o), std::vector<uint8_t>(1, 0));
    setup.stop();
    void* stream = runner_stream(impl.device);
    OpCall call = call_in_arena(c, a, Pass::backward, impl.device, stream);
    for (size_t i = 0; i < call.outputs.size(); ++i) {
      bool kept = false;
      for (int k : keep) kept = kept || size_t(k) == i;
      if (!kept) call.outputs[i].data = nullptr;
    }
    Status s;
    {
      const StageTimer t(Stage::calls);
      s = use(call);
    }
    if (s.ok()) s = sync_after_call(impl, stream);
    if (!s.ok()) return s;
    const StageTimer t(Stage::copies);
    a.fetch();
    for (int k : keep)
      if (a.size(n_in + size_t(k))) std::memcpy(o->tensors[size_t(k)].data(), a.host(n_in + size_t(k)), a.size(n_in + size_t(k)));
  } catch (const std::exception& e) {
    return Status::error(ErrorKind::implementation, std::string("harness: ") + e.what());
  }
  return Status::success();
}

}  // namespace

std::vector<int> row_reduction_outputs(const OpSchema& op) {
  std::vector<int> v;
  for (size_t i = 0; i < op.outputs.size(); ++i)
    if (op.outputs[i].kind == OutputKind::segment_sum || op.outputs[i].kind == OutputKind::all_rows_sum)
      v.push_back(int(i));
  return v;
}

Status exchange_partial(const Implementation& impl, const Case& part, std::vector<uint64_t>* state) {
  if (!impl.has_exchange()) return no_exchange(impl);
  Outputs o = outputs_for(part);
  return with_backward_call(impl, part, &o, {}, [&](const OpCall& bwd) { return impl.exchange_partial(bwd, state); });
}

Status exchange_combine(const Implementation& impl, const Case& full, const std::vector<std::vector<uint64_t>>& states,
                        std::vector<uint64_t>* out) {
  if (!impl.has_exchange()) return no_exchange(impl);
  std::vector<const std::vector<uint64_t>*> ptrs;
  for (const auto& s : states) ptrs.push_back(&s);
  const StageTimer t(Stage::calls);
  return impl.exchange_combine(full.problem(impl.device), ptrs, out);
}

Status exchange_finalize(const Implementation& impl, const Case& full, const std::vector<uint64_t>& state,
                         Outputs* out) {
  if (!impl.has_exchange()) return no_exchange(impl);
  return with_backward_call(impl, full, out, row_reduction_outputs(*full.op),
                            [&](const OpCall& bwd) { return impl.exchange_finalize(bwd, state); });
}

}  // namespace gatecheck
