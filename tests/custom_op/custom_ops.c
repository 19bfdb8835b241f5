/* custom_ops.c — the C side of tests/custom_op's models (--custom-op
 * my.ops::CumMax=my_cummax --custom-op my.ops::Twice=my_twice:same
 * --custom-op my.ops::Fail=my_fail:same). Freestanding: linked into the
 * model's .so without a C library. Each function checks the views it gets
 * (counts, dtype, dims, names) and returns a distinct status when they are
 * wrong, so a bad call fails the test with that status. */
#include "tinyrt.h"

static int same_str(const char *a, const char *b) {
  if (!a || !b) return 0;
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

static int64_t elements(const tinyrt_tensor *t) {
  int64_t n = 1;
  uint32_t k;
  for (k = 0; k < t->rank; ++k) n *= t->dims[k];
  return n;
}

static int same_shape(const tinyrt_tensor *a, const tinyrt_tensor *b) {
  uint32_t k;
  if (a->rank != b->rank || a->bytes != b->bytes) return 0;
  for (k = 0; k < a->rank; ++k)
    if (a->dims[k] != b->dims[k]) return 0;
  return 1;
}

/* One float32 input and one float32 output of the same shape. */
static int unary_f32(const tinyrt_custom_call *c) {
  return c->num_inputs == 1 && c->num_outputs == 1 && c->inputs[0].dtype == TINYRT_DTYPE_FLOAT32 &&
         c->outputs[0].dtype == TINYRT_DTYPE_FLOAT32 && same_shape(&c->inputs[0], &c->outputs[0]) &&
         c->inputs[0].bytes == (size_t)elements(&c->inputs[0]) * 4 && c->inputs[0].data && c->outputs[0].data;
}

/* Cumulative maximum along the last axis. */
tinyrt_status my_cummax(const tinyrt_custom_call *c) {
  const float *x;
  float *y;
  int64_t rows, n, r, i;
  if (!unary_f32(c) || c->inputs[0].rank < 1) return (tinyrt_status)101;
  if (!same_str(c->node, "cummax_node") || !same_str(c->op, "my.ops::CumMax") || !same_str(c->outputs[0].name, "m"))
    return (tinyrt_status)102;
  x = (const float *)c->inputs[0].data;
  y = (float *)c->outputs[0].data;
  n = c->inputs[0].dims[c->inputs[0].rank - 1];
  rows = n ? elements(&c->inputs[0]) / n : 0;
  for (r = 0; r < rows; ++r) {
    float m = x[r * n];
    for (i = 0; i < n; ++i) {
      float v = x[r * n + i];
      m = v > m ? v : m;
      y[r * n + i] = m;
    }
  }
  return TINYRT_OK;
}

tinyrt_status my_twice(const tinyrt_custom_call *c) {
  const float *x;
  float *y;
  int64_t i, n;
  if (!unary_f32(c) || !same_str(c->node, "twice_node")) return (tinyrt_status)103;
  x = (const float *)c->inputs[0].data;
  y = (float *)c->outputs[0].data;
  n = elements(&c->inputs[0]);
  for (i = 0; i < n; ++i) y[i] = 2.0f * x[i];
  return TINYRT_OK;
}

/* Always fails: the run must stop with this status, naming the node. */
tinyrt_status my_fail(const tinyrt_custom_call *c) {
  (void)c;
  return TINYRT_ERR_INVALID_ARGUMENT;
}
