/* int8_forms.c — the AVX2 int8 product forms measured on this core (what
 * bench/mca_int8_forms.py estimates from LLVM's models): products per
 * cycle of one GEMM register tile's K loop, in L1, for
 *   pairs-w8   int16 pairs, weights sign-extended from bytes as they load
 *              (vpmovsxbw + vpmaddwd + vpaddd; tinyrt's exact form for
 *              8-bit weights, GemmSpec::i16 with w8)
 *   pairs-w16  int16 pairs over int16 weights (the int16-copy trade)
 *   signed     signed bytes (vpsignb + vpmaddubsw + vpmaddwd + vpaddd;
 *              exact: |x| <= 128, |w| <= 127)
 *   bytes      vpmaddubsw + vpmaddwd + vpaddd: ONNX Runtime's AVX2 form,
 *              which saturates for 8-bit weights (tinyrt takes it only
 *              where every pair of weights is exact, e.g. 7-bit weights)
 * at the 6x2 tile (pixels x 8-lane vectors; signed bytes also 4x3, its
 * other AVX2 tile), and the recurrent
 * matrix-vector product of a dynamic int8 LSTM (one row, 8 vectors, signed
 * bytes) over 256 KB of weights per step, as codegen/recurrent_emitter.cpp
 * runs it. Products per cycle assume the clock the first line measures (a
 * chain of dependent decrements, one a cycle); compare rows, not units.
 *   clang-14 -O2 -mavx2 bench/int8_forms.c -o /tmp/int8_forms && /tmp/int8_forms */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define K 256 /* k pairs of the GEMM loop (K / 2 quads) */
static int16_t x16[8][2 * K] __attribute__((aligned(64)));
static uint8_t x8[8][2 * K] __attribute__((aligned(64)));
static int8_t w8[K][64] __attribute__((aligned(64)));
static int16_t w16[K][64] __attribute__((aligned(64)));
static volatile int sink;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double ghz;

/* One K loop of a MR x NV tile per rep, STEPS steps (k pairs or quads):
 * per step NV weight vectors (LOADW), and per row its input broadcast (X),
 * its magnitude (M: |x| for signed bytes) and NV products (P) added into
 * the row's int32 lanes. Products per rep: MR * NV * 8 * 2K. */
#define TILE(name, MR, NV, STEPS, LOADW, X, M, P)                                  \
  static void name(int reps) {                                                     \
    const __m256i one = _mm256_set1_epi16(1);                                      \
    (void)one;                                                                     \
    for (int r = 0; r < reps; r++) {                                               \
      __m256i acc[MR][NV];                                                         \
      for (int i = 0; i < MR; i++)                                                 \
        for (int j = 0; j < NV; j++) acc[i][j] = _mm256_setzero_si256();           \
      for (int k = 0; k < (STEPS); k++) {                                          \
        __m256i w[NV];                                                             \
        for (int j = 0; j < NV; j++) w[j] = LOADW;                                 \
        for (int i = 0; i < MR; i++) {                                             \
          __m256i a = X, m = M;                                                    \
          (void)m;                                                                 \
          for (int j = 0; j < NV; j++) acc[i][j] = _mm256_add_epi32(acc[i][j], P); \
        }                                                                          \
      }                                                                            \
      int s = 0;                                                                   \
      for (int i = 0; i < MR; i++)                                                 \
        for (int j = 0; j < NV; j++) s += _mm256_extract_epi32(acc[i][j], 0);      \
      sink = s;                                                                    \
    }                                                                              \
  }
/* int16 pairs: k pairs of x16 times int16 weights (widened from bytes, or not). */
#define X16 _mm256_set1_epi32(*(const int32_t *)&x16[i][2 * k])
#define W8 _mm256_cvtepi8_epi16(_mm_load_si128((const __m128i *)&w8[k][16 * j]))
#define W16 _mm256_load_si256((const __m256i *)&w16[k][16 * j])
#define PAIR _mm256_madd_epi16(a, w[j])
TILE(pairs_w8_6x2, 6, 2, K, W8, X16, a, PAIR)
TILE(pairs_w16_6x2, 6, 2, K, W16, X16, a, PAIR)
/* Bytes and signed bytes: k quads of x8 times weight bytes. */
#define X8 _mm256_set1_epi32(*(const int32_t *)&x8[i][4 * k])
#define WB _mm256_load_si256((const __m256i *)&w8[k][32 * j])
#define BYTES _mm256_madd_epi16(_mm256_maddubs_epi16(a, w[j]), one)
#define SIGNED _mm256_madd_epi16(_mm256_maddubs_epi16(m, _mm256_sign_epi8(w[j], a)), one)
TILE(bytes_6x2, 6, 2, K / 2, WB, X8, a, BYTES)
TILE(signed_6x2, 6, 2, K / 2, WB, X8, _mm256_abs_epi8(a), SIGNED)
TILE(signed_4x3, 4, 3, K / 2, WB, X8, _mm256_abs_epi8(a), SIGNED)

/* Seconds of f(reps), the best of 7 after a warm-up. */
static double best_seconds(void (*f)(int), int reps) {
  double best = 1e30;
  f(reps / 100 + 1);
  for (int t = 0; t < 7; t++) {
    double a = now();
    f(reps);
    double b = now() - a;
    if (b < best) best = b;
  }
  return best;
}

static void run(const char *name, void (*f)(int), double products_per_rep) {
  const int reps = 20000;
  double per_s = products_per_rep * reps / best_seconds(f, reps);
  printf("%-16s %7.1f G products/s  %5.1f per cycle\n", name, per_s * 1e-9, per_s / (ghz * 1e9));
}

/* The dynamic LSTM's recurrent product: H = 256 hidden units, 4 gates, one
 * state row; 16 groups of 16 units, each [K/4 quads][4 gates][16][4] bytes. */
#define H 256
static int8_t R[16][H / 4][256] __attribute__((aligned(64)));
static int8_t h[H] __attribute__((aligned(64)));
static int32_t gates[16][64] __attribute__((aligned(64)));

static void recurrent(int reps) {
  const __m256i one = _mm256_set1_epi16(1);
  for (int r = 0; r < reps; r++) {
    for (int g = 0; g < 16; g++) {
      __m256i acc[8];
      for (int v = 0; v < 8; v++) acc[v] = _mm256_setzero_si256();
      for (int k = 0; k < H / 4; k++) {
        __m256i x = _mm256_set1_epi32(*(const int32_t *)&h[4 * k]), m = _mm256_abs_epi8(x);
        for (int v = 0; v < 8; v++) {
          __m256i w = _mm256_load_si256((const __m256i *)&R[g][k][32 * v]);
          acc[v] = _mm256_add_epi32(acc[v], _mm256_madd_epi16(_mm256_maddubs_epi16(m, _mm256_sign_epi8(w, x)), one));
        }
      }
      for (int v = 0; v < 8; v++) _mm256_store_si256((__m256i *)&gates[g][8 * v], acc[v]);
    }
    h[r % H] ^= (int8_t)(gates[r % 16][0] & 1); /* the next step depends on this one */
  }
}

int main(void) {
  memset(x16, 1, sizeof x16);
  memset(x8, 1, sizeof x8);
  memset(w8, 1, sizeof w8);
  memset(w16, 1, sizeof w16);
  for (size_t i = 0; i < sizeof R; i++) ((int8_t *)R)[i] = (int8_t)(i * 7 % 255 - 127);
  for (int i = 0; i < H; i++) h[i] = (int8_t)(i % 200 - 100);
  { /* the clock: 2e9 dependent decrements (one a cycle) */
    double best = 1e30;
    for (int t = 0; t < 3; t++) {
      long n = 1000000000;
      double a = now();
      __asm__ volatile("1: dec %0; jnz 1b" : "+r"(n));
      double b = now() - a;
      if (b < best) best = b;
    }
    ghz = 1.0 / best;
    printf("clock about %.2f GHz\n", ghz);
  }
  run("pairs-w8 6x2", pairs_w8_6x2, 6 * 2 * 8 * 2.0 * K);
  run("pairs-w16 6x2", pairs_w16_6x2, 6 * 2 * 8 * 2.0 * K);
  run("signed 6x2", signed_6x2, 6 * 2 * 8 * 2.0 * K);
  run("signed 4x3", signed_4x3, 4 * 3 * 8 * 2.0 * K);
  run("bytes 6x2", bytes_6x2, 6 * 2 * 8 * 2.0 * K);
  {
    const int reps = 2000;
    double best = best_seconds(recurrent, reps) / reps;
    printf("recurrent        %7.2f us a step, %.1f GB/s of weights, %.1f products per cycle\n", best * 1e6,
           sizeof R / best * 1e-9, (double)H * 4 * H / best / (ghz * 1e9));
  }
  return 0;
}
