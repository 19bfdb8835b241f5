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

uint32_t tinyrt_port_cpu_features(void) {
  unsigned a, b, c, d;
  uint32_t f = 0;
  uint64_t xcr0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  if (!(c & bit_OSXSAVE) || !(c & bit_AVX)) return 0;
  xcr0 = xgetbv0();
  if ((xcr0 & 0x6) != 0x6) return 0; /* OS does not save ymm */
  if (c & bit_FMA) f |= TINYRT_ISA_X86_FMA;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  if (b & bit_AVX2) f |= TINYRT_ISA_X86_AVX2;
  if ((xcr0 & 0xe6) == 0xe6) { /* opmask and zmm state enabled */
    if (b & bit_AVX512F) f |= TINYRT_ISA_X86_AVX512F;
    if (b & bit_AVX512BW) f |= TINYRT_ISA_X86_AVX512BW;
    if (b & bit_AVX512VL) f |= TINYRT_ISA_X86_AVX512VL;
    if (b & bit_AVX512DQ) f |= TINYRT_ISA_X86_AVX512DQ;
  }
  return f;
}

#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif

uint32_t tinyrt_port_cpu_features(void) {
  return (getauxval(AT_HWCAP) & HWCAP_ASIMD) ? TINYRT_ISA_A64_ASIMD : 0;
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
