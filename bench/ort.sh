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
# The VM's speed drifts: the scripts measure in ROUNDS alternating tinyrt
# and ORT and keep each one's best median (and best single run).
ROUNDS=${ROUNDS:-3}
ort() { NODE_PATH=bench/node_modules node bench/ort_latency.js "$1" "$THREADS" "$RUNS"; }
field() { echo "$1" | sed "s/.*\"$2\":\([0-9.]*\).*/\1/"; }
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
