/* A Linux app for the Raspberry Pi (armhf or aarch64): a fixed thread pool
 * created once in static storage, a static arena, the demo classifier
 * linked in. Prints the top classes and the latency.
 *
 *   classify [--threads N] [--runs N] [--check]
 *
 * --check compares the output with PyTorch's for the built-in image and
 * exits non-zero when they differ. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo.h"
#include "demo_data.h"
#include "tinyrt.h"

#define MAX_THREADS 8
static uint8_t arena[DEMO_ARENA_BYTES] TINYRT_ALIGNED_ARENA;
static uint8_t pool_storage[TINYRT_POOL_STORAGE_BYTES(MAX_THREADS)] TINYRT_ALIGNED_ARENA;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int threads = 1, runs = 20, check = 0, i;
  tinyrt_pool *pool = NULL;
  tinyrt_session_options opt;
  tinyrt_session s;
  tinyrt_tensor in, out;
  tinyrt_status st;
  double times[1000];
  const float *p;
  for (i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--check")) check = 1;
    else {
      fprintf(stderr, "usage: classify [--threads N] [--runs N] [--check]\n");
      return 2;
    }
  }
  if (threads < 1 || threads > MAX_THREADS || runs < 1 || runs > 1000) {
    fprintf(stderr, "classify: threads must be 1..%d and runs 1..1000\n", MAX_THREADS);
    return 2;
  }
  st = tinyrt_pool_create(pool_storage, sizeof pool_storage, threads, &pool);
  if (st != TINYRT_OK) {
    fprintf(stderr, "classify: pool: %s\n", tinyrt_status_string(st));
    return 1;
  }
  tinyrt_session_options_init(&opt);
  opt.pool = pool;
  st = tinyrt_session_init(&s, &demo_model, arena, sizeof arena, &opt);
  if (st != TINYRT_OK) {
    fprintf(stderr, "classify: %s: %s\n", tinyrt_status_string(st), tinyrt_session_message(&s));
    return 1;
  }
  tinyrt_session_find_input(&s, DEMO_INPUT_0_NAME, &in);
  for (i = 0; i < runs; ++i) {
    double t0;
    memcpy(in.data, demo_input, in.bytes); /* inputs are consumed by each run */
    t0 = now_ms();
    tinyrt_session_run(&s);
    times[i] = now_ms() - t0;
  }
  qsort(times, (size_t)runs, sizeof times[0], cmp);
  tinyrt_session_output(&s, 0, &out);
  p = (const float *)out.data;
  printf("classify: %s, %d thread(s), arena %u bytes: median %.3f ms, min %.3f ms over %d runs\n",
         demo_model.name, threads, (unsigned)DEMO_ARENA_BYTES, times[runs / 2], times[0], runs);
  {
    int top[3] = {0, 0, 0}, k, j;
    for (k = 0; k < 3; ++k) {
      int b = -1;
      for (j = 0; j < (int)DEMO_OUTPUT_0_ELEMENTS; ++j)
        if ((k < 1 || j != top[0]) && (k < 2 || j != top[1]) && (b < 0 || p[j] > p[b])) b = j;
      top[k] = b;
      printf("  class %d: %.6f\n", b, p[b]);
    }
  }
  if (check) {
    float worst = 0;
    for (i = 0; i < (int)DEMO_OUTPUT_0_ELEMENTS; ++i) {
      float d = p[i] > demo_expected[i] ? p[i] - demo_expected[i] : demo_expected[i] - p[i];
      if (d > worst) worst = d;
    }
    printf("classify: max difference from PyTorch %.3g\n", worst);
    if (worst > 1e-5f) return 1;
  }
  tinyrt_pool_destroy(pool);
  return 0;
}
