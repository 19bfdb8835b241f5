#!/bin/sh
# Sets up a fresh Debian 12 machine, builds tinyrt, and runs the main job:
# the demo classifier (examples/models) compiled by tinyrt-compile for
# x86-64, armv7 and aarch64 and run by the Raspberry Pi example app —
# natively and under qemu-arm / qemu-aarch64 emulating Pi CPUs — printing
# its top classes, its agreement with PyTorch and its latency.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
B=build
echo
echo "== tinyrt-compile (host): $(grep -c '"family":' $B/examples/models/out/demo.json) fused kernels for $(grep -c '"node":' $B/examples/models/out/demo.json) ONNX nodes, arena $(sed -n 's/.*"arena_bytes": \([0-9]*\).*/\1/p' $B/examples/models/out/demo.json) bytes"
echo
echo "== x86-64, native"
$B/examples/classify --threads 2 --runs 50 --check
echo
echo "== armv7 (Raspberry Pi 32-bit) under qemu-arm -cpu cortex-a15 (emulated: latency is not the Pi's)"
qemu-arm -L /usr/arm-linux-gnueabihf -cpu cortex-a15 $B/cross/armv7/examples/classify --threads 2 --runs 5 --check
echo
echo "== aarch64 (Raspberry Pi 64-bit) under qemu-aarch64 -cpu cortex-a72 (emulated)"
qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu cortex-a72 $B/cross/aarch64/examples/classify --threads 2 --runs 5 --check
echo
echo "== firmware example (no heap, bare-metal port) under qemu-arm"
qemu-arm -L /usr/arm-linux-gnueabihf -cpu cortex-a15 $B/cross/armv7/examples/firmware
