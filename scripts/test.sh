#!/bin/sh
# Sets up a fresh Debian 12 machine and runs the whole test suite: runtime,
# compiler, math accuracy, ONNX backend tests and torchvision models on
# x86-64, armv7 (qemu-arm) and aarch64 (qemu-aarch64), and the examples.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
cd build
ctest -j2 --output-on-failure --timeout 2400
