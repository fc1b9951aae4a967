/* Plugins that break the rules on purpose, one per build (MISBEHAVIOUR is set
 * by tests/impls/CMakeLists.txt), so the tests can prove that gatecheck's
 * loader, runner and isolation catch each kind of misbehaviour. Each one is
 * the example plugin plus the one misbehaviour below. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#define gatecheck_plugin_v1 example_plugin_v1 /* the example's entry point, renamed */
#include "../../../examples/plugin/example_plugin.c"
#undef gatecheck_plugin_v1

#define SEGFAULT 1     /* forward dereferences NULL when rows == 13 */
#define HANG 2         /* forward never returns when rows == 13 */
#define OOB_WRITE 3    /* forward writes one byte past the end of out */
#define INPUT_WRITE 4  /* forward flips a bit of res[0] */
#define UNWRITTEN 5    /* forward leaves the last element of out untouched */
#define ABI_2 6        /* reports abi_version 2 */
#define NO_SYMBOL 7    /* exports no gatecheck_plugin_v1 */
#define CUDA_ONLY 8    /* claims only the cuda device */
#define EXIT0 9        /* forward calls exit(0) when rows == 13 */
#define LOAD_CRASH 10  /* gatecheck_plugin_v1() itself dereferences NULL */
#define ERROR_ROWS2 11 /* forward fails (returns 1) on every case of 2 rows or more */
#define STDOUT_PRINT 12 /* prints to stdout (printf and write(1)) as it loads, in every call and from a thread of its own */
#define SLOW_WRONG 13   /* forward takes 200 ms and flips a bit of out[0]: a long shrink, to interrupt */
#define SEGFAULT_AT_SCALE 14 /* forward dereferences NULL past 65,536 rows: only the scale tier reaches it */
#define SLOW 15        /* forward is right but takes 100 ms: a short budget runs few cases */
#define SLOW_ROWS 17   /* forward is right but takes 5 us a row: the scale tier's cases are slow */
#define UNDERSCORE_EXIT0 18 /* forward calls _exit(0) when rows == 13: no exit handler runs */
#define SELF_KILL 19   /* forward sends itself SIGKILL when rows == 13, as the OOM killer would */
#define ERROR_BYTES 20 /* forward fails on every case with rows, its message bytes that are not UTF-8,
                       * a terminal's escape sequences and 6,000 more bytes */
#define NULL_BACKWARD 21 /* backward is a null pointer */
#define FLAKY 16       /* forward flips a bit of out[0] on every 7th call (none with GC_TEST_FLAKY_OFF set):
                        * a failure that a replay sees only on some attempts, or never */

/* STDOUT_PRINT: what a chatty plugin writes to stdout must not reach
 * gatecheck's report there. printf is held in the C library's buffer, which
 * the plugin shares with gatecheck; write(1) goes out at once. */
static void chatter(const char* where) {
  if (MISBEHAVIOUR != STDOUT_PRINT) return;
  printf("plugin stdout: printf in %s\n", where);
  char line[64];
  const int n = snprintf(line, sizeof line, "plugin stdout: write(1) in %s\n", where);
  if (write(1, line, (size_t)n) != n) abort();
}
/* A thread of the plugin's own, printing between gatecheck's calls for about
 * a second from the load on. The load waits for its first lines, so that a
 * run shorter than the thread's first time slice still has them to keep. */
static pthread_mutex_t chatter_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t chatter_started = PTHREAD_COND_INITIALIZER;
static int chatter_first_done = 0;
static void* chatter_thread(void* arg) {
  (void)arg;
  for (int i = 0; i < 100; ++i) {
    chatter("thread");
    if (i == 0) {
      pthread_mutex_lock(&chatter_mutex);
      chatter_first_done = 1;
      pthread_cond_signal(&chatter_started);
      pthread_mutex_unlock(&chatter_mutex);
    }
    usleep(10000);
  }
  return NULL;
}
__attribute__((constructor)) static void on_load(void) {
  chatter("load");
  pthread_t t;
  if (MISBEHAVIOUR == STDOUT_PRINT && pthread_create(&t, NULL, chatter_thread, NULL) == 0) {
    pthread_detach(t);
    pthread_mutex_lock(&chatter_mutex);
    while (!chatter_first_done) pthread_cond_wait(&chatter_started, &chatter_mutex);
    pthread_mutex_unlock(&chatter_mutex);
  }
}
__attribute__((destructor)) static void on_unload(void) { chatter("unload"); }

/* ERROR_BYTES: the message last_error() gives (null: the example's). */
static const char* error_text = 0;

static int misbehaving_forward(const gatecheck_problem* p, const void* res, const void* gate,
                               const int64_t* index, const void* y, void* out) {
  const size_t elem = p && p->dtype == GATECHECK_F32 ? 4 : 2;
  const size_t bytes = p ? (size_t)(p->rows * p->dim) * elem : 0;
  unsigned char last[4] = {0};
  if (MISBEHAVIOUR == UNWRITTEN && bytes) memcpy(last, (char*)out + bytes - elem, elem);
  if (MISBEHAVIOUR == ERROR_ROWS2 && p && p->rows >= 2) {
    fail("I refuse cases of %d rows or more", 2);
    return 1;
  }
  chatter("forward");
  if (MISBEHAVIOUR == SLOW_WRONG) usleep(200000);
  if (MISBEHAVIOUR == SLOW) usleep(100000);
  if (MISBEHAVIOUR == SLOW_ROWS && p) usleep((useconds_t)(5 * p->rows));
  static int calls = 0;
  const int flip = MISBEHAVIOUR == FLAKY && ++calls % 7 == 0 && !getenv("GC_TEST_FLAKY_OFF");
  int rc = forward(p, res, gate, index, y, out);
  if (rc) return rc;
  if (MISBEHAVIOUR == SLOW_WRONG && p->rows > 0 && p->dim > 0) ((unsigned char*)out)[0] ^= 0x10;
  if (flip && p->rows > 0 && p->dim > 0) ((unsigned char*)out)[0] ^= 0x10;
  if (MISBEHAVIOUR == ERROR_BYTES && p->rows > 0) {
    static char text[6200];
    const char head[] = "bad \xff\xfe bytes, \x1b[31mred\x1b[0m, a bell \x07, then x: ";
    memcpy(text, head, sizeof head - 1);
    memset(text + sizeof head - 1, 'x', 6000);
    text[sizeof head - 1 + 6000] = 0;
    error_text = text;
    return 1;
  }
  if (MISBEHAVIOUR == EXIT0 && p->rows == 13) exit(0);
  if (MISBEHAVIOUR == UNDERSCORE_EXIT0 && p->rows == 13) _exit(0);
  if (MISBEHAVIOUR == SELF_KILL && p->rows == 13) kill(getpid(), SIGKILL);
  if (MISBEHAVIOUR == SEGFAULT && p->rows == 13) *(volatile int*)(uintptr_t)0 = 1;
  if (MISBEHAVIOUR == SEGFAULT_AT_SCALE && p->rows > 65536) *(volatile int*)(uintptr_t)0 = 1;
  if (MISBEHAVIOUR == HANG && p->rows == 13)
    for (;;) pause();
  if (MISBEHAVIOUR == OOB_WRITE) ((unsigned char*)out)[bytes] ^= 0xff;
  if (MISBEHAVIOUR == INPUT_WRITE && bytes) ((unsigned char*)res)[0] ^= 1;
  if (MISBEHAVIOUR == UNWRITTEN && bytes) memcpy((char*)out + bytes - elem, last, elem);
  return 0;
}

static int misbehaving_backward(const gatecheck_problem* p, const void* grad_out, const void* gate,
                                const int64_t* index, const void* y, void* grad_res, void* grad_gate,
                                void* grad_y) {
  chatter("backward");
  return backward(p, grad_out, gate, index, y, grad_res, grad_gate, grad_y);
}

static const char* misbehaving_last_error(void) {
  chatter("last_error");
  return error_text ? error_text : last_error();
}

#if MISBEHAVIOUR != NO_SYMBOL
const gatecheck_plugin* gatecheck_plugin_v1(void);
const gatecheck_plugin* gatecheck_plugin_v1(void) {
  if (MISBEHAVIOUR == LOAD_CRASH) *(volatile int*)(uintptr_t)0 = 1;
  chatter("gatecheck_plugin_v1");
  static const gatecheck_plugin plugin = {
      MISBEHAVIOUR == ABI_2 ? 2 : 1, "misbehaving",
      MISBEHAVIOUR == CUDA_ONLY ? 1u << GATECHECK_CUDA : 1u << GATECHECK_CPU,
      misbehaving_forward, MISBEHAVIOUR == NULL_BACKWARD ? 0 : misbehaving_backward, misbehaving_last_error};
  return &plugin;
}
#endif
