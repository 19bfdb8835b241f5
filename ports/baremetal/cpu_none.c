/* cpu_none.c — bare metal has no OS to ask. On x86 the cpuid instruction
 * and XCR0 answer (ports/cpu_x86.h: the vector state the firmware enabled);
 * elsewhere report the features this runtime was itself compiled for (the
 * integrator's -mcpu/-mfpu flags). */
#include "tinyrt_port.h"

#if defined(__x86_64__)
#include "cpu_x86.h"

uint32_t tinyrt_port_cpu_features(void) { return tinyrt_x86_cpu_features(); }

#else
uint32_t tinyrt_port_cpu_features(void) {
  uint32_t f = 0;
#if defined(__ARM_NEON) && defined(__aarch64__)
  f |= TINYRT_ISA_A64_ASIMD;
#if defined(__ARM_FEATURE_DOTPROD)
  f |= TINYRT_ISA_A64_DOTPROD;
#endif
#if defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
  f |= TINYRT_ISA_A64_FP16;
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
