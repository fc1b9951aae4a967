/* gatecheck plugin ABI v2: the split exchange (property split_invariance).
 *
 * A data-parallel step or gradient accumulation splits a batch into parts
 * (ranks, micro-batches), reduces each part's rows, and combines the parts'
 * partial reductions. An implementation whose row reductions (the outputs the
 * op marks segment_sum or all_rows_sum) are the same for every split declares
 * how, by exporting next to gatecheck_plugin_v2
 *
 *   const gatecheck_split_exchange* gatecheck_split_exchange_v2(const char* op);
 *
 * (NULL: no exchange for that op; the harness then combines the parts'
 * gradients as frameworks do, summing them in fp32 in rank order, and
 * split_invariance is a finding unless claimed). The exchange:
 *
 *   partial(rows) -> state     the state of one part's rows: the backward call
 *                              over those rows, every input as backward() gets
 *                              it, every output's data NULL;
 *   combine(states) -> state   the states in rank order;
 *   finalize(state) -> grads   writes the call's row-reduction outputs (the
 *                              other outputs' data are NULL).
 *
 * A state is state_words(problem) 64-bit words in host memory, whatever the
 * device. Splitting a batch, taking each part's partial, combining them in
 * rank order and finalizing must give the full batch backward's reductions
 * bit for bit. Return codes and last_error() as in gatecheck_plugin_v2.h.
 */
#ifndef GATECHECK_SPLIT_EXCHANGE_H
#define GATECHECK_SPLIT_EXCHANGE_H

#include <stdint.h>

#include "gatecheck_plugin_v2.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gatecheck_split_exchange {
  uint32_t abi_version; /* 2 */
  const char* op;       /* the op it serves */
  const char* state;    /* what a state is, one line, for reports */
  int64_t (*state_words)(const gatecheck_problem* p);
  int (*partial)(const gatecheck_call* backward, uint64_t* state);
  int (*combine)(const gatecheck_problem* p, const uint64_t* const* states, int32_t n, uint64_t* out);
  int (*finalize)(const gatecheck_call* backward, const uint64_t* state);
  const char* (*last_error)(void);
} gatecheck_split_exchange;

/* the optional export, extern "C" */
const gatecheck_split_exchange* gatecheck_split_exchange_v2(const char* op);

#ifdef __cplusplus
}
#endif

#endif /* GATECHECK_SPLIT_EXCHANGE_H */
