#!/bin/sh
# tinyrt against ONNX Runtime (onnxruntime-node's CPU provider) on the same
# machine in the same run: median latency per model, tinyrt/ORT ratio, and
# the geomean of the ratios.
#   bench/compare_ort.sh [THREADS] [RUNS] [MODEL...]
# MODEL: the six torchvision models and the edge zoo (tests/models/
# export_zoo.py) by default; any name of either export script. Missing
# models are exported into $BENCH_MODELS/{torchvision,zoo}.
# Environment:
#   BENCH_TINYRT  build tree whose tinyrt-perf is measured (default build),
#                 so that two trees can be compared on the same models
#   BENCH_MODELS  where the exported models live (default build/models)
#   BENCH_FLAGS   extra tinyrt-perf options, e.g. "--winograd off"
#   ROUNDS        alternating tinyrt/ORT rounds, best median kept (default 3)
# Needs a built tree (scripts/build.sh) and npm. ORT is a benchmark peer
# only; nothing in tinyrt depends on it.
set -eu
cd "$(dirname "$0")/.."
THREADS=${1:-1}
RUNS=${2:-30}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
. bench/ort.sh
. bench/models.sh
echo "| model | tinyrt median ms | ORT median ms | tinyrt / ORT | tinyrt min ms | ORT min ms | arena bytes | arena lower bound |"
echo "|---|---|---|---|---|---|---|---|"
for m in $MODELS; do
  p=$(model_path "$m")
  tm=""; om=""; tn=""; on=""
  for r in $(seq "$ROUNDS"); do
    t=$(masked "$TINYRT/tinyrt-perf" "$p" $FLAGS --threads "$THREADS" --runs "$RUNS" --json)
    o=$(ort "$p")
    tm=$(best "$tm" "$(field "$t" median_ms)"); tn=$(best "$tn" "$(field "$t" min_ms)")
    om=$(best "$om" "$(field "$o" median_ms)"); on=$(best "$on" "$(field "$o" min_ms)")
  done
  ar=$(field "$t" arena_bytes)
  lb=$(field "$t" arena_lower_bound_bytes)
  ratio=$(awk "BEGIN { printf \"%.2f\", $tm / $om }")
  geo_add "$tm" "$om"
  echo "| $m | $tm | $om | $ratio | $tn | $on | $ar | $lb |"
done
echo "| geomean ($geo_count models) | | | $(geo_mean %.2f) | | | | |"
echo
echo "threads=$THREADS runs=$RUNS rounds=$ROUNDS avx2_only=${AVX2_ONLY:-0} target=host tinyrt=$TINYRT flags=$FLAGS CPU:$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2) ORT $(sed -n "s/.*\"version\": \"\(.*\)\".*/\1/p" bench/node_modules/onnxruntime-node/package.json)"
