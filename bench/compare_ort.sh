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
echo "| model | tinyrt median ms | ORT median ms | tinyrt / ORT | tinyrt arena bytes | lower bound |"
echo "|---|---|---|---|---|---|"
for m in $MODELS; do
  t=$(build/tinyrt-perf $MODEL_DIR/$m/model.onnx --threads "$THREADS" --runs "$RUNS" --json)
  o=$(NODE_PATH=bench/node_modules node bench/ort_latency.js $MODEL_DIR/$m/model.onnx "$THREADS" "$RUNS")
  tm=$(echo "$t" | sed 's/.*"median_ms":\([0-9.]*\).*/\1/')
  om=$(echo "$o" | sed 's/.*"median_ms":\([0-9.]*\).*/\1/')
  ar=$(echo "$t" | sed 's/.*"arena_bytes":\([0-9]*\).*/\1/')
  lb=$(echo "$t" | sed 's/.*"arena_lower_bound_bytes":\([0-9]*\).*/\1/')
  ratio=$(awk "BEGIN { printf \"%.2f\", $tm / $om }")
  echo "| $m | $tm | $om | $ratio | $ar | $lb |"
done
echo
echo "threads=$THREADS runs=$RUNS target=host CPU:$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2) ORT $(sed -n "s/.*\"version\": \"\(.*\)\".*/\1/p" bench/node_modules/onnxruntime-node/package.json)"
