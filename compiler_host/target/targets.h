// targets.h — the targets tinyrt compiles for, as data: one file per
// family (x86_64.cpp, armv7.cpp, aarch64.cpp) builds its Target values,
// with the tile tables and the command that measured each; target.cpp
// resolves a --target name through the table of names.
#pragma once

#include <string>

#include "target/target.h"

namespace tinyrt {

// How an x86-64 target forms int8 dot products: without vpdpbusd
// (vpmaddubsw / vpmaddwd), or with it in its EVEX (AVX-512 VNNI) or VEX
// (AVX-VNNI) encoding.
enum class X86Vnni { None, Evex, Vex };
Target x86_64_target(const std::string &name, bool avx512, X86Vnni vnni);
Target armv7_target(const std::string &name);
Target aarch64_target(const std::string &name);

}  // namespace tinyrt
