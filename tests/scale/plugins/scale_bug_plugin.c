/* CPU plugins with a bug that only scale shows, one per build (SCALE_BUG is
 * set by tests/scale/CMakeLists.txt), to prove that the scale tier reaches it
 * and shrinks it. Each is the example plugin plus the one bug below.
 *
 *  GRID_LIMIT: every row loop stops at row 65,535, as a kernel launched with
 *    one block a row on a grid capped at 65,535 blocks and no loop over the
 *    rest would: rows 65,535 and on are never written, nor summed.
 *  RACY_SUM: grad_gate's rows are summed in tiles of 256 rows by 4 threads
 *    that start together, each into partial sums of its own, which each adds
 *    to the gate's fp32 sums with an atomic compare-and-swap, in the order the
 *    threads finish: the float atomics of a GPU kernel's blocks, on the CPU. A
 *    gate with rows in the tiles of more than one thread gets bits that
 *    depend on scheduling. */
#include <pthread.h>
#include <stdatomic.h>

#define gatecheck_plugin_v1 example_plugin_v1 /* the example's entry point, renamed */
#include "../../../examples/plugin/example_plugin.c"
#undef gatecheck_plugin_v1

#define GRID_LIMIT 1
#define RACY_SUM 2

#define MAX_BLOCKS 65535
#define TILE_ROWS 256
#define THREADS 4

static int64_t rows_done(const gatecheck_problem* p) {
  return SCALE_BUG == GRID_LIMIT && p->rows > MAX_BLOCKS ? MAX_BLOCKS : p->rows;
}

static int scale_forward(const gatecheck_problem* p, const void* res, const void* gate, const int64_t* index,
                         const void* y, void* out) {
  const char* names[] = {"res", "gate", "y", "out"};
  const void* ptrs[] = {res, gate, y, out};
  if (validate("forward", p, index, 4, names, ptrs)) return 1;
  for (int64_t r = 0; r < rows_done(p); ++r)
    for (int64_t j = 0; j < p->dim; ++j) {
      int64_t i = r * p->dim + j, gi = index[r] * p->dim + j;
      float prod = round_to_dtype(p->dtype, load(p->dtype, gate, gi) * load(p->dtype, y, i));
      store(p->dtype, out, i, load(p->dtype, res, i) + prod);
    }
  return 0;
}

/* RACY_SUM: the shared state of one backward call. */
struct racy {
  const gatecheck_problem* p;
  const void *grad_out, *y;
  const int64_t* index;
  _Atomic uint32_t* sum; /* fp32 bits, gates x dim */
  pthread_barrier_t start;
};
struct racy_arg {
  struct racy* s;
  int id;
};

static void atomic_add_float(_Atomic uint32_t* a, float v) {
  uint32_t old = atomic_load(a);
  for (;;) {
    const uint32_t want = bits_of(float_of(old) + v);
    if (atomic_compare_exchange_weak(a, &old, want)) return;
  }
}

/* Each thread sums the tiles t = id, id + THREADS, ... of the rows into
 * partial sums of its own, then adds them to the gate's fp32 sums: four float
 * atomics per (gate, column), in the order the threads finish. */
static void* racy_worker(void* arg) {
  struct racy_arg* a = (struct racy_arg*)arg;
  struct racy* s = a->s;
  const gatecheck_problem* p = s->p;
  const int64_t tiles = (p->rows + TILE_ROWS - 1) / TILE_ROWS;
  float* part = calloc((size_t)(p->gates * p->dim) + 1, sizeof(float));
  unsigned char* touched = calloc((size_t)p->gates + 1, 1);
  if (!part || !touched) abort();
  pthread_barrier_wait(&s->start);
  for (int64_t t = a->id; t < tiles; t += THREADS) {
    const int64_t r0 = t * TILE_ROWS, r1 = r0 + TILE_ROWS < p->rows ? r0 + TILE_ROWS : p->rows;
    for (int64_t r = r0; r < r1; ++r) {
      touched[s->index[r]] = 1;
      for (int64_t j = 0; j < p->dim; ++j) {
        const int64_t i = r * p->dim + j;
        part[s->index[r] * p->dim + j] += load(p->dtype, s->grad_out, i) * load(p->dtype, s->y, i);
      }
    }
  }
  for (int64_t k = 0; k < p->gates; ++k)
    if (touched[k])
      for (int64_t j = 0; j < p->dim; ++j) atomic_add_float(&s->sum[k * p->dim + j], part[k * p->dim + j]);
  free(part);
  free(touched);
  return NULL;
}

static int scale_backward(const gatecheck_problem* p, const void* grad_out, const void* gate,
                          const int64_t* index, const void* y, void* grad_res, void* grad_gate, void* grad_y) {
  if (SCALE_BUG != RACY_SUM && SCALE_BUG != GRID_LIMIT) return backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
  const char* names[] = {"grad_out", "gate", "y", "grad_res", "grad_gate", "grad_y"};
  const void* ptrs[] = {grad_out, gate, y, grad_res, grad_gate, grad_y};
  if (validate("backward", p, index, 6, names, ptrs)) return 1;
  const int64_t rows = rows_done(p);
  const size_t elem = p->dtype == GATECHECK_F32 ? 4 : 2;
  if (rows * p->dim > 0) memcpy(grad_res, grad_out, (size_t)(rows * p->dim) * elem);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < p->dim; ++j) {
      const int64_t i = r * p->dim + j;
      store(p->dtype, grad_y, i, load(p->dtype, grad_out, i) * load(p->dtype, gate, index[r] * p->dim + j));
    }
  if (SCALE_BUG == GRID_LIMIT) {
    float* sum = calloc((size_t)(p->gates * p->dim) + 1, sizeof(float));
    if (!sum) return fail("backward: out of memory");
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < p->dim; ++j)
        sum[index[r] * p->dim + j] += load(p->dtype, grad_out, r * p->dim + j) * load(p->dtype, y, r * p->dim + j);
    for (int64_t k = 0; k < p->gates * p->dim; ++k) store(p->dtype, grad_gate, k, sum[k]);
    free(sum);
    return 0;
  }
  struct racy s = {p, grad_out, y, index, calloc((size_t)(p->gates * p->dim) + 1, sizeof(uint32_t))};
  if (!s.sum) return fail("backward: out of memory");
  pthread_barrier_init(&s.start, NULL, THREADS);
  pthread_t th[THREADS];
  struct racy_arg args[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    args[t].s = &s;
    args[t].id = t;
    pthread_create(&th[t], NULL, racy_worker, &args[t]);
  }
  for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&s.start);
  for (int64_t k = 0; k < p->gates * p->dim; ++k) store(p->dtype, grad_gate, k, float_of(atomic_load(&s.sum[k])));
  free((void*)s.sum);
  return 0;
}

const gatecheck_plugin* gatecheck_plugin_v1(void) {
  static const gatecheck_plugin plugin = {1, SCALE_BUG == GRID_LIMIT ? "scale-bug:grid-limit" : "scale-bug:racy-sum",
                                          1u << GATECHECK_CPU, scale_forward, scale_backward, last_error};
  return &plugin;
}
