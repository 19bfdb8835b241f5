#!/bin/sh
# SSDlite320 with NMS in the graph (tests/models/export_detection.py)
# against ONNX Runtime at 1 thread on the same image: tinyrt-perf's and
# ORT's median and best latency, then tinyrt's per-kernel profile head.
#   bench/detection.sh [RUNS]
# Environment: BENCH_MODELS (default build/models; the model is exported
# into $BENCH_MODELS/detection when missing). Needs a built tree and npm
# (bench/ort.sh installs onnxruntime-node). Not in CI: the compile alone
# takes about 2 minutes (bench/RESULTS.md).
set -eu
cd "$(dirname "$0")/.."
RUNS=${1:-10}
. bench/ort.sh
dir=${BENCH_MODELS:-build/models}/detection
[ -f "$dir/ssdlite320/model.onnx" ] || /usr/bin/python3 tests/models/export_detection.py "$dir"
case=$dir/ssdlite320
/usr/bin/python3 -c 'import sys, numpy as np; from onnx import numpy_helper, load_tensor
numpy_helper.to_array(load_tensor(sys.argv[1])).astype(np.float32).tofile(sys.argv[2])' \
  "$case/test_data_set_0/input_0.pb" "$dir/image0.bin"
echo "tinyrt:"
build/tinyrt-perf "$case/model.onnx" --threads 1 --runs "$RUNS" --input "image=@$case/test_data_set_0/input_0.pb" \
  --profile | head -12
echo "ONNX Runtime:"
NODE_PATH=bench/node_modules node bench/ort_image.js "$case/model.onnx" "$dir/image0.bin" 3,320,320 "$RUNS"
