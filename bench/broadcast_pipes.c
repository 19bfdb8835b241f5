/* broadcast_pipes.c — which pipes an AVX-512 input broadcast and a half
 * weight conversion share (codegen/integer_broadcasts.h). Throughput of
 * blocks of independent instructions, and one 5x2 GEMM tile step (two
 * weight vectors, five broadcast inputs, ten FMAs; four steps a block) with
 * float or half weights and each broadcast form. Prints TSC ticks per
 * block (the core clock may differ: compare rows, not units).
 *   clang-14 -O2 bench/broadcast_pipes.c -o /tmp/broadcast_pipes && /tmp/broadcast_pipes
 * Needs AVX-512F and F16C. */
#include <stdint.h>
#include <stdio.h>
#include <x86intrin.h>

static uint16_t wh[8192] __attribute__((aligned(64)));
static float xx[8192] __attribute__((aligned(64)));

#define REP 1000
#define T(name, body)                                                                     \
  {                                                                                       \
    uint64_t best = ~0ull;                                                                \
    for (int t = 0; t < 200; t++) {                                                       \
      uint64_t t0 = __rdtsc();                                                            \
      for (int r = 0; r < REP; r++) __asm__ volatile(body ::"r"(wh), "r"(xx) : "memory"); \
      uint64_t t1 = __rdtsc();                                                            \
      if (t1 - t0 < best) best = t1 - t0;                                                 \
    }                                                                                     \
    printf("%-36s %6.2f\n", name, (double)best / REP);                                    \
  }

#define BC(op, o, r) op " " #o "(%1), %%zmm" #r "\n"
#define B8(op) \
  BC(op, 0, 0) BC(op, 4, 1) BC(op, 8, 2) BC(op, 12, 3) BC(op, 16, 4) BC(op, 20, 5) BC(op, 24, 6) BC(op, 28, 7)
#define CV(o, r) "vcvtph2ps " #o "(%0), %%zmm" #r "\n"
#define C8 CV(0, 10) CV(32, 11) CV(64, 12) CV(96, 13) CV(128, 14) CV(160, 15) CV(192, 16) CV(224, 17)
#define LD(o, r) "vmovups " #o "(%0), %%zmm" #r "\n"
#define L8 LD(0, 10) LD(64, 11) LD(128, 12) LD(192, 13) LD(256, 14) LD(320, 15) LD(384, 16) LD(448, 17)

/* One input channel of a 5x2 tile: weights into zmm13/14, then per pixel a
 * broadcast (op) and two FMAs. */
#define PIX(op, o, r, a, b)                                                                                  \
  op " " #o "(%1), %%zmm" #r "\n vfmadd231ps %%zmm13,%%zmm" #r ",%%zmm" #a "\n vfmadd231ps %%zmm14,%%zmm" #r \
     ",%%zmm" #b "\n"
#define STEP(op, w, o)                                                                                    \
  w PIX(op, o, 15, 0, 1) PIX(op, o + 256, 16, 2, 3) PIX(op, o + 512, 17, 4, 5) PIX(op, o + 768, 18, 6, 7) \
      PIX(op, o + 1024, 19, 8, 9)
#define WH(o) "vcvtph2ps " #o "(%0), %%zmm13\n vcvtph2ps " #o "+32(%0), %%zmm14\n"
#define WF(o) "vmovups " #o "(%0), %%zmm13\n vmovups " #o "+64(%0), %%zmm14\n"
#define TILE(op, W) STEP(op, W(0), 0) STEP(op, W(128), 4) STEP(op, W(256), 8) STEP(op, W(384), 12)

int main(void) {
  puts("TSC ticks per block of instructions");
  T("8 vbroadcastss zmm, m32", B8("vbroadcastss"))
  T("8 vpbroadcastd zmm, m32", B8("vpbroadcastd"))
  T("8 vcvtph2ps zmm, m256", C8)
  T("8 vmovups zmm", L8)
  T("8 vbroadcastss + 8 vcvtph2ps", B8("vbroadcastss") C8)
  T("8 vpbroadcastd + 8 vcvtph2ps", B8("vpbroadcastd") C8)
  T("8 vbroadcastss + 8 vmovups", B8("vbroadcastss") L8)
  T("5x2 tile, float weights, vbroadcastss", TILE("vbroadcastss", WF))
  T("5x2 tile, half weights, vbroadcastss", TILE("vbroadcastss", WH))
  T("5x2 tile, float weights, vpbroadcastd", TILE("vpbroadcastd", WF))
  T("5x2 tile, half weights, vpbroadcastd", TILE("vpbroadcastd", WH))
  return 0;
}
