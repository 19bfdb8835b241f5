#!/usr/bin/python3
"""int8 Winograd with run-time weights in many parts (issue 27): under the
default budgets an int8 3x3 layer whose whole V, U and M do not fit the
arena's room runs in chunks of output channels, each over bands of tile
rows, more than 16 parts where that is what fits (googlenet's 64->192
layer at 56x56 on x86 without VNNI). The int8 transforms are exact, so the
model so compiled gives the bits of the same model with every layer
direct (--winograd off), at 1 thread and at 2.

  check_int8_winograd_parts.py TINYRT_COMPILE TINYRT_RUNNER MODEL_DIR TARGET OUT_DIR

MODEL_DIR holds model.onnx (float) and test_data_set_0 (its input and
calibration data: the model is quantized with --quantize static).
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def compile_model(tool, model_dir, target, out, *opts):
    r = subprocess.run([tool, os.path.join(model_dir, "model.onnx"), "--target", target, "-o", out, "--name", "m",
                        "--quantize", "static", "--calibration", model_dir, "-v"] + list(opts),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(out, "m.json")) as f:
        return json.load(f), r.stdout + r.stderr


def run(runner, out, inputs, threads):
    got = os.path.join(out, f"out{threads}.bin")
    r = subprocess.run([runner, os.path.join(out, "m.so"), "m_model", "--in", inputs, "--out", got, "--threads",
                        str(threads)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(got, "rb") as f:
        return f.read()


def main():
    tool, runner, model_dir, target, out = sys.argv[1:6]
    if target.startswith("x86-64") and "avx2" not in open("/proc/cpuinfo").read():
        print("skipped: this CPU has no AVX2")
        sys.exit(77)
    t = onnx.TensorProto()
    with open(os.path.join(model_dir, "test_data_set_0", "input_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    os.makedirs(out, exist_ok=True)
    inputs = os.path.join(out, "input.bin")
    numpy_helper.to_array(t).astype(np.float32).tofile(inputs)

    parts, log = compile_model(tool, model_dir, target, os.path.join(out, "default"))
    direct, _ = compile_model(tool, model_dir, target, os.path.join(out, "direct"), "--winograd", "off")
    # -v: "winograd <label> IC->OC HxW: ... -> F(2,3)/rt ... in chunks of C
    # output channels (...), each in B bands of tile rows (...)"
    many = []
    for m in re.finditer(r"winograd .* (\d+)->(\d+) (\d+x\d+): .*-> F\(2,3\)/rt .*in chunks of (\d+) output "
                         r"channels .*, each in (\d+) bands", log):
        oc, chunk, bands = int(m.group(2)), int(m.group(4)), int(m.group(5))
        n = -(-oc // chunk) * bands
        if n > 16:
            many.append(f"{m.group(1)}->{oc} at {m.group(3)}: {-(-oc // chunk)} chunks x {bands} bands")
    assert many, "no int8 layer took run-time weights in more than 16 parts:\n" + log[-3000:]
    taken = [tr for tr in parts["memory_trades"] if tr["taken"] == "F(2,3)/rt" and tr["bands"] > 1]
    assert taken, parts["memory_trades"]
    budget = parts["budgets"]["arena_budget_bytes"]
    assert parts["arena_bytes"] <= 1.1 * direct["arena_bytes"], (parts["arena_bytes"], direct["arena_bytes"])

    a, b = run(runner, os.path.join(out, "direct"), inputs, 1), run(runner, os.path.join(out, "default"), inputs, 1)
    assert len(a) > 0 and a == b, "int8 Winograd in parts differs from the direct layers"
    assert run(runner, os.path.join(out, "default"), inputs, 2) == a, "2 threads differ from 1"
    print(f"{target}: " + "; ".join(many)
          + f"; arena {parts['arena_bytes']} (budget {budget}, direct {direct['arena_bytes']});"
          + f" {len(a)} output bytes identical to --winograd off at 1 and 2 threads")


if __name__ == "__main__":
    main()
