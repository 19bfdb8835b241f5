/* A program built against an installed tinyrt (find_package(tinyrt) +
 * tinyrt_add_model, or pkg-config): runs the demo classifier once on the
 * image in demo_data.h, prints the probabilities and checks them against
 * PyTorch's. */
#include <stdio.h>
#include <string.h>

#include <tinyrt/tinyrt.h>

#include "demo.h"      /* written by tinyrt-compile at build time */
#include "demo_data.h" /* demo_input, demo_expected */

static uint8_t arena[DEMO_ARENA_BYTES] TINYRT_ALIGNED_ARENA;

int main(void) {
  tinyrt_session s;
  tinyrt_tensor in, out;
  const float *p;
  float worst = 0;
  uint32_t i, best = 0;
  tinyrt_status st = tinyrt_session_init(&s, &demo_model, arena, sizeof arena, NULL);
  if (st != TINYRT_OK) {
    fprintf(stderr, "consumer: %s\n", tinyrt_session_message(&s));
    return 1;
  }
  tinyrt_session_input(&s, 0, &in);
  memcpy(in.data, demo_input, in.bytes);
  if (tinyrt_session_run(&s) != TINYRT_OK) {
    fprintf(stderr, "consumer: %s\n", tinyrt_session_message(&s));
    return 1;
  }
  tinyrt_session_output(&s, 0, &out);
  p = (const float *)out.data;
  printf("consumer: probabilities");
  for (i = 0; i < DEMO_OUTPUT_0_ELEMENTS; ++i) {
    float d = p[i] > demo_expected[i] ? p[i] - demo_expected[i] : demo_expected[i] - p[i];
    if (d > worst) worst = d;
    if (p[i] > p[best]) best = i;
    printf(" %.4f", p[i]);
  }
  printf("\nconsumer: class %u, arena %u bytes, max |diff| vs PyTorch %.2g\n", (unsigned)best, (unsigned)sizeof arena,
         worst);
  if (worst > 1e-5f) {
    printf("consumer: output differs from the reference\n");
    return 1;
  }
  printf("consumer: output matches the reference\n");
  return 0;
}
