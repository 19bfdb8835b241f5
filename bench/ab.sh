#!/bin/sh
# Two compiler builds, or two sets of compile options, on the same models,
# measured in one process with their runs alternated (bench/ab_bench.c), so
# that the drift of a shared VM falls on both alike. Prints a table of
# median latency per model, the B/A ratio, and the geomean of the ratios.
#   bench/ab.sh [MODEL...]
# MODEL: as bench/compare_ort.sh (the six torchvision models and the zoo by
# default, v_* variants by name), or a path ending in .onnx (a QDQ model). Environment:
#   A_COMPILE, B_COMPILE  tinyrt-compile binaries (default build/tinyrt-compile
#                         for both); e.g. a copy built at another commit
#   A_FLAGS, B_FLAGS      compile options of each side, e.g. B_FLAGS="--winograd off"
#   THREADS               pool threads (default 1)
#   ROUNDS, RUNS          ab_bench rounds and runs per round (default 10, 10)
#   STEPS=1               also each step's median (models with the same kernels)
#   BENCH_MODELS          where the exported models live (default build/models)
# The compiled models go to build/ab/{a,b}/MODEL.
set -eu
cd "$(dirname "$0")/.."
A_COMPILE=${A_COMPILE:-build/tinyrt-compile}
B_COMPILE=${B_COMPILE:-build/tinyrt-compile}
A_FLAGS=${A_FLAGS:-}
B_FLAGS=${B_FLAGS:-}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-10}
RUNS=${RUNS:-10}
[ -x build/ab_bench ] || { echo "no build/ab_bench (scripts/build.sh)" >&2; exit 1; }
. bench/models.sh
steps=""
[ "${STEPS:-0}" = 1 ] && steps=--steps
echo "A: $A_COMPILE $A_FLAGS; B: $B_COMPILE $B_FLAGS; $THREADS thread(s), $ROUNDS rounds of $RUNS runs"
echo
echo "| model | A median ms | B median ms | B / A |"
echo "|---|---|---|---|"
for m in $MODELS; do
  p=$(model_path "$m")
  # (a path's directory name: build/models/torchvision/resnet18/qdq.onnx -> torchvision_resnet18_qdq)
  case "$m" in *.onnx) m=$(echo "$m" | sed 's|^build/models/||; s|\.onnx$||; s|/|_|g') ;; esac
  for side in a b; do
    if [ $side = a ]; then c=$A_COMPILE; f=$A_FLAGS; else c=$B_COMPILE; f=$B_FLAGS; fi
    mkdir -p "build/ab/$side"
    # shellcheck disable=SC2086
    "$c" "$p" $f --name model -o "build/ab/$side/$m" >/dev/null
  done
  out=$(build/ab_bench --threads "$THREADS" --rounds "$ROUNDS" --runs "$RUNS" $steps \
        "build/ab/a/$m/model.so" "build/ab/b/$m/model.so")
  a=$(echo "$out" | awk 'NR == 2 { print $3 }')
  b=$(echo "$out" | awk 'NR == 3 { print $3 }')
  ratio=$(awk "BEGIN { printf \"%.3f\", $b / $a }")
  geo_add "$b" "$a"
  echo "| $m | $a | $b | $ratio |"
  [ -z "$steps" ] || echo "$out" | sed -n '4,$p' >&2
done
echo
echo "geomean B / A over $geo_count models: $(geo_mean %.3f)"
