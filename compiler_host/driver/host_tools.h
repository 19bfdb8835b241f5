// host_tools.h — the programs on this machine that link a target's code into
// a shared object and run it (natively, or under qemu-user for ARM): the
// tools' business, not the code generator's, so they are not in Target.
#pragma once

#include <string>
#include <vector>

#include "target/target.h"

namespace tinyrt {

struct HostTools {
  std::string cc;                     // C compiler driver
  std::vector<std::string> emulator;  // empty when native
};
HostTools host_tools(const Target &t);

}  // namespace tinyrt
