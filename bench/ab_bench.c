/* ab_bench — two or more compiled models measured in one process, their
 * runs alternated, so that the drift of a shared machine (other tenants, a
 * clock that changes over minutes) falls on all of them alike. Not a test:
 * it prints figures. bench/ab.sh compiles a model with two compilers or two
 * sets of options and calls it.
 *
 *   ab_bench [--threads N] [--rounds R] [--runs K] [--steps] LIB.so[:SYMBOL]...
 *
 * Each LIB.so is a tinyrt-compile output (its descriptor is SYMBOL, by
 * default the file name without ".so" followed by "_model"). Every model
 * gets its own arena and session on one shared pool; float inputs are
 * the same pseudo-random values in [-1, 1), others zeros, written before
 * each run (not timed).
 * A round runs each model K times (the first model first in even rounds,
 * last in odd ones) after one untimed run. Printed per model: the median
 * run over all rounds, the 10th and 90th percentiles, and the median's
 * ratio to the first model's; with --steps also each step's median time
 * and its ratio (models compiled from one ONNX file with the same kernels
 * line up step by step).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tinyrt.h"

#define MAX_MODELS 8
#define MAX_STEPS 4096

typedef struct {
  const char *path;
  const tinyrt_model *model;
  void *arena;
  tinyrt_session session;
  double *runs;  /* rounds * K run times, ms */
  double *steps; /* rounds * K * num_steps step times, ms */
  double step_t0;
  void *inputs; /* the inputs' bytes, written before every run */
  uint32_t num_steps;
  int n; /* runs recorded */
} ab_model;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile of n values (sorted in place). */
static double quantile(double *v, int n, double q) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return v[(int)(q * (n - 1) + 0.5)];
}

static void on_step(void *user, uint32_t step, int begin) {
  ab_model *m = (ab_model *)user;
  double t = now_ms();
  if (begin)
    m->step_t0 = t;
  else if (m->steps && step < m->num_steps)
    m->steps[(size_t)m->n * m->num_steps + step] = t - m->step_t0;
}

static int fail(const char *what, const char *path, const char *detail) {
  fprintf(stderr, "ab_bench: %s: %s%s%s\n", path, what, detail ? ": " : "", detail ? detail : "");
  return 1;
}

static int load(ab_model *m, const char *arg, tinyrt_pool *pool, int with_steps, int total_runs) {
  char path[4096], symbol[512];
  const char *colon = strrchr(arg, ':'), *base;
  size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
  void *lib;
  tinyrt_session_options o;
  tinyrt_status st;
  uint32_t i;
  if (len >= sizeof path) return fail("path too long", arg, NULL);
  memcpy(path, arg, len);
  path[len] = 0;
  m->path = arg;
  if (colon) {
    snprintf(symbol, sizeof symbol, "%s", colon + 1);
  } else {
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    len = strlen(base);
    if (len > 3 && strcmp(base + len - 3, ".so") == 0) len -= 3;
    snprintf(symbol, sizeof symbol, "%.*s_model", (int)len, base);
  }
  lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fail("cannot load", path, dlerror());
  m->model = (const tinyrt_model *)dlsym(lib, symbol);
  if (!m->model) return fail("no descriptor", path, symbol);
  if (posix_memalign(&m->arena, TINYRT_ARENA_ALIGN, tinyrt_model_arena_bytes(m->model) + 1) != 0)
    return fail("out of memory", path, NULL);
  tinyrt_session_options_init(&o);
  o.pool = pool;
  o.on_step = with_steps ? on_step : NULL;
  o.on_step_user = m;
  st = tinyrt_session_init(&m->session, m->model, m->arena, tinyrt_model_arena_bytes(m->model), &o);
  if (st != TINYRT_OK) return fail(tinyrt_status_string(st), path, tinyrt_session_message(&m->session));
  m->num_steps = m->model->num_steps < MAX_STEPS ? m->model->num_steps : MAX_STEPS;
  m->runs = (double *)calloc((size_t)total_runs, sizeof(double));
  m->steps = with_steps ? (double *)calloc((size_t)total_runs * m->num_steps, sizeof(double)) : NULL;
  if (!m->runs || (with_steps && !m->steps)) return fail("out of memory", path, NULL);
  {
    size_t total = 0;
    uint32_t state = 12345u;
    for (i = 0; i < tinyrt_session_num_inputs(&m->session); ++i) {
      tinyrt_tensor t;
      if (tinyrt_session_input(&m->session, i, &t) == TINYRT_OK) total += t.bytes;
    }
    m->inputs = malloc(total ? total : 1);
    if (!m->inputs) return fail("out of memory", path, NULL);
    for (total = 0, i = 0; i < tinyrt_session_num_inputs(&m->session); ++i) {
      tinyrt_tensor t;
      unsigned char *d = (unsigned char *)m->inputs + total;
      size_t j;
      if (tinyrt_session_input(&m->session, i, &t) != TINYRT_OK) continue;
      memset(d, 0, t.bytes);
      for (j = 0; t.dtype == TINYRT_DTYPE_FLOAT32 && j < t.bytes / 4; ++j) {
        float v;
        state = state * 1664525u + 1013904223u;
        v = (float)(state >> 8) / 8388608.0f - 1.0f;
        memcpy(d + 4 * j, &v, 4);
      }
      total += t.bytes;
    }
  }
  return 0;
}

/* Writes the inputs into the arena (a run reuses their bytes for
 * intermediate results, so every run needs them written again). */
static void write_inputs(ab_model *m) {
  size_t total = 0;
  uint32_t i;
  for (i = 0; i < tinyrt_session_num_inputs(&m->session); ++i) {
    tinyrt_tensor t;
    if (tinyrt_session_input(&m->session, i, &t) != TINYRT_OK) continue;
    memcpy(t.data, (unsigned char *)m->inputs + total, t.bytes);
    total += t.bytes;
  }
}

static int run(ab_model *m, int timed) {
  double t0;
  tinyrt_status st;
  write_inputs(m);
  t0 = now_ms();
  st = tinyrt_session_run(&m->session);
  if (st != TINYRT_OK) return fail(tinyrt_status_string(st), m->path, tinyrt_session_message(&m->session));
  if (timed) m->runs[m->n++] = now_ms() - t0;
  return 0;
}

int main(int argc, char **argv) {
  int threads = 1, rounds = 10, runs = 10, with_steps = 0, n = 0, i, r, k, a;
  static ab_model models[MAX_MODELS];
  static unsigned char pool_storage[TINYRT_POOL_STORAGE_BYTES(TINYRT_MAX_THREADS)] TINYRT_ALIGNED_ARENA;
  tinyrt_pool *pool = NULL;
  const char *paths[MAX_MODELS];
  for (a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
      threads = atoi(argv[++a]);
    else if (strcmp(argv[a], "--rounds") == 0 && a + 1 < argc)
      rounds = atoi(argv[++a]);
    else if (strcmp(argv[a], "--runs") == 0 && a + 1 < argc)
      runs = atoi(argv[++a]);
    else if (strcmp(argv[a], "--steps") == 0)
      with_steps = 1;
    else if (argv[a][0] == '-' || n == MAX_MODELS) {
      fprintf(stderr,
              "usage: ab_bench [--threads N] [--rounds R] [--runs K] [--steps] LIB.so[:SYMBOL]... (at most %d)\n",
              MAX_MODELS);
      return 2;
    } else
      paths[n++] = argv[a];
  }
  if (n == 0 || rounds < 1 || runs < 1) {
    fprintf(stderr, "ab_bench: give at least one model, and rounds and runs >= 1\n");
    return 2;
  }
  if (threads > 1) {
    tinyrt_status st = tinyrt_pool_create(pool_storage, sizeof pool_storage, threads, &pool);
    if (st != TINYRT_OK) return fail(tinyrt_status_string(st), "pool", NULL);
  }
  for (i = 0; i < n; ++i)
    if (load(&models[i], paths[i], pool, with_steps, rounds * runs)) return 1;
  for (r = 0; r < rounds; ++r) {
    for (i = 0; i < n; ++i) {
      ab_model *m = &models[r % 2 ? n - 1 - i : i];
      if (run(m, 0)) return 1;
      for (k = 0; k < runs; ++k)
        if (run(m, 1)) return 1;
    }
  }
  printf("%d threads, %d rounds of %d runs each, alternated\n", threads, rounds, runs);
  {
    double first = 0;
    for (i = 0; i < n; ++i) {
      ab_model *m = &models[i];
      double med = quantile(m->runs, m->n, 0.5);
      if (i == 0) first = med;
      printf("  %-40s median %8.4f ms  p10 %8.4f  p90 %8.4f  ratio %.3f\n", m->path, med, quantile(m->runs, m->n, 0.1),
             quantile(m->runs, m->n, 0.9), med / first);
    }
  }
  if (with_steps) {
    uint32_t s;
    double *v = (double *)malloc(sizeof(double) * (size_t)rounds * runs);
    if (!v) return 1;
    printf("  step medians, ms (ratio to the first model's)\n");
    for (s = 0; s < models[0].num_steps; ++s) {
      double first = 0;
      printf("  %4u", s);
      for (i = 0; i < n; ++i) {
        ab_model *m = &models[i];
        double med;
        if (s >= m->num_steps) continue;
        for (k = 0; k < m->n; ++k) v[k] = m->steps[(size_t)k * m->num_steps + s];
        med = quantile(v, m->n, 0.5);
        if (i == 0) first = med;
        if (i == 0)
          printf("  %8.4f", med);
        else
          printf("  %8.4f (%.2f)", med, first > 0 ? med / first : 0);
      }
      printf("\n");
    }
    free(v);
  }
  if (pool) tinyrt_pool_destroy(pool);
  return 0;
}
