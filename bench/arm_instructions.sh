#!/bin/sh
# Executed guest instructions per inference on the ARM targets, counted
# under qemu (cortex-a15 / cortex-a72) by tinyrt's TCG plugin: a repeatable
# cost figure where emulated wall time means nothing.
#   bench/arm_instructions.sh [MODEL...]
# MODEL: the six torchvision models and the edge zoo (tests/models/
# export_zoo.py) by default; any name of either export script. Missing
# models are exported into $BENCH_MODELS/{torchvision,zoo}.
# Environment:
#   BENCH_TINYRT  build tree whose tinyrt-perf is measured (default build),
#                 so that two trees can be compared on the same models
#   BENCH_MODELS  where the exported models live (default build/models)
#   BENCH_FLAGS   extra tinyrt-perf options, e.g. "--winograd off"
set -eu
cd "$(dirname "$0")/.."
. bench/models.sh
echo "| model | armv7-neon instructions | aarch64-neon instructions | armv7 / aarch64 | code bytes (a64) |"
echo "|---|---|---|---|---|"
for m in $MODELS; do
  p=$(model_path "$m")
  a=$("$TINYRT/tinyrt-perf" "$p" $FLAGS --target armv7-neon --json)
  b=$("$TINYRT/tinyrt-perf" "$p" $FLAGS --target aarch64-neon --json)
  ai=$(echo "$a" | sed 's/.*"guest_instructions":\([0-9]*\).*/\1/')
  bi=$(echo "$b" | sed 's/.*"guest_instructions":\([0-9]*\).*/\1/')
  cb=$(echo "$b" | sed 's/.*"code_bytes":\([0-9]*\).*/\1/')
  echo "| $m | $ai | $bi | $(awk "BEGIN { printf \"%.2f\", $ai / $bi }") | $cb |"
done
echo
echo "tinyrt=$TINYRT flags=$FLAGS"
