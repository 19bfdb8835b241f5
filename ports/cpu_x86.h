/* cpu_x86.h — the x86-64 ISA bits this CPU can run, from cpuid and the
 * register state the OS (or the firmware) has enabled in XCR0: AVX, FMA and
 * AVX2 code need the ymm state saved, AVX-512 also the opmask and zmm
 * state; a CPU that has the instructions but runs without that state
 * enabled faults on the first one. Shared by the ports (ports/linux,
 * ports/baremetal). */
#ifndef TINYRT_CPU_X86_H
#define TINYRT_CPU_X86_H

#include <cpuid.h>
#include <stdint.h>

#include "tinyrt_port.h"

#ifndef bit_AVX512VNNI
#define bit_AVX512VNNI (1u << 11) /* cpuid 7.0 ecx */
#endif
#define TINYRT_BIT_AVXVNNI (1u << 4) /* cpuid 7.1 eax */

static uint64_t tinyrt_x86_xgetbv0(void) {
  uint32_t lo, hi;
  __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static uint32_t tinyrt_x86_cpu_features(void) {
  unsigned a, b, c, d, c1;
  uint32_t f = 0;
  uint64_t xcr0 = 0;
  if (!__get_cpuid(1, &a, &b, &c1, &d)) return 0;
  if (c1 & bit_POPCNT) f |= TINYRT_ISA_X86_POPCNT;
  /* VEX/EVEX vector code needs the ymm (and zmm) state enabled. */
  if ((c1 & bit_OSXSAVE) && (c1 & bit_AVX)) xcr0 = tinyrt_x86_xgetbv0();
  if ((xcr0 & 0x6) == 0x6) {
    if (c1 & bit_FMA) f |= TINYRT_ISA_X86_FMA;
    if (c1 & bit_F16C) f |= TINYRT_ISA_X86_F16C;
  }
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  { /* AVX-VNNI: leaf 7's subleaf 1 (a: the last subleaf) */
    unsigned a1 = 0, b1, c7, d1;
    if (a >= 1 && (xcr0 & 0x6) == 0x6 && __get_cpuid_count(7, 1, &a1, &b1, &c7, &d1) && (a1 & TINYRT_BIT_AVXVNNI))
      f |= TINYRT_ISA_X86_AVXVNNI;
  }
  if (b & bit_BMI) f |= TINYRT_ISA_X86_BMI1; /* BMI: VEX-encoded, general registers */
  if (b & bit_BMI2) f |= TINYRT_ISA_X86_BMI2;
  if ((xcr0 & 0x6) == 0x6 && (b & bit_AVX2)) f |= TINYRT_ISA_X86_AVX2;
  if ((xcr0 & 0xe6) == 0xe6) { /* opmask and zmm state enabled */
    if (b & bit_AVX512F) f |= TINYRT_ISA_X86_AVX512F;
    if (b & bit_AVX512BW) f |= TINYRT_ISA_X86_AVX512BW;
    if (b & bit_AVX512VL) f |= TINYRT_ISA_X86_AVX512VL;
    if (b & bit_AVX512DQ) f |= TINYRT_ISA_X86_AVX512DQ;
    if (c & bit_AVX512VNNI) f |= TINYRT_ISA_X86_AVX512VNNI;
  }
  return f;
}

#endif
