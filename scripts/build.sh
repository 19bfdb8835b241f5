#!/bin/sh
# Configures and builds the host compiler, tools, runtime, tests and
# examples, plus the armv7 and aarch64 cross builds, into ./build.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
