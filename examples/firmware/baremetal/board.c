/* board.c — memory setup of the bare-metal firmware, called by startup.S
 * before main (C code, but run with the MMU off: it must stay simple).
 *
 * With the MMU off an ARMv7-A core treats every data access as
 * Strongly-ordered: unaligned accesses fault (generated NEON code and the
 * C library make them) and the data cache is off. So: one flat level-1
 * page table of 1 MB sections (virtual = physical), flash and RAM as
 * Normal write-back memory, everything else as Device (execute-never),
 * then MMU, caches and branch prediction on, alignment checking off.
 *
 * Cortex-A7/A15 invalidate their caches and TLBs at reset; a core that
 * does not needs a data-cache invalidate by set/way before caches go on. */
#include <stdint.h>

void board_init(void);

/* From firmware.ld. */
extern char __flash_start[], __flash_end[], __ram_start[], __ram_end[];

#define SECTION 0x2u
#define AP_FULL (3u << 10)                             /* PL0/PL1 read-write */
#define NORMAL_WB ((1u << 12) | (1u << 3) | (1u << 2)) /* TEX=001 C=1 B=1 */
#define DEVICE_XN ((1u << 2) | (1u << 4))              /* shareable Device, XN */

static uint32_t page_table[4096] __attribute__((aligned(16384)));

static int inside(uintptr_t a, const char *lo, const char *hi) { return a >= (uintptr_t)lo && a < (uintptr_t)hi; }

void board_init(void) {
  uint32_t i, sctlr;
  for (i = 0; i < 4096; ++i) {
    uintptr_t base = (uintptr_t)i << 20;
    int normal = inside(base, __flash_start, __flash_end) || inside(base, __ram_start, __ram_end);
    page_table[i] = (uint32_t)base | SECTION | AP_FULL | (normal ? NORMAL_WB : DEVICE_XN);
  }
  __asm__ volatile("dsb" ::: "memory");
  __asm__ volatile("mcr p15, 0, %0, c3, c0, 0" : : "r"(1u)); /* DACR: domain 0 client */
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 2" : : "r"(0u)); /* TTBCR: TTBR0, short descriptors */
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 0" : : "r"((uint32_t)(uintptr_t)page_table)); /* TTBR0 */
  __asm__ volatile("mcr p15, 0, %0, c8, c7, 0" : : "r"(0u));                              /* TLBIALL */
  __asm__ volatile("mcr p15, 0, %0, c7, c5, 0" : : "r"(0u));                              /* ICIALLU */
  __asm__ volatile("mcr p15, 0, %0, c7, c5, 6" : : "r"(0u));                              /* BPIALL */
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  __asm__ volatile("mrc p15, 0, %0, c1, c0, 0" : "=r"(sctlr)); /* SCTLR */
  sctlr |= (1u << 0) | (1u << 2) | (1u << 11) | (1u << 12);    /* M, C, Z, I */
  sctlr &= ~((1u << 1) | (1u << 28) | (1u << 29));             /* A, TRE, AFE */
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n\tisb" : : "r"(sctlr) : "memory");
}
