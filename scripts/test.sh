#!/bin/sh
# Sets up a fresh Debian 12 machine and runs the whole test suite: runtime,
# compiler, math accuracy, ONNX backend tests and torchvision models on
# x86-64, armv7 (qemu-arm) and aarch64 (qemu-aarch64), and the examples;
# then the sanitizer build (tests/fuzz/, docs/SECURITY.md): ONNX's backend
# suites, the hostile corpus, the kernel suites and models with the
# compiler built with ASan+UBSan, and each libFuzzer target for 10-40 s.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
(cd build && ctest -j2 --output-on-failure --timeout 2400)
cmake -S . -B build-fuzz -G Ninja -DTINYRT_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
cmake --build build-fuzz
(cd build-fuzz && ctest -j2 --output-on-failure --timeout 1800)
