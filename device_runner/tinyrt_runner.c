/* tinyrt-runner — loads a compiled model (.so), feeds it raw input bytes,
 * runs it and writes raw output bytes. Built for every target; the host
 * tools run it natively or under qemu. It is a test harness: unlike the
 * runtime it may allocate.
 *
 *   tinyrt-runner MODEL.so SYMBOL [--in FILE] [--out FILE] [--threads N]
 *                 [--runs N] [--warmup N] [--compare-threads N] [--verify]
 *
 * --in: inputs concatenated in descriptor order (absent: zeros).
 * --dims "D0,D1,...;D0,...;...": every input's dimensions, in descriptor
 *   order (a model with run-time dimensions; tinyrt_session_set_input_dims):
 *   the --in file then holds each input dense at these dims, and the
 *   outputs' dims are printed, "dims K: D0,D1,...", output K's after the run.
 * --out: outputs concatenated in descriptor order.
 * --runs/--warmup: timed runs; prints "median_ms=X min_ms=Y p90_ms=A
 *   p99_ms=B runs=N threads=T".
 * --gap-us N: sleeps N microseconds before each timed (and profiled) run,
 *   untimed, as an application that runs the model now and then: the
 *   pool's threads stop spinning and sleep between runs, as they would.
 * --compare-threads N: also runs with N threads and fails unless every
 *   output byte equals the single-thread result.
 * --profile N: runs the model N more times with the runtime's step hook
 *   (tinyrt_session_options.on_step) and prints "step K: X ms (T tasks)"
 *   with each step's median, and "total: X ms" (their sum).
 * --mark-steps N: runs the model N more times, calling
 *   write(TINYRT_STEP_MARK_FD, NULL, step * 2 + begin) before and after each
 *   step; under qemu with tinyrt's icount plugin this yields per-step
 *   instruction counts (qemu_plugin/icount.c). The writes fail and
 *   are otherwise harmless.
 * --verify: first checks the weights against the checksum the compiler
 *   recorded (tinyrt_session_verify) and prints "verify: ok, ..." with the
 *   model hash and weights checksum, or fails with the runtime's message.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tinyrt.h"

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "tinyrt-runner: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* --gap-us: an untimed pause before a run (none for us <= 0). */
static void pause_us(int us) {
  struct timespec ts;
  if (us <= 0) return;
  ts.tv_sec = us / 1000000;
  ts.tv_nsec = (long)(us % 1000000) * 1000L;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Per-step durations of the profiled runs: [run][step]. */
typedef struct profile_log {
  double *ms, t0;
  uint32_t steps;
  int run;
} profile_log;

static void on_step(void *user, uint32_t step, int begin) {
  profile_log *p = (profile_log *)user;
  if (begin)
    p->t0 = now_ms();
  else
    p->ms[(size_t)p->run * p->steps + step] = now_ms() - p->t0;
}

/* Must match qemu_plugin/icount.c. */
#define TINYRT_STEP_MARK_FD (-32343)

static void on_step_mark(void *user, uint32_t step, int begin) {
  (void)user;
  if (write(TINYRT_STEP_MARK_FD, NULL, (size_t)step * 2 + (begin != 0)) >= 0) abort(); /* never a valid descriptor */
}

typedef struct runner {
  const tinyrt_model *model;
  void *arena;
  void *pool_mem;
  tinyrt_pool *pool;
  tinyrt_session session;
} runner;

static int runner_init(runner *r, const tinyrt_model *m, int threads, profile_log *log, int mark) {
  tinyrt_session_options opt;
  tinyrt_status st;
  size_t bytes = tinyrt_model_arena_bytes(m);
  memset(r, 0, sizeof *r);
  r->model = m;
  if (posix_memalign(&r->arena, TINYRT_ARENA_ALIGN, bytes ? bytes : 64) != 0) return fail("out of memory", NULL);
  memset(r->arena, 0, bytes);
  tinyrt_session_options_init(&opt);
  if (log) {
    opt.on_step = on_step;
    opt.on_step_user = log;
  }
  if (mark) opt.on_step = on_step_mark;
  if (threads > 1) {
    size_t pb = tinyrt_pool_storage_bytes(threads);
    if (posix_memalign(&r->pool_mem, TINYRT_ARENA_ALIGN, pb) != 0) return fail("out of memory", NULL);
    st = tinyrt_pool_create(r->pool_mem, pb, threads, &r->pool);
    if (st != TINYRT_OK) return fail("pool", tinyrt_status_string(st));
    opt.pool = r->pool;
  }
  st = tinyrt_session_init(&r->session, m, r->arena, bytes, &opt);
  if (st != TINYRT_OK) return fail(tinyrt_status_string(st), tinyrt_session_message(&r->session));
  return 0;
}

static void runner_free(runner *r) {
  if (r->pool) tinyrt_pool_destroy(r->pool);
  free(r->pool_mem);
  free(r->arena);
}

static const char *g_dims; /* --dims */

/* Sets every input's dims from --dims. */
static int set_dims(runner *r) {
  uint32_t i;
  const char *p = g_dims;
  if (!p) return 0;
  for (i = 0; i < tinyrt_session_num_inputs(&r->session); ++i) {
    int64_t dims[TINYRT_MAX_RANK];
    uint32_t n = 0;
    tinyrt_status st;
    while (*p && *p != ';' && n < TINYRT_MAX_RANK) {
      char *end;
      dims[n++] = strtoll(p, &end, 10);
      if (end == p) return fail("bad --dims", g_dims);
      p = *end == ',' ? end + 1 : end;
    }
    if (*p == ';') ++p;
    st = tinyrt_session_set_input_dims(&r->session, i, dims, n);
    if (st != TINYRT_OK) return fail(tinyrt_status_string(st), tinyrt_session_message(&r->session));
  }
  return 0;
}

static int load_inputs(runner *r, const char *path) {
  uint32_t i;
  FILE *f;
  if (set_dims(r)) return 1;
  if (!path) return 0;
  f = fopen(path, "rb");
  if (!f) return fail("cannot open input file", path);
  for (i = 0; i < tinyrt_session_num_inputs(&r->session); ++i) {
    tinyrt_tensor t;
    tinyrt_session_input(&r->session, i, &t);
    if (fread(t.data, 1, t.bytes, f) != t.bytes) {
      fclose(f);
      return fail("input file too short for input", t.name);
    }
  }
  fclose(f);
  return 0;
}

/* The inputs as loaded, written back before every run: a run may reuse the
 * input's arena bytes for intermediate values, and timing a later run on
 * such leftovers (NaNs, subnormals) would not measure the model. */
typedef struct saved_inputs {
  unsigned char *bytes;
  size_t size;
} saved_inputs;

static int save_inputs(runner *r, saved_inputs *s) {
  uint32_t i;
  size_t n = 0;
  for (i = 0; i < tinyrt_session_num_inputs(&r->session); ++i) {
    tinyrt_tensor t;
    tinyrt_session_input(&r->session, i, &t);
    n += t.bytes;
  }
  s->size = n;
  s->bytes = (unsigned char *)malloc(n ? n : 1);
  if (!s->bytes) return fail("out of memory", NULL);
  for (n = 0, i = 0; i < tinyrt_session_num_inputs(&r->session); ++i) {
    tinyrt_tensor t;
    tinyrt_session_input(&r->session, i, &t);
    memcpy(s->bytes + n, t.data, t.bytes);
    n += t.bytes;
  }
  return 0;
}

static void restore_inputs(runner *r, const saved_inputs *s) {
  uint32_t i;
  size_t n = 0;
  for (i = 0; i < tinyrt_session_num_inputs(&r->session); ++i) {
    tinyrt_tensor t;
    tinyrt_session_input(&r->session, i, &t);
    memcpy(t.data, s->bytes + n, t.bytes);
    n += t.bytes;
  }
}

static int run_once(runner *r) {
  tinyrt_status st = tinyrt_session_run(&r->session);
  if (st != TINYRT_OK) return fail(tinyrt_status_string(st), tinyrt_session_message(&r->session));
  return 0;
}

int main(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  int threads = 1, runs = 0, warmup = 0, compare = 0, profile = 0, mark = 0, verify = 0, gap_us = 0, i;
  void *lib;
  const tinyrt_model *m;
  runner r;
  saved_inputs saved;
  if (argc < 3) return fail("usage: tinyrt-runner MODEL.so SYMBOL [options]", NULL);
  for (i = 3; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--verify")) {
      verify = 1;
      continue;
    }
    if (!v) return fail("missing value for", a);
    if (!strcmp(a, "--in"))
      in = v;
    else if (!strcmp(a, "--out"))
      out = v;
    else if (!strcmp(a, "--dims"))
      g_dims = v;
    else if (!strcmp(a, "--threads"))
      threads = atoi(v);
    else if (!strcmp(a, "--runs"))
      runs = atoi(v);
    else if (!strcmp(a, "--warmup"))
      warmup = atoi(v);
    else if (!strcmp(a, "--compare-threads"))
      compare = atoi(v);
    else if (!strcmp(a, "--profile"))
      profile = atoi(v);
    else if (!strcmp(a, "--mark-steps"))
      mark = atoi(v);
    else if (!strcmp(a, "--gap-us"))
      gap_us = atoi(v);
    else
      return fail("unknown option", a);
    ++i;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fail("cannot load model", dlerror());
  m = (const tinyrt_model *)dlsym(lib, argv[2]);
  if (!m) return fail("model symbol not found", argv[2]);
  if (runner_init(&r, m, threads, NULL, 0) || load_inputs(&r, in)) return 1;
  if (verify) {
    tinyrt_status st = tinyrt_session_verify(&r.session);
    if (st != TINYRT_OK) {
      fprintf(stderr, "verify: %s: %s\n", tinyrt_status_string(st), tinyrt_session_message(&r.session));
      return 1;
    }
    /* verify returned OK, so the descriptor has the ABI 1.2 fields */
    printf("verify: ok, model hash 0x%016llx, weights checksum 0x%016llx (%llu bytes in %u ranges)\n",
           (unsigned long long)m->model_hash, (unsigned long long)m->weights_checksum,
           (unsigned long long)m->weights_bytes, (unsigned)m->num_weights);
  }
  if (save_inputs(&r, &saved)) return 1;
  for (i = 0; i < warmup; ++i) {
    restore_inputs(&r, &saved);
    if (run_once(&r)) return 1;
  }
  if (runs > 0) {
    double *t = (double *)malloc(sizeof(double) * (size_t)runs);
    for (i = 0; i < runs; ++i) {
      double t0;
      restore_inputs(&r, &saved);
      pause_us(gap_us);
      t0 = now_ms();
      if (run_once(&r)) return 1;
      t[i] = now_ms() - t0;
    }
    qsort(t, (size_t)runs, sizeof(double), cmp_double);
    printf("median_ms=%.4f min_ms=%.4f p90_ms=%.4f p99_ms=%.4f runs=%d threads=%d\n", t[runs / 2], t[0],
           t[(runs - 1) * 9 / 10], t[(runs - 1) * 99 / 100], runs, threads);
    free(t);
  } else {
    restore_inputs(&r, &saved);
    if (run_once(&r)) return 1;
  }
  if (profile > 0) {
    runner rp;
    profile_log log;
    uint32_t k;
    double *t = (double *)malloc(sizeof(double) * (size_t)profile), total = 0;
    size_t stride = m->desc_bytes >= offsetof(tinyrt_model, step_desc_bytes) + sizeof(uint32_t)
                        ? m->step_desc_bytes
                        : sizeof(tinyrt_step_desc);
    log.steps = m->num_steps;
    log.ms = (double *)calloc((size_t)profile * (m->num_steps ? m->num_steps : 1), sizeof(double));
    if (!t || !log.ms) return fail("out of memory", NULL);
    if (runner_init(&rp, m, threads, &log, 0) || load_inputs(&rp, in)) return 1;
    for (log.run = 0; log.run < profile; ++log.run) {
      restore_inputs(&rp, &saved);
      pause_us(gap_us);
      if (run_once(&rp)) return 1;
    }
    for (k = 0; k < m->num_steps; ++k) {
      const tinyrt_step_desc *sd = (const tinyrt_step_desc *)((const char *)m->steps + k * stride);
      for (i = 0; i < profile; ++i) t[i] = log.ms[(size_t)i * m->num_steps + k];
      qsort(t, (size_t)profile, sizeof(double), cmp_double);
      total += t[profile / 2];
      printf("step %u: %.6f ms (%d tasks)\n", k, t[profile / 2], sd->tasks);
    }
    printf("total: %.4f ms\n", total);
    runner_free(&rp);
    free(log.ms);
    free(t);
  }
  if (mark > 0) {
    runner rm;
    if (runner_init(&rm, m, threads, NULL, 1) || load_inputs(&rm, in)) return 1;
    for (i = 0; i < mark; ++i) {
      restore_inputs(&rm, &saved);
      if (run_once(&rm)) return 1;
    }
    runner_free(&rm);
  }
  if (compare > 0) {
    runner r2;
    uint32_t k;
    if (runner_init(&r2, m, compare, NULL, 0) || load_inputs(&r2, in) || run_once(&r2)) return 1;
    for (k = 0; k < tinyrt_session_num_outputs(&r.session); ++k) {
      tinyrt_tensor a, b;
      tinyrt_session_output(&r.session, k, &a);
      tinyrt_session_output(&r2.session, k, &b);
      if (memcmp(a.data, b.data, a.bytes) != 0) return fail("outputs differ between thread counts for", a.name);
    }
    runner_free(&r2);
  }
  if (g_dims) {
    uint32_t k, a;
    for (k = 0; k < tinyrt_session_num_outputs(&r.session); ++k) {
      tinyrt_tensor t;
      tinyrt_session_output(&r.session, k, &t);
      printf("dims %u:", k);
      for (a = 0; a < t.rank; ++a) printf("%s%lld", a ? "," : " ", (long long)t.dims[a]);
      printf("\n");
    }
  }
  if (out) {
    uint32_t k;
    FILE *f = fopen(out, "wb");
    if (!f) return fail("cannot write", out);
    for (k = 0; k < tinyrt_session_num_outputs(&r.session); ++k) {
      tinyrt_tensor t;
      tinyrt_session_output(&r.session, k, &t);
      if (fwrite(t.data, 1, t.bytes, f) != t.bytes) return fail("short write", out);
    }
    fclose(f);
  }
  free(saved.bytes);
  runner_free(&r);
  return 0;
}
