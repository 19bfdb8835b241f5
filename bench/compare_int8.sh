#!/bin/sh
# Int8 CNNs against ONNX Runtime and against tinyrt's own float code, same
# run, alternating, best median of ROUNDS (issue 27's table):
#   bench/compare_int8.sh [THREADS] [RUNS] [MODEL...]
# For each model (names as bench/compare_ort.sh; resnet18, squeezenet1_1,
# mobilenet_v3_small and efficientnet_b0 by default) two QDQ models are
# written next to it by bench/make_qdq.py (calibrated in ORT): qdq.onnx,
# weights int8 per channel in [-127, 127], and qdq7.onnx, the same with
# --reduce-range (7-bit weights, which x86 without VNNI multiplies as bytes,
# docs/QUANTIZATION.md). Columns: tinyrt and ORT on each, tinyrt's float
# model with --winograd off and with defaults, and the ratios the issue
# names. Environment as bench/compare_ort.sh.
set -eu
cd "$(dirname "$0")/.."
THREADS=${1:-1}
RUNS=${2:-20}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
[ $# -gt 0 ] || set -- resnet18 squeezenet1_1 mobilenet_v3_small efficientnet_b0
. bench/ort.sh
. bench/models.sh
perf() { masked "$TINYRT/tinyrt-perf" "$@" --threads "$THREADS" --runs "$RUNS" --json; }
echo "| model | tinyrt int8 ms | ORT int8 ms | tinyrt / ORT | tinyrt int8 7-bit ms | ORT int8 7-bit ms | tinyrt / ORT | tinyrt fp32 --winograd off ms | int8 / fp32 off | int8 7-bit / fp32 off | tinyrt fp32 ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for m in $MODELS; do
  p=$(model_path "$m")
  d=$(dirname "$p")
  [ -f "$d/qdq.onnx" ] || /usr/bin/python3 bench/make_qdq.py "$p" "$d/qdq.onnx" >/dev/null
  [ -f "$d/qdq7.onnx" ] || /usr/bin/python3 bench/make_qdq.py "$p" "$d/qdq7.onnx" --reduce-range >/dev/null
  ti=""; oi=""; t7=""; o7=""; tf=""; td=""
  for r in $(seq "$ROUNDS"); do
    ti=$(best "$ti" "$(field "$(perf "$d/qdq.onnx")" median_ms)")
    oi=$(best "$oi" "$(field "$(ort "$d/qdq.onnx")" median_ms)")
    t7=$(best "$t7" "$(field "$(perf "$d/qdq7.onnx")" median_ms)")
    o7=$(best "$o7" "$(field "$(ort "$d/qdq7.onnx")" median_ms)")
    tf=$(best "$tf" "$(field "$(perf "$p" --winograd off)" median_ms)")
    td=$(best "$td" "$(field "$(perf "$p")" median_ms)")
  done
  ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
  echo "| $m | $ti | $oi | $(ratio "$ti" "$oi") | $t7 | $o7 | $(ratio "$t7" "$o7") | $tf | $(ratio "$ti" "$tf") | $(ratio "$t7" "$tf") | $td |"
done
echo
echo "threads=$THREADS runs=$RUNS rounds=$ROUNDS avx2_only=${AVX2_ONLY:-0} target=host tinyrt=$TINYRT CPU:$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2) (family $(grep -m1 "cpu family" /proc/cpuinfo | cut -d: -f2 | tr -d ' ')) ORT $(sed -n "s/.*\"version\": \"\(.*\)\".*/\1/p" bench/node_modules/onnxruntime-node/package.json)"
