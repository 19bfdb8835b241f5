/* cpu_none.c — bare metal has no OS to ask. On x86 the cpuid instruction
 * answers (the firmware is assumed to have enabled the vector state it
 * uses); elsewhere report the features this runtime was itself compiled
 * for (the integrator's -mcpu/-mfpu flags). */
#include "tinyrt_port.h"

#if defined(__x86_64__)
#include <cpuid.h>

#ifndef bit_AVX512VNNI
#define bit_AVX512VNNI (1u << 11) /* cpuid 7.0 ecx */
#endif

uint32_t tinyrt_port_cpu_features(void) {
  unsigned a, b, c, d;
  uint32_t f = 0;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    if (c & bit_FMA) f |= TINYRT_ISA_X86_FMA;
    if (c & bit_F16C) f |= TINYRT_ISA_X86_F16C;
    if (c & bit_POPCNT) f |= TINYRT_ISA_X86_POPCNT;
  }
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  if (b & bit_BMI) f |= TINYRT_ISA_X86_BMI1;
  if (b & bit_BMI2) f |= TINYRT_ISA_X86_BMI2;
  if (b & bit_AVX2) f |= TINYRT_ISA_X86_AVX2;
  if (b & bit_AVX512F) f |= TINYRT_ISA_X86_AVX512F;
  if (b & bit_AVX512BW) f |= TINYRT_ISA_X86_AVX512BW;
  if (b & bit_AVX512VL) f |= TINYRT_ISA_X86_AVX512VL;
  if (b & bit_AVX512DQ) f |= TINYRT_ISA_X86_AVX512DQ;
  if (c & bit_AVX512VNNI) f |= TINYRT_ISA_X86_AVX512VNNI;
  return f;
}

#else
uint32_t tinyrt_port_cpu_features(void) {
  uint32_t f = 0;
#if defined(__ARM_NEON) && defined(__aarch64__)
  f |= TINYRT_ISA_A64_ASIMD;
#if defined(__ARM_FEATURE_DOTPROD)
  f |= TINYRT_ISA_A64_DOTPROD;
#endif
#elif defined(__ARM_NEON)
  f |= TINYRT_ISA_ARM_NEON;
#endif
#if defined(__arm__) && defined(__ARM_FEATURE_FMA)
  f |= TINYRT_ISA_ARM_VFPV4;
#endif
#if defined(__AVX2__)
  f |= TINYRT_ISA_X86_AVX2;
#endif
#if defined(__FMA__)
  f |= TINYRT_ISA_X86_FMA;
#endif
#if defined(__AVX512F__)
  f |= TINYRT_ISA_X86_AVX512F;
#endif
#if defined(__AVX512BW__)
  f |= TINYRT_ISA_X86_AVX512BW;
#endif
#if defined(__AVX512VL__)
  f |= TINYRT_ISA_X86_AVX512VL;
#endif
#if defined(__AVX512DQ__)
  f |= TINYRT_ISA_X86_AVX512DQ;
#endif
  return f;
}
#endif
