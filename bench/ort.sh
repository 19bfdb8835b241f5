# ort.sh — sourced by the scripts that compare with ONNX Runtime (from the
# project root): installs onnxruntime-node into bench/node_modules when
# missing (a benchmark peer only; nothing in tinyrt depends on it) and
# defines the helpers they share.
#   ROUNDS        alternating tinyrt/ORT rounds, best median kept (default 3)
#   ort MODEL     ORT's latency JSON for MODEL at $THREADS threads, $RUNS runs
#   field J K     the number under key K of the JSON object J
#   best A B      the smaller of A and B (A may be empty)
if [ ! -d bench/node_modules/onnxruntime-node ]; then
  (cd bench && npm install --no-save --ignore-scripts onnxruntime-node >/dev/null 2>&1)
fi
# AVX2_ONLY=1: the timed commands (ort, masked) run with bench/avx2_only.c
# preloaded, which hides AVX-512, AVX-VNNI and AMX from cpuid (CPUID
# faulting), so that ORT and tinyrt's --target host take their AVX2 kernels
# on an AVX-512 machine (issue 27's comparisons without an AVX2-only CPU).
# With AVX2_ONLY_AVXVNNI=1 as well, AVX-VNNI is reported present (an AVX2 +
# AVX-VNNI machine such as Alder Lake-N, on a core that executes its VEX
# form: bench/avx2_only.c checks).
# Not node (V8 takes SIGSEGV for itself): calibration runs unmasked.
if [ "${AVX2_ONLY:-}" = 1 ]; then
  mkdir -p build
  if [ ! -f build/avx2_only.so ] || [ bench/avx2_only.c -nt build/avx2_only.so ]; then
    cc -shared -fPIC -O2 -Wall -o build/avx2_only.so bench/avx2_only.c
  fi
  masked() { LD_PRELOAD="$PWD/build/avx2_only.so" "$@"; }
else
  masked() { "$@"; }
fi
# The VM's speed drifts: the scripts measure in ROUNDS alternating tinyrt
# and ORT and keep each one's best median (and best single run).
ROUNDS=${ROUNDS:-3}
# On x86-64 ORT is timed through its C API (bench/ort_count/ort_run.c
# --time), not through node: the JavaScript binding adds about 0.1 ms a
# run, which flatters tinyrt on small models.
ORT_LIB=$(ls bench/node_modules/onnxruntime-node/bin/napi-v*/linux/x64/libonnxruntime.so.1 2>/dev/null | head -1)
if [ -n "$ORT_LIB" ] && [ "$(uname -m)" = x86_64 ]; then
  mkdir -p build/ort_count
  if [ ! -x build/ort_count/ort_time ] || [ bench/ort_count/ort_run.c -nt build/ort_count/ort_time ]; then
    cc -std=c99 -O2 -Wall -o build/ort_count/ort_time bench/ort_count/ort_run.c "$ORT_LIB" \
      -Wl,-rpath,"$(cd "$(dirname "$ORT_LIB")" && pwd)"
  fi
  ort() { masked build/ort_count/ort_time "$1" "$RUNS" --time "$THREADS" 3; }
else
  ort() { [ "${AVX2_ONLY:-}" != 1 ] || { echo "AVX2_ONLY needs ORT's C API (x86-64)" >&2; exit 1; }; NODE_PATH=bench/node_modules node bench/ort_latency.js "$1" "$THREADS" "$RUNS"; }
fi
field() { echo "$1" | sed "s/.*\"$2\":\([0-9.]*\).*/\1/"; }
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
