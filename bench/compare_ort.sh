#!/bin/sh
# tinyrt against ONNX Runtime (onnxruntime-node's CPU provider) on the same
# machine in the same run: median latency per model, tinyrt/ORT ratio.
#   bench/compare_ort.sh [THREADS] [RUNS] [MODEL...]
# Needs a built tree (scripts/build.sh) and npm. ORT is a benchmark peer
# only; nothing in tinyrt depends on it.
set -eu
cd "$(dirname "$0")/.."
THREADS=${1:-1}
RUNS=${2:-30}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
MODELS=${*:-"resnet18 mobilenet_v2 squeezenet1_1 mobilenet_v3_small shufflenet_v2_x0_5 googlenet"}
MODEL_DIR=build/models/torchvision
if [ ! -d bench/node_modules/onnxruntime-node ]; then
  (cd bench && npm install --no-save --ignore-scripts onnxruntime-node >/dev/null 2>&1)
fi
/usr/bin/python3 tests/models/export_torchvision.py $MODEL_DIR $MODELS >/dev/null
# The VM's speed drifts: measure in ROUNDS alternating tinyrt and ORT and
# keep each one's best median (and best single run).
ROUNDS=${ROUNDS:-3}
field() { echo "$1" | sed "s/.*\"$2\":\([0-9.]*\).*/\1/"; }
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
echo "| model | tinyrt median ms | ORT median ms | tinyrt / ORT | tinyrt min ms | ORT min ms | arena bytes | arena lower bound |"
echo "|---|---|---|---|---|---|---|---|"
for m in $MODELS; do
  tm=""; om=""; tn=""; on=""
  for r in $(seq "$ROUNDS"); do
    t=$(build/tinyrt-perf $MODEL_DIR/$m/model.onnx --threads "$THREADS" --runs "$RUNS" --json)
    o=$(NODE_PATH=bench/node_modules node bench/ort_latency.js $MODEL_DIR/$m/model.onnx "$THREADS" "$RUNS")
    tm=$(best "$tm" "$(field "$t" median_ms)"); tn=$(best "$tn" "$(field "$t" min_ms)")
    om=$(best "$om" "$(field "$o" median_ms)"); on=$(best "$on" "$(field "$o" min_ms)")
  done
  ar=$(field "$t" arena_bytes)
  lb=$(field "$t" arena_lower_bound_bytes)
  ratio=$(awk "BEGIN { printf \"%.2f\", $tm / $om }")
  echo "| $m | $tm | $om | $ratio | $tn | $on | $ar | $lb |"
done
echo
echo "threads=$THREADS runs=$RUNS rounds=$ROUNDS target=host CPU:$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2) ORT $(sed -n "s/.*\"version\": \"\(.*\)\".*/\1/p" bench/node_modules/onnxruntime-node/package.json)"
