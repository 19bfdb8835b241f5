#include "target/target.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>

#include "ir/error.h"
#include "tinyrt_artifact.h"

namespace tinyrt {

GemmTile Target::gemm_tile(int64_t oc) const {
  // Measured (bench/RESULTS.md): AVX-512 12x32 unrolled by 4; AArch64 6x16
  // and ARMv7 4x8, unrolled by 2 (larger tiles or unrolls spill on NEON:
  // squeezenet1_1 executes 15% fewer instructions on aarch64 and 40% fewer
  // on armv7 than with 8x12 / 6x8 unrolled by 4).
  int lanes = f32_lanes();
  bool wide = lanes >= 8;
  int max_nv = vector_regs >= 32 ? (wide ? 2 : 4) : 2;
  int nv = (int)std::min<int64_t>(max_nv, (oc + lanes - 1) / lanes);
  nv = std::max(nv, 1);
  // Accumulators + one weight vector per column + a broadcast register.
  int mr = (vector_regs - 1 - nv) / nv;
  int cap = vector_regs >= 32 ? (wide ? 12 : 6) : (wide ? 6 : 4);
  mr = std::max(1, std::min(mr, cap));
  int unroll = wide ? 4 : 2;
  // TINYRT_GEMM_TILE=mr,nv,unroll overrides (tile experiments).
  if (const char *e = getenv("TINYRT_GEMM_TILE")) sscanf(e, "%d,%d,%d", &mr, &nv, &unroll);
  return {mr, nv, unroll};
}

int Target::depthwise_tile(int64_t taps) const {
  // One accumulator per pixel, the tap weights held in registers when they
  // fit, one register for the input vector.
  int64_t free_regs = vector_regs - 1 - (taps < vector_regs / 2 ? taps : 0);
  return (int)std::max<int64_t>(2, std::min<int64_t>(8, free_regs));
}

static Target x86(const std::string &name, bool avx512) {
  Target t;
  t.name = name;
  t.triple = "x86_64-pc-linux-gnu";
  t.arch = TINYRT_ARCH_X86_64;
  t.isa = TINYRT_ISA_X86_AVX2 | TINYRT_ISA_X86_FMA | TINYRT_ISA_X86_F16C | TINYRT_ISA_X86_BMI1 | TINYRT_ISA_X86_BMI2 | TINYRT_ISA_X86_POPCNT;
  t.cpu = avx512 ? "skylake-avx512" : "haswell";
  t.features = "+avx2,+fma,+f16c,+bmi,+bmi2,+popcnt";
  if (avx512) {
    t.features += ",+avx512f,+avx512bw,+avx512vl,+avx512dq,-prefer-256-bit";
    t.isa |= TINYRT_ISA_X86_AVX512F | TINYRT_ISA_X86_AVX512BW | TINYRT_ISA_X86_AVX512VL |
             TINYRT_ISA_X86_AVX512DQ;
  }
  t.vector_bytes = avx512 ? 64 : 32;
  t.vector_regs = avx512 ? 32 : 16;
  t.masked_tail = true;
  t.cc = "gcc";
  return t;
}

Target resolve_target(const std::string &name) {
  if (name == "host") {
    llvm::StringMap<bool> f;
    llvm::sys::getHostCPUFeatures(f);
    bool avx512 = f.lookup("avx512f") && f.lookup("avx512bw") && f.lookup("avx512vl") &&
                  f.lookup("avx512dq");
#if defined(__x86_64__)
    return x86(avx512 ? "x86-64-avx512" : "x86-64-avx2", avx512);
#else
    fail_usage("--target host is only implemented on x86-64 hosts; name the target");
#endif
  }
  if (name == "x86-64-avx2") return x86(name, false);
  if (name == "x86-64-avx512") return x86(name, true);
  if (name == "armv7-neon") {
    Target t;
    t.name = name;
    t.triple = "armv7a-unknown-linux-gnueabihf";
    t.cpu = "cortex-a7";
    t.features = "+neon,+vfp4,+fp16,+thumb2";
    t.arch = TINYRT_ARCH_ARMV7;
    t.isa = TINYRT_ISA_ARM_NEON | TINYRT_ISA_ARM_VFPV4;
    t.vector_bytes = 16;
    t.vector_regs = 16;
    t.hard_float = true;
    t.ptr_bytes = 4;
    t.cc = "arm-linux-gnueabihf-gcc";
    t.emulator = {"qemu-arm", "-L", "/usr/arm-linux-gnueabihf", "-cpu", "cortex-a15"};
    return t;
  }
  if (name == "aarch64-neon") {
    Target t;
    t.name = name;
    t.triple = "aarch64-unknown-linux-gnu";
    t.cpu = "cortex-a72";
    t.features = "+neon,+fp-armv8";
    t.arch = TINYRT_ARCH_AARCH64;
    t.isa = TINYRT_ISA_A64_ASIMD;
    t.vector_bytes = 16;
    t.vector_regs = 32;
    t.cc = "aarch64-linux-gnu-gcc";
    t.emulator = {"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-cpu", "cortex-a72"};
    return t;
  }
  std::string all;
  for (auto &n : target_names()) all += " " + n;
  fail_usage("unknown target '" + name + "'; known:" + all);
}

std::vector<std::string> target_names() {
  return {"host", "x86-64-avx2", "x86-64-avx512", "armv7-neon", "aarch64-neon"};
}

}  // namespace tinyrt
