#!/bin/sh
# Range-compiled against exact-compiled (issue 26): each model of
# build/models/dynamic_shapes compiled once for its ranges (tinyrt_dims.txt)
# and run at the shape of each of its test sets, against the same model
# compiled for exactly that shape, with tinyrt-perf at 1 thread; the two
# alternate, ROUNDS times each, and the table gives the median of their
# medians and the ratio. TARGET=armv7-neon or aarch64-neon: executed guest
# instructions per inference under qemu instead (exact: one round).
# QUANTIZE=static: both in int8, calibrated on the set they run (the same
# scales for both). FLAGS: more compile options for both (e.g.
# FLAGS="--max-weights-bytes 5x --max-arena-bytes 1000000000": Winograd
# wherever the cost model wants it, as before the budgets).
#   [FILTER=dyn_transformer] [TARGET=...] [QUANTIZE=static] [FLAGS=...] bench/dynamic_shapes.sh [BUILD_DIR] [ROUNDS] [RUNS]
# Needs the models: ctest -R dynamic-shapes/make (in BUILD_DIR).
set -eu
build=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
runs=${3:-300}
perf="$build/tinyrt-perf"
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
target=${TARGET:-host}
ms() {
  "$perf" "$@" --runs "$runs" --threads 1 --target "$target" 2>&1 |
    sed -n 's/.*latency: median \([0-9.]*\) ms.*/\1/p; s/.*guest instructions per inference: \([0-9]*\).*/\1/p'
}
case $target in arm* | aarch64*) rounds=1 runs=5 unit=instr ;; *) unit=ms ;; esac
printf '%-20s %-22s %10s %10s %7s\n' model shape "range_$unit" "exact_$unit" ratio
for case in "$build"/models/dynamic_shapes/${FILTER:-}*/; do
  name=$(basename "$case")
  opts=$(cat "$case/tinyrt_dims.txt")
  for set in "$case"/test_data_set_*; do
    args=""
    shapes=""
    i=0
    for f in "$set"/input_*.pb; do
      iname=$(/usr/bin/python3 -c 'import onnx,sys; m=onnx.load(sys.argv[1]); print(m.graph.input[int(sys.argv[2])].name)' "$case/model.onnx" "$i")
      shape=$(/usr/bin/python3 -c 'import onnx,sys; print(",".join(str(d) for d in onnx.load_tensor(sys.argv[1]).dims))' "$f")
      args="$args --input $iname=@$f"
      shapes="$shapes --input-shape $iname=$shape"
      i=$((i + 1))
    done
    if [ "${QUANTIZE:-}" = static ]; then
      cal=$(mktemp -d)
      ln -s "$set" "$cal/test_data_set_0"
      args="$args --quantize static --calibration $cal"
    fi
    args="$args ${FLAGS:-}"
    r=""
    e=""
    for k in $(seq "$rounds"); do
      # shellcheck disable=SC2086
      r="$r $(ms "$case/model.onnx" $opts $args)"
      # shellcheck disable=SC2086
      e="$e $(ms "$case/model.onnx" $shapes $args)"
    done
    rm=$(echo "$r" | tr ' ' '\n' | grep . | median)
    em=$(echo "$e" | tr ' ' '\n' | grep . | median)
    if [ "${QUANTIZE:-}" = static ]; then rm -r "$cal"; fi
    printf '%-20s %-22s %10s %10s %7.2f\n' "$name" "$(echo "$shapes" | sed 's/ --input-shape [^=]*=/ /g; s/^ //')" "$rm" "$em" \
      "$(echo "$rm $em" | awk '{print $1 / $2}')"
  done
done
