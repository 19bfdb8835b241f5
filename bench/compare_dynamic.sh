#!/bin/sh
# Dynamic int8 (--quantize dynamic) against ONNX Runtime's dynamically
# quantized LSTM (com.microsoft.DynamicQuantizeLSTM, written by
# python_helpers/quantize/dynamic_lstm.py from the same float model) and against
# both float models, on the LSTM models of the edge zoo; same run,
# alternating, best median of ROUNDS; then executed guest instructions on
# the ARM targets, fp32 and dynamic int8.
#   bench/compare_dynamic.sh [THREADS] [RUNS] [MODEL...]
# MODEL: lstm256 (2 layers, hidden 256, T=100: issue 7's benchmark size),
# lstm2 and bilstm2 by default. Environment as bench/compare_ort.sh, and
# WEIGHT_BITS=7: 7-bit weights on both sides (tinyrt --weight-bits 7, the
# ORT model written with --reduce-range), as for x86 without VNNI; ARM=0:
# the x86 table only.
set -eu
cd "$(dirname "$0")/.."
THREADS=${1:-1}
RUNS=${2:-100}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
[ $# -gt 0 ] || set -- lstm256 lstm2 bilstm2
. bench/ort.sh
. bench/models.sh
WB=""; RR=""
if [ "${WEIGHT_BITS:-8}" = 7 ]; then WB="--weight-bits 7"; RR="--reduce-range"; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| model | tinyrt int8 ms | ORT DynamicQuantizeLSTM ms | tinyrt int8 / ORT int8 | tinyrt fp32 ms | ORT fp32 ms | tinyrt fp32 / int8 | weights fp32 -> int8 |"
echo "|---|---|---|---|---|---|---|---|"
for m in $MODELS; do
  p=$(model_path "$m")
  /usr/bin/python3 python_helpers/quantize/dynamic_lstm.py "$p" "$tmp/$m.onnx" $RR >/dev/null
  ti=""; oi=""; tf=""; of=""
  for r in $(seq "$ROUNDS"); do
    a=$(masked "$TINYRT/tinyrt-perf" "$p" --quantize dynamic $WB --threads "$THREADS" --runs "$RUNS" --json)
    ti=$(best "$ti" "$(field "$a" median_ms)"); wi=$(field "$a" weights_bytes)
    oi=$(best "$oi" "$(field "$(ort "$tmp/$m.onnx")" median_ms)")
    b=$(masked "$TINYRT/tinyrt-perf" "$p" --threads "$THREADS" --runs "$RUNS" --json)
    tf=$(best "$tf" "$(field "$b" median_ms)"); wf=$(field "$b" weights_bytes)
    of=$(best "$of" "$(field "$(ort "$p")" median_ms)")
  done
  echo "| $m | $ti | $oi | $(awk "BEGIN { printf \"%.2f\", $ti / $oi }") | $tf | $of | $(awk "BEGIN { printf \"%.1f\", $tf / $ti }") | $wf -> $wi |"
done
# ARM=0: the x86 table only.
if [ "${ARM:-1}" = 1 ]; then
  echo
  echo "| model | target | fp32 instructions | int8 instructions | fp32 / int8 |"
  echo "|---|---|---|---|---|"
  for m in $MODELS; do
    p=$(model_path "$m")
    for t in aarch64-neon aarch64-neon-dot armv7-neon; do
      f=$(field "$("$TINYRT/tinyrt-perf" "$p" --target "$t" --json)" guest_instructions)
      i=$(field "$("$TINYRT/tinyrt-perf" "$p" --target "$t" --quantize dynamic $WB --json)" guest_instructions)
      echo "| $m | $t | $f | $i | $(awk "BEGIN { printf \"%.2f\", $f / $i }") |"
    done
  done
fi
echo
echo "threads=$THREADS runs=$RUNS rounds=$ROUNDS weight_bits=${WEIGHT_BITS:-8} avx2_only=${AVX2_ONLY:-0} tinyrt=$TINYRT CPU:$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2)"
