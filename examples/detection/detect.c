/* Object detection with non-maximum suppression in the model: a small
 * YOLO-style detector (squares and disks in 64x64 colour pictures, see
 * examples/models/make_detector.py) linked in. Its outputs have a run-time
 * first dimension, the number of detections of this picture (0 .. the
 * bound in the header, DETECTOR_OUTPUT_0_DIM0_MAX): after each run the
 * output tensors' dims say how many there are (docs/ABI.md).
 *
 *   detect [--threads N] [--check] [PICTURE.ppm ...]
 *
 * Prints the boxes found in each picture (a binary PPM, 64x64), or in the
 * built-in test pictures when none is given; --check compares those with
 * PyTorch's detections and exits non-zero when they differ. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detector.h"
#include "detector_data.h"
#include "tinyrt.h"

#define MAX_THREADS 8
#define PIXELS (DETECT_SIZE * DETECT_SIZE)
static uint8_t arena[DETECTOR_ARENA_BYTES] TINYRT_ALIGNED_ARENA;
static uint8_t pool_storage[TINYRT_POOL_STORAGE_BYTES(MAX_THREADS)] TINYRT_ALIGNED_ARENA;

/* A binary PPM ("P6", maxval 255) of DETECT_SIZE x DETECT_SIZE pixels into
 * rgb (channels first). Returns 0, or -1 with a message. */
static int read_ppm(const char *path, unsigned char *rgb) {
  static unsigned char pix[3 * PIXELS];
  int w = 0, h = 0, maxval = 0, i, c;
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  if (fscanf(f, "P6 %d %d %d", &w, &h, &maxval) != 3 || fgetc(f) == EOF || maxval != 255) {
    fprintf(stderr, "detect: %s: not a binary PPM with 8-bit samples\n", path);
    fclose(f);
    return -1;
  }
  if (w != DETECT_SIZE || h != DETECT_SIZE) {
    fprintf(stderr, "detect: %s: the picture is %dx%d; the model takes %dx%d\n", path, w, h, DETECT_SIZE, DETECT_SIZE);
    fclose(f);
    return -1;
  }
  if (fread(pix, 1, sizeof pix, f) != sizeof pix) {
    fprintf(stderr, "detect: %s: the pixels end early\n", path);
    fclose(f);
    return -1;
  }
  fclose(f);
  for (i = 0; i < PIXELS; ++i)
    for (c = 0; c < 3; ++c) rgb[c * PIXELS + i] = pix[3 * i + c];
  return 0;
}

/* Runs the detector on one picture and prints its detections; with
 * `expected` (count n), also compares them. Returns the number of
 * differences, or -1 on an error. */
static int detect(tinyrt_session *s, const char *label, const unsigned char *rgb, const detect_reference *expected,
                  int n) {
  tinyrt_tensor in, boxes, scores, classes;
  const float *b, *sc;
  const int64_t *cl;
  int i, k, differ = 0;
  tinyrt_status st;
  float *x;
  tinyrt_session_find_input(s, DETECTOR_INPUT_0_NAME, &in);
  x = (float *)in.data;
  for (i = 0; i < 3 * PIXELS; ++i) x[i] = (float)rgb[i] / 255.0f;
  st = tinyrt_session_run(s);
  if (st != TINYRT_OK) {
    fprintf(stderr, "detect: %s: %s\n", tinyrt_status_string(st), tinyrt_session_message(s));
    return -1;
  }
  /* After the run: dims[0] of each output is this picture's count. */
  tinyrt_session_output(s, 0, &boxes);
  tinyrt_session_output(s, 1, &scores);
  tinyrt_session_output(s, 2, &classes);
  k = (int)boxes.dims[0];
  b = (const float *)boxes.data;
  sc = (const float *)scores.data;
  cl = (const int64_t *)classes.data;
  printf("%s: %d detection(s)\n", label, k);
  for (i = 0; i < k; ++i)
    printf("  %-6s %.2f  (%5.1f, %5.1f) - (%5.1f, %5.1f)\n", detect_class_names[cl[i]], sc[i], b[4 * i], b[4 * i + 1],
           b[4 * i + 2], b[4 * i + 3]);
  if (!expected) return 0;
  if (k != n) {
    printf("  PyTorch found %d\n", n);
    return 1;
  }
  for (i = 0; i < k; ++i) {
    int j, same = cl[i] == expected[i].cls && fabsf(sc[i] - expected[i].score) <= 1e-4f;
    for (j = 0; j < 4; ++j) same = same && fabsf(b[4 * i + j] - expected[i].box[j]) <= 1e-3f;
    if (!same) {
      printf("  detection %d differs from PyTorch's: %s %.4f (%.3f, %.3f) - (%.3f, %.3f)\n", i,
             detect_class_names[expected[i].cls], expected[i].score, expected[i].box[0], expected[i].box[1],
             expected[i].box[2], expected[i].box[3]);
      ++differ;
    }
  }
  return differ;
}

int main(int argc, char **argv) {
  int threads = 1, check = 0, files = 0, differ = 0, i;
  tinyrt_pool *pool = NULL;
  tinyrt_session_options opt;
  tinyrt_session s;
  tinyrt_status st;
  for (i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--check"))
      check = 1;
    else if (argv[i][0] == '-') {
      fprintf(stderr, "usage: detect [--threads N] [--check] [PICTURE.ppm ...]\n");
      return 2;
    } else
      ++files;
  }
  if (threads < 1 || threads > MAX_THREADS) {
    fprintf(stderr, "detect: threads must be 1..%d\n", MAX_THREADS);
    return 2;
  }
  st = tinyrt_pool_create(pool_storage, sizeof pool_storage, threads, &pool);
  if (st != TINYRT_OK) {
    fprintf(stderr, "detect: pool: %s\n", tinyrt_status_string(st));
    return 1;
  }
  tinyrt_session_options_init(&opt);
  opt.pool = pool;
  st = tinyrt_session_init(&s, &detector_model, arena, sizeof arena, &opt);
  if (st != TINYRT_OK) {
    fprintf(stderr, "detect: %s: %s\n", tinyrt_status_string(st), tinyrt_session_message(&s));
    return 1;
  }
  printf("detect: %s, %d thread(s), arena %u bytes, at most %d detections\n", detector_model.name, threads,
         (unsigned)DETECTOR_ARENA_BYTES, (int)DETECTOR_OUTPUT_0_DIM0_MAX);
  if (files) {
    static unsigned char rgb[3 * PIXELS];
    for (i = 1; i < argc; ++i) {
      if (!strcmp(argv[i], "--threads")) ++i;
      if (argv[i][0] == '-') continue;
      if (read_ppm(argv[i], rgb) != 0 || detect(&s, argv[i], rgb, NULL, 0) < 0) return 1;
    }
  } else {
    const detect_reference *ref = detect_expected;
    for (i = 0; i < DETECT_TEST_COUNT; ++i) {
      char label[32];
      int d;
      sprintf(label, "test picture %d", i);
      d = detect(&s, label, detect_pictures[i], check ? ref : NULL, detect_expected_count[i]);
      if (d < 0) return 1;
      differ += d;
      ref += detect_expected_count[i];
    }
    if (check) {
      if (differ) {
        printf("detect: %d detection(s) differ from PyTorch's\n", differ);
        return 1;
      }
      printf("detect: every detection matches PyTorch's\n");
    }
  }
  tinyrt_pool_destroy(pool);
  return 0;
}
