/* cpu_linux.c — CPU features as the OS exposes them: cpuid plus the
 * XSAVE-enabled register state on x86-64, the kernel's HWCAP on ARM (under
 * qemu-user /proc/cpuinfo describes the host, HWCAP the emulated CPU). */
#include "tinyrt_port.h"

#if defined(__x86_64__)
#include "cpu_x86.h"

uint32_t tinyrt_port_cpu_features(void) { return tinyrt_x86_cpu_features(); }

#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_FPHP
#define HWCAP_FPHP (1 << 9)
#endif
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1 << 10)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif

uint32_t tinyrt_port_cpu_features(void) {
  unsigned long hw = getauxval(AT_HWCAP);
  uint32_t f = 0;
  if (hw & HWCAP_ASIMD) f |= TINYRT_ISA_A64_ASIMD;
  if (hw & HWCAP_ASIMDDP) f |= TINYRT_ISA_A64_DOTPROD;
  if ((hw & HWCAP_FPHP) && (hw & HWCAP_ASIMDHP)) f |= TINYRT_ISA_A64_FP16;
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
