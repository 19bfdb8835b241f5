/* avx2_only.c — makes an AVX-512 x86-64 Linux machine look AVX2-only to
 * one process, so that ONNX Runtime (and tinyrt) choose the kernels they
 * would choose on an AVX2-only CPU: a benchmark tool for issue 27's
 * comparisons where no AVX2-only machine is at hand. Never linked into
 * tinyrt.
 *
 *   cc -shared -fPIC -O2 -o build/avx2_only.so bench/avx2_only.c
 *   LD_PRELOAD=build/avx2_only.so build/ort_count/ort_time MODEL 20 --time 1
 *
 * How: Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID 0; the CPU flag
 * `cpuid_fault`, Intel and recent AMD, also under KVM) makes every cpuid
 * instruction of the process raise SIGSEGV. The handler below runs the
 * real cpuid (faulting off for that one instruction), clears the AVX-512,
 * AVX-VNNI and AMX feature bits of leaf 7 and resumes after the
 * instruction. Software that picks kernels from cpuid (ONNX Runtime's
 * MLAS and cpuinfo, tinyrt's ports/cpu_x86.h) then sees AVX2, FMA and F16C
 * and no AVX-512. The setting is per thread and inherited by threads
 * created later, so it is made in a constructor that runs before ONNX
 * Runtime's (LD_PRELOAD: the preloaded object's constructors run first;
 * the handler counts the cpuid instructions it served and, with
 * AVX2_ONLY_VERBOSE=1, prints the count at exit so that a run can show
 * the masking took effect). The cores stay what they are — their caches,
 * their 256-bit ports, their clock — so the figures are those of AVX2 code
 * on this core, not of another CPU.
 *
 * AVX2_ONLY_AVXVNNI=1 reports AVX-VNNI (vpdpbusd in its VEX form, leaf 7
 * subleaf 1 eax bit 4) as present instead of clearing it: an AVX2 +
 * AVX-VNNI machine (Alder Lake-N) on a core that executes the VEX form but
 * whose hypervisor hides the flag (Sapphire and Emerald Rapids under some
 * KVM CPU models). The constructor first runs one VEX vpdpbusd and exits
 * with a message where the core lacks it (SIGILL). */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static volatile unsigned long served;
static int add_avxvnni;

static void set_cpuid(int enabled) { syscall(SYS_arch_prctl, ARCH_SET_CPUID, enabled); }

static void on_segv(int sig, siginfo_t *info, void *ctx) {
  ucontext_t *uc = ctx;
  greg_t *r = uc->uc_mcontext.gregs;
  const unsigned char *ip = (const unsigned char *)r[REG_RIP];
  (void)info;
  if (ip[0] != 0x0f || ip[1] != 0xa2) { /* not cpuid: a real fault */
    signal(sig, SIG_DFL);
    return; /* the instruction faults again, now fatally */
  }
  unsigned leaf = (unsigned)r[REG_RAX], sub = (unsigned)r[REG_RCX];
  unsigned a, b, c, d;
  set_cpuid(1);
  __cpuid_count(leaf, sub, a, b, c, d);
  set_cpuid(0);
  if (leaf == 7 && sub == 0) {
    /* ebx: AVX512F 16, DQ 17, IFMA 21, PF 26, ER 27, CD 28, BW 30, VL 31 */
    b &= ~((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31));
    /* ecx: VBMI 1, VBMI2 6, VNNI 11, BITALG 12, VPOPCNTDQ 14 */
    c &= ~((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14));
    /* edx: 4VNNIW 2, 4FMAPS 3, VP2INTERSECT 8, AMX-BF16 22, AVX512_FP16 23,
     * AMX-TILE 24, AMX-INT8 25 */
    d &= ~((1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25));
    /* eax: the last subleaf (where the hypervisor reports none, subleaf 1
     * must still be asked for) */
    if (add_avxvnni && a < 1) a = 1;
  } else if (leaf == 7 && sub == 1) {
    a &= ~((1u << 4) | (1u << 5)); /* AVX-VNNI 4, AVX512_BF16 5 */
    if (add_avxvnni) a |= 1u << 4;
  }
  r[REG_RAX] = a;
  r[REG_RBX] = b;
  r[REG_RCX] = c;
  r[REG_RDX] = d;
  r[REG_RIP] += 2;
  served++;
}

static void report(void) {
  if (getenv("AVX2_ONLY_VERBOSE")) fprintf(stderr, "avx2_only: %lu cpuid served\n", served);
}

static void on_sigill(int sig) {
  (void)sig;
  static const char msg[] = "avx2_only: AVX2_ONLY_AVXVNNI=1, but this core does not execute vpdpbusd's VEX form\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(2);
  _exit(2);
}

/* One VEX-encoded vpdpbusd ymm (c4 e2 75 50 c2: ymm0 += ymm1 . ymm2). */
static void probe_avxvnni(void) {
  signal(SIGILL, on_sigill);
  __asm__ volatile(
      "vpxor %%ymm0, %%ymm0, %%ymm0\n\t"
      "vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
      "vpxor %%ymm2, %%ymm2, %%ymm2\n\t"
      ".byte 0xc4, 0xe2, 0x75, 0x50, 0xc2\n\t"
      "vzeroupper" ::
          : "xmm0", "xmm1", "xmm2");
  signal(SIGILL, SIG_DFL);
}

__attribute__((constructor(101))) static void avx2_only_init(void) {
  struct sigaction sa;
  const char *v = getenv("AVX2_ONLY_AVXVNNI");
  add_avxvnni = v && strcmp(v, "1") == 0;
  if (add_avxvnni) probe_avxvnni();
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, NULL) != 0 || syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
    fprintf(stderr, "avx2_only: this machine has no CPUID faulting (arch_prctl ARCH_SET_CPUID)\n");
    exit(2);
  }
  atexit(report);
}
