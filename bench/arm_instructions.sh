#!/bin/sh
# Executed guest instructions per inference on the ARM targets, counted
# under qemu (cortex-a15 / cortex-a72) by tinyrt's TCG plugin: a repeatable
# cost figure where emulated wall time means nothing.
#   bench/arm_instructions.sh [MODEL...]
set -eu
cd "$(dirname "$0")/.."
MODELS=${*:-"resnet18 mobilenet_v2 squeezenet1_1 mobilenet_v3_small shufflenet_v2_x0_5 googlenet"}
MODEL_DIR=build/models/torchvision
/usr/bin/python3 tests/models/export_torchvision.py $MODEL_DIR $MODELS >/dev/null
echo "| model | armv7-neon instructions | aarch64-neon instructions | code bytes (a64) |"
echo "|---|---|---|---|"
for m in $MODELS; do
  a=$(build/tinyrt-perf $MODEL_DIR/$m/model.onnx --target armv7-neon --json)
  b=$(build/tinyrt-perf $MODEL_DIR/$m/model.onnx --target aarch64-neon --json)
  ai=$(echo "$a" | sed 's/.*"guest_instructions":\([0-9]*\).*/\1/')
  bi=$(echo "$b" | sed 's/.*"guest_instructions":\([0-9]*\).*/\1/')
  cb=$(echo "$b" | sed 's/.*"code_bytes":\([0-9]*\).*/\1/')
  echo "| $m | $ai | $bi | $cb |"
done
