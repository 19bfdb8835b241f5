#!/bin/sh
# Sets up a fresh Debian 12 machine, builds tinyrt, and runs the main job:
# the demo classifier, a small CNN trained at build time on scikit-learn's
# handwritten digits (examples/models/make_demo_model.py), compiled by
# tinyrt-compile for x86-64, armv7 and aarch64 and run by the Raspberry Pi
# example app — natively and under qemu-arm / qemu-aarch64 emulating Pi
# CPUs — on the held-back test images: accuracy, a few predictions, latency
# per image and the arena, weights and code sizes.
#
#   BUILD_DIR=dir ./scripts/demo.sh    builds into dir instead of build/
set -eu
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}
./scripts/setup.sh
BUILD_DIR=$B ./scripts/build.sh
M=examples/models
icount() { # the repeatable cost figure under emulation
  echo "  tinyrt-perf: $("$B/tinyrt-perf" "$B/$M/demo/model.onnx" --target "$1" | sed -n 's/^ *guest instructions per inference: //p')" \
       "instructions per image, counted under qemu (repeatable; emulated time is not)"
}
echo
echo "== the model ($M/make_demo_model.py, trained at build time)"
echo "   $(cat "$B/$M/training.txt")"
echo "   one model.onnx for all three targets (md5 $(md5sum < "$B/$M/demo/model.onnx" | cut -c1-12));" \
     "the cross builds compile the host build's;" \
     "tinyrt-compile: $(grep -c '"family":' "$B/$M/out/demo.json") fused kernels for $(grep -c '"node":' "$B/$M/out/demo.json") ONNX nodes"
echo
echo "== x86-64, native"
"$B/examples/classify" --test --pictures --check
echo
echo "== armv7 (Raspberry Pi 32-bit) under qemu-arm -cpu cortex-a15 (emulated: latency is not the Pi's)"
qemu-arm -L /usr/arm-linux-gnueabihf -cpu cortex-a15 "$B/cross/armv7/examples/classify" --test --check
icount armv7-neon
echo
echo "== aarch64 (Raspberry Pi 64-bit) under qemu-aarch64 -cpu cortex-a72 (emulated)"
qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu cortex-a72 "$B/cross/aarch64/examples/classify" --test --check
icount aarch64-neon
echo
echo "== firmware example (no heap, bare-metal port) under qemu-arm"
qemu-arm -L /usr/arm-linux-gnueabihf -cpu cortex-a15 "$B/cross/armv7/examples/firmware"
echo
echo "== detection with NMS in the graph (examples/detection: a YOLO-style detector trained at build time)"
echo "   $(cat "$B/$M/detector_training.txt")"
qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu cortex-a72 "$B/cross/aarch64/examples/detect" --check
