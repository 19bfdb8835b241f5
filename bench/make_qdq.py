#!/usr/bin/python3
"""Quantizes a float ONNX model (opset >= 13) into the QDQ format ONNX
Runtime's static quantizer writes (QuantFormat.QDQ), without onnxruntime's
Python package: calibration runs the float model in onnxruntime-node
(bench/ort_calibrate.js), the QDQ model is written by python_helpers/quantize/qdq.py
(onnx and numpy; its docstring describes the format).

Usage: make_qdq.py FLOAT.onnx OUT.onnx [--calib N] [--per-tensor-weights] [--reduce-range]
(run from the repository root: it calls `node bench/ort_calibrate.js`)

- Calibration: min/max of every float tensor over N (default 8) seeded
  inputs, uniform [0,1) for 4-D (image) inputs and standard normal
  otherwise.
- Activations uint8 asymmetric per tensor, weights int8 symmetric per
  output channel (per tensor with --per-tensor-weights), biases int32;
  --reduce-range: weights in [-63, 63] (7 bits), as ONNX Runtime's
  quantizer writes them with reduce_range for x86 CPUs without VNNI (on
  which tinyrt then multiplies them as bytes, docs/QUANTIZATION.md).
Constant nodes and Identity nodes of initializers are folded first."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, TensorProto

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python_helpers", "quantize"))
import qdq  # noqa: E402
from qdq import graph_inputs  # noqa: E402


# -------------------------------------------------------------- calibration

def make_samples(graph, count, seed=0):
    """Seeded inputs: uniform [0,1) images (4-D), standard normal otherwise;
    symbolic dimensions as 1."""
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(count):
        sample = {}
        for i in graph_inputs(graph):
            if i.type.tensor_type.elem_type != TensorProto.FLOAT:
                sys.exit(f"input {i.name} is not float32")
            dims = [d.dim_value if d.HasField("dim_value") else 1 for d in i.type.tensor_type.shape.dim]
            x = rng.random(dims) if len(dims) == 4 else rng.standard_normal(dims)
            sample[i.name] = {"dims": dims, "data": x.astype(np.float32).ravel().tolist()}
        samples.append(sample)
    return samples


def calibrate(model, floats, count):
    """{tensor: (min, max)} for every float graph input and node output, from
    ONNX Runtime running the model with all of them as graph outputs."""
    aug = onnx.ModelProto()
    aug.CopyFrom(model)
    have = {o.name for o in aug.graph.output}
    for node in aug.graph.node:
        for t in node.output:
            if t in floats and t not in have:
                aug.graph.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
                have.add(t)
    with tempfile.TemporaryDirectory() as tmp:
        model_path, inputs_path = os.path.join(tmp, "calib.onnx"), os.path.join(tmp, "inputs.json")
        onnx.save(aug, model_path)
        with open(inputs_path, "w") as f:
            json.dump(make_samples(model.graph, count), f)
        out = subprocess.run(["node", os.path.join("bench", "ort_calibrate.js"), model_path, inputs_path],
                             cwd=REPO, check=True, capture_output=True, text=True).stdout
    return {k: (float(v[0]), float(v[1])) for k, v in json.loads(out).items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("float_model")
    ap.add_argument("out_model")
    ap.add_argument("--calib", type=int, default=8, help="calibration inputs (default 8)")
    ap.add_argument("--per-tensor-weights", action="store_true", help="one scale per weight tensor")
    ap.add_argument("--reduce-range", action="store_true",
                    help="weights in 7 bits, [-63, 63] (ONNX Runtime's reduce_range, for x86 without VNNI)")
    args = ap.parse_args()

    model = onnx.load(args.float_model)
    try:
        floats = qdq.prepare(model)
    except ValueError as e:
        sys.exit(f"{args.float_model}: {e}")
    ranges = calibrate(model, floats, args.calib)
    n_act, n_w, removed = qdq.quantize(model, ranges, floats, not args.per_tensor_weights,
                                           63 if args.reduce_range else 127)
    onnx.save(model, args.out_model)
    print(f"{args.out_model}: {n_act} quantized activations, {n_w} quantized weights, {removed} Relu/Clip folded; "
          f"{qdq.summary(model)}")


if __name__ == "__main__":
    main()
