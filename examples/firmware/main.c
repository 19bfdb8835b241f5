/* A firmware-like app: no heap, no threads, no file system. The arena is a
 * static array sized by the model header; the model is linked in as an
 * object; output goes through a one-function "board" seam (a UART on a
 * real board). Built two ways: as a Linux program with the bare-metal port
 * (write(2), so the test runs under qemu-arm), and as real firmware with
 * arm-none-eabi-gcc and picolibc (baremetal/: its own startup and linker
 * script; stdout is semihosting, so it runs under qemu-system-arm).
 *
 * It checks the model's weights (tinyrt_session_verify: flash corruption),
 * runs the demo classifier on the image in demo_data.h and checks the
 * result against PyTorch's, so the test fails if anything is off. Linked
 * with -Wl,--wrap=malloc (etc.): any allocation from the app, the runtime
 * or the model aborts. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"
#include "demo_data.h"
#include "tinyrt.h"

static uint8_t arena[DEMO_ARENA_BYTES] TINYRT_ALIGNED_ARENA;

/* ---- board seam ---- */
#if defined(__linux__)
static void board_puts(const char *s) { (void)!write(1, s, strlen(s)); }
#else
/* Bare metal: the C library's stdout, which the board retargets (picolibc
 * with --oslib=semihost: the debugger's or qemu's console). */
#include <stdio.h>
static void board_puts(const char *s) { fputs(s, stdout); }
#endif

static void board_put_u32(uint32_t v) {
  char buf[11];
  int n = 10;
  buf[n] = '\0';
  do {
    buf[--n] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  board_puts(buf + n);
}

/* ---- proof of no heap: these replace malloc & co. for our objects ---- */
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
static void no_heap(void) {
  board_puts("firmware: heap use detected\n");
  _exit(3);
}
void *__wrap_malloc(size_t n) {
  (void)n;
  no_heap();
  return 0;
}
void *__wrap_calloc(size_t n, size_t m) {
  (void)n;
  (void)m;
  no_heap();
  return 0;
}
void *__wrap_realloc(void *p, size_t n) {
  (void)p;
  (void)n;
  no_heap();
  return 0;
}
void __wrap_free(void *p) {
  (void)p;
  no_heap();
}

int main(void) {
  tinyrt_session s;
  tinyrt_tensor in, out;
  const float *prob;
  uint32_t i, best = 0;
  float worst = 0, tol;
  tinyrt_status st = tinyrt_session_init(&s, &demo_model, arena, sizeof arena, NULL);
  if (st != TINYRT_OK) {
    board_puts("firmware: init failed: ");
    board_puts(tinyrt_session_message(&s));
    board_puts("\n");
    return 1;
  }
  /* At boot, check the weights in flash against the compiler's checksum. */
  st = tinyrt_session_verify(&s);
  if (st != TINYRT_OK) {
    board_puts("firmware: weights check failed: ");
    board_puts(tinyrt_session_message(&s));
    board_puts("\n");
    return 1;
  }
  board_puts("firmware: weights verified (");
  board_put_u32((uint32_t)DEMO_WEIGHTS_BYTES);
  board_puts(" bytes)\n");
  tinyrt_session_input(&s, 0, &in);
  memcpy(in.data, demo_input, in.bytes);
  st = tinyrt_session_run(&s);
  if (st != TINYRT_OK) {
    board_puts("firmware: run failed\n");
    return 1;
  }
  tinyrt_session_output(&s, 0, &out);
  prob = (const float *)out.data;
  for (i = 0; i < DEMO_OUTPUT_0_ELEMENTS; ++i) {
    float d = prob[i] - demo_expected[i];
    if (d < 0) d = -d;
    if (d > worst) worst = d;
    if (prob[i] > prob[best]) best = i;
  }
  board_puts("firmware: class ");
  board_put_u32(best);
  board_puts(" with p = ");
  board_put_u32((uint32_t)(prob[best] * 1e6f + 0.5f));
  board_puts(" ppm; arena ");
  board_put_u32((uint32_t)sizeof arena);
  board_puts(" bytes, no heap\n");
  tol = 1e-5f;
  if (worst > tol) {
    board_puts("firmware: output differs from the reference by more than 1e-5\n");
    return 1;
  }
  board_puts("firmware: output matches the reference\n");
  return 0;
}
