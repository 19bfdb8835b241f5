/* pool_bench — the thread pool under a synthetic multi-step model, with 1..N
 * threads (also more threads than cores). Not a test: it prints figures.
 *
 *   pool_bench [--runs N] [--steps S] [--work W] [--threads MAX] [--spin US]
 *
 * The model has S steps cycling through task counts 1, 7, 64, 256 and 1000;
 * each task does W multiply-adds on its own slice of the arena. For every
 * thread count it prints the per-run latency (median, 10th and 90th
 * percentile, mean), the ratio of the median to the 2-thread median, and the
 * CPU time the process burns in the 20 ms after the last run (idle workers
 * should be asleep by then).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tinyrt.h"

#define ARCH TINYRT_ARCH_NATIVE

#define MAX_STEPS 4096
#define SLICE 64 /* floats per task */
static int g_work = 64;

static void kernel(uint8_t *arena, int32_t b, int32_t e) {
  float *x = (float *)arena;
  int32_t t;
  int k, i;
  for (t = b; t < e; ++t) {
    float *s = x + (size_t)t * SLICE;
    for (k = 0; k < g_work; ++k)
      for (i = 0; i < SLICE; ++i) s[i] = s[i] * 0.999f + 0.001f * (float)k;
  }
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static tinyrt_step_desc steps[MAX_STEPS];
static unsigned char pool_mem[TINYRT_POOL_STORAGE_BYTES(TINYRT_MAX_THREADS)] TINYRT_ALIGNED_ARENA;

int main(int argc, char **argv) {
  static const int32_t kTasks[5] = {1, 7, 64, 256, 1000};
  int runs = 300, nsteps = 40, max_threads = 4, spin = -1, i, t, r;
  double base2 = 0;
  tinyrt_model m;
  void *arena;
  size_t arena_bytes = (size_t)1000 * SLICE * sizeof(float);
  for (i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--runs"))
      runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--steps"))
      nsteps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--work"))
      g_work = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads"))
      max_threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--spin"))
      spin = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: pool_bench [--runs N] [--steps S] [--work W] [--threads MAX] [--spin US]\n");
      return 2;
    }
  }
  if (runs < 1 || nsteps < 1 || nsteps > MAX_STEPS || max_threads < 1 || max_threads > TINYRT_MAX_THREADS) {
    fprintf(stderr, "pool_bench: bad arguments\n");
    return 2;
  }
  for (i = 0; i < nsteps; ++i) {
    steps[i].fn = kernel;
    steps[i].tasks = kTasks[i % 5];
    steps[i].flags = 0;
  }
  memset(&m, 0, sizeof m);
  m.magic = TINYRT_ARTIFACT_MAGIC;
  m.abi_major = TINYRT_ABI_MAJOR;
  m.abi_minor = TINYRT_ABI_MINOR;
  m.desc_bytes = sizeof m;
  m.arch = ARCH;
  m.num_steps = (uint32_t)nsteps;
  m.name = "pool_bench";
  m.arena_bytes = arena_bytes;
  m.steps = steps;
#if TINYRT_ABI_MINOR >= 1
  m.tensor_desc_bytes = sizeof(tinyrt_tensor_desc);
  m.step_desc_bytes = sizeof(tinyrt_step_desc);
#endif
  if (posix_memalign(&arena, TINYRT_ARENA_ALIGN, arena_bytes) != 0) return 1;
  memset(arena, 0, arena_bytes);

  printf("pool_bench: %d steps (tasks 1/7/64/256/1000), %d FMA x %d floats per task, %d runs\n", nsteps, g_work, SLICE,
         runs);
  printf("threads  median_us    p10_us    p90_us   mean_us  vs_2_threads  idle_cpu_ms_in_20ms\n");
  for (t = 1; t <= max_threads; ++t) {
    tinyrt_pool *pool = NULL;
    tinyrt_session s;
    tinyrt_session_options opt;
    tinyrt_status st;
    double *lat = (double *)malloc(sizeof(double) * (size_t)runs), sum = 0, c0, c1;
    struct timespec idle = {0, 20 * 1000 * 1000};
    char ratio[32];
    tinyrt_session_options_init(&opt);
    st = tinyrt_pool_create(pool_mem, sizeof pool_mem, t, &pool);
    if (st != TINYRT_OK) {
      fprintf(stderr, "pool_bench: pool of %d: %s\n", t, tinyrt_status_string(st));
      return 1;
    }
#if TINYRT_ABI_MINOR >= 1
    if (spin >= 0) tinyrt_pool_set_spin_us(pool, (uint32_t)spin);
#endif
    opt.pool = pool;
    st = tinyrt_session_init(&s, &m, arena, arena_bytes, &opt);
    if (st != TINYRT_OK) {
      fprintf(stderr, "pool_bench: %s\n", tinyrt_session_message(&s));
      return 1;
    }
    for (r = 0; r < 10; ++r) tinyrt_session_run(&s); /* warm-up */
    for (r = 0; r < runs; ++r) {
      double t0 = now_us();
      tinyrt_session_run(&s);
      lat[r] = now_us() - t0;
      sum += lat[r];
    }
    c0 = cpu_ms();
    nanosleep(&idle, NULL);
    c1 = cpu_ms();
    qsort(lat, (size_t)runs, sizeof(double), cmp_double);
    if (t == 2) base2 = lat[runs / 2];
    if (t >= 2) snprintf(ratio, sizeof ratio, "%.2fx", lat[runs / 2] / base2);
    printf("%7d %10.1f %9.1f %9.1f %9.1f %13s %20.2f\n", t, lat[runs / 2], lat[runs / 10], lat[runs * 9 / 10],
           sum / runs, t >= 2 ? ratio : "-", c1 - c0);
    tinyrt_pool_destroy(pool);
    free(lat);
  }
  free(arena);
  return 0;
}
