/* A Linux app for the Raspberry Pi (armhf or aarch64): a fixed thread pool
 * created once in static storage, a static arena, the demo classifier (a
 * small CNN trained on sklearn's 8x8 handwritten digits, see
 * examples/models/make_demo_model.py) linked in. Prints the top classes of
 * the built-in reference image and the latency.
 *
 *   classify [--threads N] [--runs N] [--check] [--test [--pictures]]
 *
 * --check compares the output with PyTorch's for the reference image and
 * exits non-zero when they differ.
 * --test classifies the held-back test images instead (each once) and
 * prints the accuracy, a few predictions, the median latency per image
 * and the arena, weights and code sizes (--pictures: draws the images of
 * those predictions); with --check it also exits non-zero unless every
 * prediction is PyTorch's. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo.h"
#define DEMO_DATA_TEST_SET /* demo_data.h: the held-back test set too */
#include "demo_data.h"
#include "tinyrt.h"
#ifdef DEMO_HAVE_CODE_BYTES_H
#include "demo_code_bytes.h" /* DEMO_CODE_BYTES, from demo.json (the build writes it) */
#endif

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

static void print_ms(double ms) {
  if (ms < 1)
    printf("%.1f us", ms * 1e3);
  else
    printf("%.2f ms", ms);
}

static int argmax(const float *p, int n) {
  int j, b = 0;
  for (j = 1; j < n; ++j)
    if (p[j] > p[b]) b = j;
  return b;
}

/* Prints the predictions for test images idx[0..n): one line each, or with
 * `pictures` the images side by side, 8x8 characters each, above them. */
static void show(int pictures, const int *idx, int n, const unsigned char *pred, const float *prob) {
  static const char shade[] = " .:+#";
  int k, r, c;
  if (!pictures) {
    for (k = 0; k < n; ++k)
      printf("  image %3d: label %d, predicted %d (p = %.2f)%s\n", idx[k], demo_test_labels[idx[k]], pred[idx[k]],
             prob[idx[k]], pred[idx[k]] == demo_test_labels[idx[k]] ? "" : "  WRONG");
    return;
  }
  printf(" ");
  for (k = 0; k < n; ++k) printf("   image %-4d", idx[k]);
  printf("\n");
  for (r = 0; r < 8; ++r) {
    printf(" ");
    for (k = 0; k < n; ++k) {
      printf("   |");
      for (c = 0; c < 8; ++c) printf("%c", shade[(int)(demo_test_images[idx[k]][r * 8 + c] * 4.0f + 0.5f)]);
      printf("|");
    }
    printf("\n");
  }
  printf(" ");
  for (k = 0; k < n; ++k) printf("   label %d   ", demo_test_labels[idx[k]]);
  printf("\n ");
  for (k = 0; k < n; ++k) printf("   %-10s", pred[idx[k]] == demo_test_labels[idx[k]] ? "correct" : "WRONG");
  printf("\n ");
  for (k = 0; k < n; ++k) printf("   -> %d %.2f ", pred[idx[k]], prob[idx[k]]);
  printf("\n");
}

/* --test: every held-back image once. Returns the number of predictions
 * that differ from PyTorch's, or -1 on an error. */
static int test_set(tinyrt_session *s, int threads, int pictures) {
  static double times[DEMO_TEST_COUNT];
  static unsigned char pred[DEMO_TEST_COUNT];
  static float prob[DEMO_TEST_COUNT];
  tinyrt_tensor in, out;
  int i, correct = 0, same = 0, shown = 0, idx[6];
  tinyrt_session_find_input(s, DEMO_INPUT_0_NAME, &in);
  tinyrt_session_output(s, 0, &out);
  if (in.bytes != sizeof demo_test_images[0]) {
    fprintf(stderr, "classify: the model takes %u bytes, a test image is %u\n", (unsigned)in.bytes,
            (unsigned)sizeof demo_test_images[0]);
    return -1;
  }
  for (i = 0; i < DEMO_TEST_COUNT; ++i) {
    const float *p = (const float *)out.data;
    double t0;
    tinyrt_status st;
    memcpy(in.data, demo_test_images[i], in.bytes);
    t0 = now_ms();
    st = tinyrt_session_run(s);
    times[i] = now_ms() - t0;
    if (st != TINYRT_OK) {
      fprintf(stderr, "classify: %s: %s\n", tinyrt_status_string(st), tinyrt_session_message(s));
      return -1;
    }
    pred[i] = (unsigned char)argmax(p, (int)DEMO_OUTPUT_0_ELEMENTS);
    prob[i] = p[pred[i]];
    correct += pred[i] == demo_test_labels[i];
    same += pred[i] == demo_test_torch_pred[i];
  }
  /* the first four images and the first two mistakes */
  for (i = 0; i < DEMO_TEST_COUNT && shown < 6; ++i)
    if (i < 4 || pred[i] != demo_test_labels[i]) idx[shown++] = i;
  qsort(times, DEMO_TEST_COUNT, sizeof times[0], cmp);
  printf("classify: %d held-back test images (sklearn's handwritten digits, 8x8), %d thread(s)\n", DEMO_TEST_COUNT,
         threads);
  show(pictures, idx, shown, pred, prob);
  printf("  accuracy %.1f%% (%d/%d); PyTorch %.1f%%, same class as PyTorch for %d/%d\n",
         100.0 * correct / DEMO_TEST_COUNT, correct, DEMO_TEST_COUNT, 100.0 * DEMO_TEST_TORCH_CORRECT / DEMO_TEST_COUNT,
         same, DEMO_TEST_COUNT);
  printf("  latency per image: median ");
  print_ms(times[DEMO_TEST_COUNT / 2]);
  printf(", min ");
  print_ms(times[0]);
  printf("\n");
  printf("  sizes: arena %u bytes, weights %u bytes", (unsigned)DEMO_ARENA_BYTES, (unsigned)demo_model.weights_bytes);
#ifdef DEMO_CODE_BYTES
  printf(", code %u bytes", (unsigned)DEMO_CODE_BYTES);
#endif
  printf("\n");
  return DEMO_TEST_COUNT - same;
}

int main(int argc, char **argv) {
  int threads = 1, runs = 20, check = 0, test = 0, pictures = 0, i;
  tinyrt_pool *pool = NULL;
  tinyrt_session_options opt;
  tinyrt_session s;
  tinyrt_tensor in, out;
  tinyrt_status st;
  double times[1000];
  const float *p;
  for (i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--check"))
      check = 1;
    else if (!strcmp(argv[i], "--test"))
      test = 1;
    else if (!strcmp(argv[i], "--pictures"))
      pictures = 1;
    else {
      fprintf(stderr, "usage: classify [--threads N] [--runs N] [--check] [--test [--pictures]]\n");
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
  if (test) {
    int differ = test_set(&s, threads, pictures);
    if (differ < 0) return 1;
    if (check && differ > 0) {
      printf("classify: %d prediction(s) differ from PyTorch's\n", differ);
      return 1;
    }
    runs = 1; /* then the reference image once, for --check */
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
  if (!test) { /* the top classes of the reference image */
    int top[3] = {0, 0, 0}, k, j;
    printf("classify: %s, %d thread(s), arena %u bytes: median %.3f ms, min %.3f ms over %d runs\n", demo_model.name,
           threads, (unsigned)DEMO_ARENA_BYTES, times[runs / 2], times[0], runs);
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
    printf("classify: reference image: max difference from PyTorch %.3g\n", worst);
    if (worst > 1e-5f) return 1;
  }
  tinyrt_pool_destroy(pool);
  return 0;
}
