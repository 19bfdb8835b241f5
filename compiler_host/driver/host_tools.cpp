#include "driver/host_tools.h"

#include "tinyrt_artifact.h"

namespace tinyrt {

HostTools host_tools(const Target &t) {
  switch (t.arch) {
    case TINYRT_ARCH_ARMV7:
      // qemu's Cortex-A15 is the ARMv7 core it models with NEON and VFPv4.
      return {"arm-linux-gnueabihf-gcc", {"qemu-arm", "-L", "/usr/arm-linux-gnueabihf", "-cpu", "cortex-a15"}};
    case TINYRT_ARCH_AARCH64:
      return {"aarch64-linux-gnu-gcc", {"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-cpu", t.cpu}};
    default: return {"gcc", {}};
  }
}

}  // namespace tinyrt
