#!/bin/sh
# Layer by layer against ONNX Runtime on x86-64 (its C API, same threads):
#   bench/layers_ort.sh MODEL [THREADS] [RUNS] [TOP] [-- tinyrt-perf options]
# MODEL as bench/models.sh (a name or an .onnx path). Runs tinyrt-perf
# --profile --json and ORT with its per-node profile (ORT_RUN_PROFILE), then
# bench/layers_ort.py joins them by ONNX node name: the TOP kernels where
# tinyrt loses the most time to ORT, and each kernel family's sum against the
# ORT nodes it covers. AVX2_ONLY=1 as bench/ort.sh (both masked to AVX2).
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n 2,8p "$0" >&2; exit 2; }
M=$1
THREADS=${2:-1}
RUNS=${3:-50}
TOP=${4:-25}
shift $(($# < 4 ? $# : 4))
[ "${1:-}" != -- ] || shift
EXTRA="$*"
set -- "$M"
. bench/ort.sh
. bench/models.sh
p=$(model_path "$M")
[ -x build/ort_count/ort_time ] || { echo "layers_ort.sh needs ORT's C API (x86-64)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
masked "$TINYRT/tinyrt-perf" "$p" --profile --json --threads "$THREADS" --runs "$RUNS" $FLAGS $EXTRA >"$tmp/tinyrt.json"
ORT_RUN_PROFILE="$tmp/ort" masked build/ort_count/ort_time "$p" "$RUNS" --time "$THREADS" 1 >/dev/null
/usr/bin/python3 bench/layers_ort.py "$tmp/tinyrt.json" "$tmp"/ort_*.json "$TOP"
