/* cpu_linux.c — CPU features as the OS exposes them: cpuid plus the
 * XSAVE-enabled register state on x86-64, the kernel's HWCAP on ARM (under
 * qemu-user /proc/cpuinfo describes the host, HWCAP the emulated CPU). */
#include "tinyrt_port.h"

#if defined(__x86_64__)
#include <cpuid.h>

static uint64_t xgetbv0(void) {
  uint32_t lo, hi;
  __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

#ifndef bit_AVX512VNNI
#define bit_AVX512VNNI (1u << 11) /* cpuid 7.0 ecx */
#endif

uint32_t tinyrt_port_cpu_features(void) {
  unsigned a, b, c, d, c1;
  uint32_t f = 0;
  uint64_t xcr0 = 0;
  if (!__get_cpuid(1, &a, &b, &c1, &d)) return 0;
  if (c1 & bit_POPCNT) f |= TINYRT_ISA_X86_POPCNT;
  /* VEX/EVEX vector code needs the OS to save the ymm (and zmm) state. */
  if ((c1 & bit_OSXSAVE) && (c1 & bit_AVX)) xcr0 = xgetbv0();
  if ((xcr0 & 0x6) == 0x6) {
    if (c1 & bit_FMA) f |= TINYRT_ISA_X86_FMA;
    if (c1 & bit_F16C) f |= TINYRT_ISA_X86_F16C;
  }
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
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

#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif

uint32_t tinyrt_port_cpu_features(void) {
  unsigned long hw = getauxval(AT_HWCAP);
  uint32_t f = 0;
  if (hw & HWCAP_ASIMD) f |= TINYRT_ISA_A64_ASIMD;
  if (hw & HWCAP_ASIMDDP) f |= TINYRT_ISA_A64_DOTPROD;
  return f;
}

#elif defined(__arm__)
#include <sys/auxv.h>
#define ARM_HWCAP_NEON (1 << 12)
#define ARM_HWCAP_VFPV4 (1 << 16)

uint32_t tinyrt_port_cpu_features(void) {
  unsigned long hw = getauxval(AT_HWCAP);
  uint32_t f = 0;
  if (hw & ARM_HWCAP_NEON) f |= TINYRT_ISA_ARM_NEON;
  if (hw & ARM_HWCAP_VFPV4) f |= TINYRT_ISA_ARM_VFPV4;
  return f;
}

#else
uint32_t tinyrt_port_cpu_features(void) { return 0; }
#endif
