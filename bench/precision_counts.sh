#!/bin/sh
# --precision fp16 on the Raspberry Pi 5's core (issue 28): executed guest
# instructions per inference under qemu-aarch64 -cpu cortex-a76 (target
# aarch64-neon-fp16), and the weights' and the arena's bytes, for float weights and
# products (fp32), half weights widened to float (--weights fp16) and half
# products (--precision fp16), each with the default plan and with
# --winograd off; the geomeans of fp16 / fp32.
#   bench/precision_counts.sh [MODEL...]   (models: bench/models.sh)
set -eu
cd "$(dirname "$0")/.."
. bench/models.sh
T="--target aarch64-neon-fp16"
echo "| model | fp32 instructions | --weights fp16 | --precision fp16 | precision / fp32 | fp32 --winograd off | --precision fp16 --winograd off | off: precision / fp32 | weights bytes: fp32 / --precision fp16 | arena bytes: fp32 / --precision fp16 |"
echo "|---|---|---|---|---|---|---|---|---|---|"
count() { "$TINYRT/tinyrt-perf" "$p" $FLAGS $T --json "$@"; }
field() { echo "$1" | sed "s/.*\"$2\":\([0-9]*\).*/\1/"; }
l1=0; l2=0; n=0
for m in $MODELS; do
  p=$(model_path "$m")
  a=$(count); b=$(count --weights fp16); c=$(count --precision fp16)
  d=$(count --winograd off); e=$(count --precision fp16 --winograd off)
  ai=$(field "$a" guest_instructions); bi=$(field "$b" guest_instructions); ci=$(field "$c" guest_instructions)
  di=$(field "$d" guest_instructions); ei=$(field "$e" guest_instructions)
  r1=$(awk "BEGIN { printf \"%.3f\", $ci / $ai }"); r2=$(awk "BEGIN { printf \"%.3f\", $ei / $di }")
  l1=$(awk "BEGIN { print $l1 + log($r1) }"); l2=$(awk "BEGIN { print $l2 + log($r2) }"); n=$((n + 1))
  echo "| $m | $ai | $bi | $ci | $r1 | $di | $ei | $r2 | $(field "$a" weights_bytes) / $(field "$c" weights_bytes) | $(field "$a" arena_bytes) / $(field "$c" arena_bytes) |"
done
[ "$n" = 0 ] || echo "| geomean | | | | $(awk "BEGIN { printf \"%.3f\", exp($l1 / $n) }") | | | $(awk "BEGIN { printf \"%.3f\", exp($l2 / $n) }") | | |"
