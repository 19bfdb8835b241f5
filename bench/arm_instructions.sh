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
#   ORT=1         also count ONNX Runtime's AArch64 instructions per
#                 inference (bench/ort_count/count.sh): two more columns
#                 and the geomean of aarch64 / ORT
set -eu
cd "$(dirname "$0")/.."
. bench/models.sh
ORT=${ORT:-0}
if [ "$ORT" = 1 ]; then
  echo "| model | armv7-neon instructions | aarch64-neon instructions | armv7 / aarch64 | code bytes (a64) | ORT aarch64 instructions | aarch64 / ORT |"
  echo "|---|---|---|---|---|---|---|"
else
  echo "| model | armv7-neon instructions | aarch64-neon instructions | armv7 / aarch64 | code bytes (a64) |"
  echo "|---|---|---|---|---|"
fi
for m in $MODELS; do
  p=$(model_path "$m")
  a=$("$TINYRT/tinyrt-perf" "$p" $FLAGS --target armv7-neon --json)
  b=$("$TINYRT/tinyrt-perf" "$p" $FLAGS --target aarch64-neon --json)
  ai=$(echo "$a" | sed 's/.*"guest_instructions":\([0-9]*\).*/\1/')
  bi=$(echo "$b" | sed 's/.*"guest_instructions":\([0-9]*\).*/\1/')
  cb=$(echo "$b" | sed 's/.*"code_bytes":\([0-9]*\).*/\1/')
  row="| $m | $ai | $bi | $(awk "BEGIN { printf \"%.2f\", $ai / $bi }") | $cb |"
  if [ "$ORT" = 1 ]; then
    oi=$(BENCH_TINYRT="$TINYRT" bench/ort_count/count.sh "$p" | awk '{ print $2 }')
    row="$row $oi | $(awk "BEGIN { printf \"%.2f\", $bi / $oi }") |"
    geo_add "$bi" "$oi"
  fi
  echo "$row"
done
[ "$geo_count" = 0 ] || echo "| geomean aarch64 / ORT ($geo_count models) | | | | | | $(geo_mean %.2f) |"
echo
echo "tinyrt=$TINYRT flags=$FLAGS"
