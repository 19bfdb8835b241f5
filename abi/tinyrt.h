/*
 * tinyrt.h — the tinyrt runtime C API.
 *
 * tinyrt runs models that tinyrt-compile turned into native code. The
 * runtime never allocates: the application owns every byte it uses.
 *
 *   #include "tinyrt.h"
 *   #include "mnist.h"            // written by: tinyrt-compile mnist.onnx -o out --name mnist
 *
 *   static uint8_t arena[MNIST_ARENA_BYTES] TINYRT_ALIGNED_ARENA;
 *
 *   tinyrt_session s;
 *   tinyrt_status st = tinyrt_session_init(&s, &mnist_model, arena,
 *                                          sizeof arena, NULL);
 *   if (st != TINYRT_OK) puts(tinyrt_session_message(&s));
 *   tinyrt_tensor in, out;
 *   tinyrt_session_input(&s, 0, &in);     // in.data points into the arena
 *   memcpy(in.data, image, in.bytes);
 *   tinyrt_session_run(&s);
 *   tinyrt_session_output(&s, 0, &out);   // out.data points into the arena
 *
 * With threads (Linux port), create one pool at start-up and share it:
 *
 *   static uint8_t pool_mem[TINYRT_POOL_STORAGE_BYTES(4)] TINYRT_ALIGNED_ARENA;
 *   tinyrt_pool *pool;
 *   tinyrt_pool_create(pool_mem, sizeof pool_mem, 4, &pool);
 *   tinyrt_session_options opt;
 *   tinyrt_session_options_init(&opt);
 *   opt.pool = pool;
 *   tinyrt_session_init(&s, &mnist_model, arena, sizeof arena, &opt);
 *
 * Every call returns a tinyrt_status; 0 is success. Session calls also leave
 * a human-readable explanation in tinyrt_session_message().
 *
 * Lifetimes: the model descriptor is constant data in the model object. The
 * arena must outlive the session, the pool storage the pool, and a pool the
 * sessions that use it (a session has no destroy call: it is plain caller
 * storage and may be dropped or re-initialized at any time it is not in use).
 *
 * Concurrency: a session is used by one call at a time. A second call on a
 * session while one is in flight (run, input/output lookups) returns
 * TINYRT_ERR_BUSY and changes nothing, not even the message. Several
 * sessions may share a pool, but one run at a time uses it: a run on a pool
 * that another run is using returns TINYRT_ERR_BUSY (nothing blocks; retry,
 * or give each concurrent session its own pool). tinyrt_pool_destroy()
 * during a run on that pool returns TINYRT_ERR_BUSY. A session or pool that
 * was never initialized, failed to initialize, was destroyed, or is a copy
 * (memcpy) of a live one is refused with TINYRT_ERR_NOT_INITIALIZED where the
 * runtime can tell (it checks a magic number and the object's own address).
 * tinyrt_session_init() must not race with other calls on the same session.
 */
#ifndef TINYRT_H_
#define TINYRT_H_

#include <stddef.h>
#include <stdint.h>

#include "tinyrt_artifact.h"
#include "tinyrt_config.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TINYRT_ALIGNED_ARENA __attribute__((aligned(TINYRT_ARENA_ALIGN)))
#else
#define TINYRT_ALIGNED_ARENA
#endif

typedef enum tinyrt_status {
  TINYRT_OK = 0,
  TINYRT_ERR_INVALID_ARGUMENT = 1,  /* NULL pointer, bad index, ... */
  TINYRT_ERR_BAD_MODEL = 2,         /* descriptor magic or contents invalid */
  TINYRT_ERR_ABI_MISMATCH = 3,      /* compiled for another ABI major */
  TINYRT_ERR_WRONG_ARCH = 4,        /* code for another architecture */
  TINYRT_ERR_CPU_UNSUPPORTED = 5,   /* CPU lacks an ISA feature the code needs */
  TINYRT_ERR_ARENA_TOO_SMALL = 6,   /* see tinyrt_model_arena_bytes() */
  TINYRT_ERR_ARENA_MISALIGNED = 7,  /* arena must be TINYRT_ARENA_ALIGN-aligned */
  TINYRT_ERR_NOT_FOUND = 8,         /* no input/output with that name */
  TINYRT_ERR_STORAGE_TOO_SMALL = 9, /* pool storage smaller than needed */
  TINYRT_ERR_THREADS = 10,          /* thread count not available on this port */
  TINYRT_ERR_NOT_INITIALIZED = 11,  /* session/pool not (or no longer) initialized, or a copy */
  TINYRT_ERR_BUSY = 12,             /* session or pool in use by another call */
  TINYRT_ERR_CORRUPT = 13,          /* weights differ from what the compiler wrote */
  TINYRT_ERR_UNSUPPORTED = 14,      /* the model's descriptor predates the call */
  TINYRT_ERR_BRANCH = 15,           /* the inputs take a branch of the model that was
                                       not compiled (the message says which and why) */
  TINYRT_ERR_SHAPE = 16             /* input dimensions outside the model's bounds, or two
                                       that must agree differ (the message says which) */
} tinyrt_status;

/* A static English description of a status, never NULL. */
const char *tinyrt_status_string(tinyrt_status status);

/* ---------------------------------------------------------------- pool -- */

typedef struct tinyrt_pool tinyrt_pool;

/* Bytes of caller storage a pool of `threads` threads needs on this port
 * (threads counts the calling thread, which takes part in the work). */
size_t tinyrt_pool_storage_bytes(int threads);

/* Creates a pool of `threads` threads (1 ≤ threads ≤ TINYRT_MAX_THREADS) in
 * `storage` (TINYRT_ARENA_ALIGN-aligned, at least
 * tinyrt_pool_storage_bytes(threads) bytes). Worker threads are started once
 * here and live until tinyrt_pool_destroy(). The bare-metal port accepts only
 * threads == 1. The storage must not hold a live pool (create does not read
 * it, so it cannot tell). */
tinyrt_status tinyrt_pool_create(void *storage, size_t storage_bytes, int threads, tinyrt_pool **out_pool);

/* Stops and joins the workers. The storage may be reused afterwards.
 * Returns TINYRT_ERR_BUSY (and does nothing) while a run uses the pool, and
 * TINYRT_ERR_NOT_INITIALIZED for a pool already destroyed. Sessions bound to
 * the pool must not be run afterwards (while the storage is untouched they
 * get TINYRT_ERR_NOT_INITIALIZED). */
tinyrt_status tinyrt_pool_destroy(tinyrt_pool *pool);

/* The pool's thread count; 1 for NULL (no pool), 0 for an invalid pool. */
int tinyrt_pool_threads(const tinyrt_pool *pool);

/* Microseconds an idle pool thread spins before it sleeps (default
 * TINYRT_POOL_SPIN_US). 0 sleeps at once: lowest CPU use, slower steps.
 * May be called at any time, also during a run. */
tinyrt_status tinyrt_pool_set_spin_us(tinyrt_pool *pool, uint32_t microseconds);

/* ------------------------------------------------------------- session -- */

/* Profiling hook: called on the calling thread right before (begin = 1) and
 * right after (begin = 0) step `step` of every run (steps are the model's
 * fused kernels, in order; NAME.json "fusion_groups" names them). The app
 * reads its own clock or cycle counter there. When NULL (the default) a run
 * pays one untaken branch per step. The hook must not call the session. */
typedef void (*tinyrt_step_hook)(void *user, uint32_t step, int begin);

typedef struct tinyrt_session_options {
  tinyrt_pool *pool;        /* NULL: run on the calling thread only */
  tinyrt_step_hook on_step; /* NULL: no profiling */
  void *on_step_user;       /* passed to on_step */
} tinyrt_session_options;

/* Fills `options` with the defaults (no pool). */
void tinyrt_session_options_init(tinyrt_session_options *options);

/* Session state lives in caller storage; treat the fields as private. A
 * session is bound to its address: copy it and the copy is refused. */
typedef struct tinyrt_session {
  uint32_t magic;                    /* set by a successful init */
  uint32_t busy;                     /* a call is in flight */
  const struct tinyrt_session *self; /* this session's own address */
  const tinyrt_model *model;
  uint8_t *arena;
  size_t arena_bytes;
  tinyrt_pool *pool;
  tinyrt_step_hook on_step;
  void *on_step_user;
  uint32_t tensor_stride, step_stride; /* descriptor table strides */
  uint32_t has_dims;                   /* the model has run-time dimensions */
  char message[160];
} tinyrt_session;

/* A view of an input or output. `data` points into the session's arena. */
typedef struct tinyrt_tensor {
  const char *name;
  void *data;
  const int64_t *dims;
  uint32_t rank;
  tinyrt_dtype dtype;
  size_t bytes;
} tinyrt_tensor;

/* Arena bytes a model needs (the NAME_ARENA_BYTES macro of its header). */
size_t tinyrt_model_arena_bytes(const tinyrt_model *model);

/* Checks the descriptor (magic, ABI version, architecture, tables), the CPU
 * (every ISA feature the code was compiled for), the pool and the arena
 * (size and alignment), then binds them. `options` may be NULL. The session
 * may hold anything before (init does not read it). On failure the status
 * says which check failed and tinyrt_session_message() gives the figures. */
tinyrt_status tinyrt_session_init(tinyrt_session *session, const tinyrt_model *model, void *arena, size_t arena_bytes,
                                  const tinyrt_session_options *options);

/* Runs the model once. Inputs must have been written since the last run:
 * the arena is reused for intermediate results. Returns TINYRT_ERR_BUSY if
 * the session or its pool is in use by another call (see Concurrency). */
tinyrt_status tinyrt_session_run(tinyrt_session *session);

uint32_t tinyrt_session_num_inputs(const tinyrt_session *session);
uint32_t tinyrt_session_num_outputs(const tinyrt_session *session);

tinyrt_status tinyrt_session_input(tinyrt_session *session, uint32_t index, tinyrt_tensor *out_tensor);
tinyrt_status tinyrt_session_output(tinyrt_session *session, uint32_t index, tinyrt_tensor *out_tensor);

/* Run-time dimensions (ABI 1.4; docs/ABI.md). A model compiled with ranges
 * (tinyrt-compile --input-shape x=1,1:128,40, --dim T=1:128) takes, per run,
 * any input dimensions within its bounds. Sets input `index`'s dimensions
 * (`rank` of them) for the next runs: each must lie within its bounds
 * (a fixed dimension: equal it), else TINYRT_ERR_SHAPE names the input,
 * the axis and the range. Afterwards tinyrt_session_input() reports those
 * dims and the bytes they take: write the input densely (row-major) in
 * them. After a run, tinyrt_session_output() reports each output's actual
 * dims and bytes, its data dense. Until set, an input has its upper
 * bounds. Dimensions of one name (dim_ids) in several inputs must agree
 * when the run starts (TINYRT_ERR_SHAPE otherwise). A model without
 * run-time dimensions accepts exactly its own dims. */
tinyrt_status tinyrt_session_set_input_dims(tinyrt_session *session, uint32_t index, const int64_t *dims,
                                            uint32_t rank);

/* Looks up by the ONNX graph input/output name. */
tinyrt_status tinyrt_session_find_input(tinyrt_session *session, const char *name, tinyrt_tensor *out_tensor);
tinyrt_status tinyrt_session_find_output(tinyrt_session *session, const char *name, tinyrt_tensor *out_tensor);

/* Checks the model's weights (the constant data its code reads) against
 * the checksum the compiler recorded: reads every weight byte, FNV-1a 64
 * over the descriptor's weight ranges, time proportional to weights_bytes.
 * TINYRT_ERR_CORRUPT when they differ (corrupt flash or memory, or a
 * patched model: the message gives the expected and found checksums),
 * TINYRT_ERR_BAD_MODEL when the weights table is inconsistent,
 * TINYRT_ERR_UNSUPPORTED for a model compiled before ABI 1.2 (its descriptor
 * records no checksum: nothing was checked), TINYRT_ERR_BUSY like run.
 * Detects accidental corruption, not a deliberate forgery (docs/SECURITY.md). */
tinyrt_status tinyrt_session_verify(tinyrt_session *session);

/* The explanation of the session's last failed call ("" after success;
 * TINYRT_ERR_BUSY leaves it unchanged). Not to be read during a call on the
 * session from another thread. */
const char *tinyrt_session_message(const tinyrt_session *session);

/* The CPU features of the running machine, as TINYRT_ISA_* bits. */
uint32_t tinyrt_cpu_features(void);

/* ---- custom ops (ABI 1.2; docs/ABI.md, "Custom ops") ----
 * A node of an op declared with `tinyrt-compile --custom-op
 * DOMAIN::OP=c_symbol` becomes a call, from the generated code, of
 *     tinyrt_status c_symbol(const tinyrt_custom_call *call);
 * with dense row-major views of the node's inputs and outputs in the arena
 * (or, for constant inputs, in the model's read-only data). It runs once
 * per tinyrt_session_run, on the thread that called run, after the steps
 * before it finished; it must not call into the session (which is busy)
 * and must write every element of its outputs. The views and the data of
 * intermediate values are valid only during the call. A status other than
 * TINYRT_OK stops the run: tinyrt_session_run returns that status and the
 * session message names the node. */
typedef struct tinyrt_custom_call {
  const char *node;             /* the ONNX node's name */
  const char *op;               /* "DOMAIN::OP" */
  uint32_t num_inputs;          /* the node's inputs, in order */
  uint32_t num_outputs;         /* the node's outputs, in order */
  const tinyrt_tensor *inputs;  /* read only (constants are in read-only memory) */
  const tinyrt_tensor *outputs; /* their data is written by the call */
} tinyrt_custom_call;

typedef tinyrt_status (*tinyrt_custom_op_fn)(const tinyrt_custom_call *call);

#ifdef __cplusplus
}
#endif

#endif /* TINYRT_H_ */
