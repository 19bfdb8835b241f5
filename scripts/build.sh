#!/bin/sh
# Configures and builds the host compiler, tools, runtime, tests and
# examples, plus the armv7 and aarch64 cross builds, into ./build
# (BUILD_DIR=dir: into dir).
set -eu
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$B"
