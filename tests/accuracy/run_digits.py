#!/usr/bin/python3
"""Test-split accuracy of the digits CNN, fp32 and int8, on a target (ctest
<target>/accuracy/digits; the models and data come from make_digits.py).

  run_digits.py TINYRT_COMPILE DATADIR WORKDIR TARGET=RUNNER [REF=RUNNER]

RUNNER is a command line (an emulator and its options, then the runner) of
tinyrt-runner for that target. Each model is compiled with the whole test
split as one batch (--input-shape image=360,1,8,8) and run once with
--compare-threads 2 (1 and 2 threads must give the same bytes); the
prediction is argmax of the logits (first index on ties). REF (host) is
compiled and run the same way as the target the int8 results must equal.

Fails unless, on TARGET:
- fp32 agrees with PyTorch (|y - ref| <= 1e-4 + 1e-3 |ref|) and its
  accuracy is at least 90%;
- int8 accuracy is at most 1 point below fp32's;
- the float model quantized by tinyrt itself (--quantize static,
  calibrated on the training digits, by min/max, by the 99.99th
  percentile, and with 7-bit weights, --weight-bits 7) is at most 1 point
  below fp32, and
  the float model with half weights (--weights fp16) is at most 0.5
  point below fp32, its logits within 2e-3 of max |PyTorch logit| of
  PyTorch's (docs/PRECISION.md), and so is it with half products
  (--precision fp16, within 4e-3) on targets that have them
  (aarch64-neon-fp16), and
  the QDQ model it writes with --emit-qdq passes ONNX's checker and,
  compiled again, gives the same logits byte for byte;
- int8, static and 7-bit static predicted classes, and logits byte for
  byte, equal REF's (x86 without VNNI multiplies 7-bit weights as bytes,
  every other target as any int8 weights).
Also printed, not checked: how far the int8 logits are from the QDQ model
run as the ONNX definition (make_digits.py), in quantization steps (tinyrt
rounds once per fused int8 kernel, the definition once per op)."""
import os
import shlex
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

FP32_FLOOR = 90.0
MAX_INT8_LOSS = 1.0


def logit_scale(model_path):
    """Scale of the int8 model's output DequantizeLinear (one logit step)."""
    m = onnx.load(model_path)
    inits = {i.name: i for i in m.graph.initializer}
    dq = next(n for n in m.graph.node if n.output[0] == m.graph.output[0].name)
    return float(numpy_helper.to_array(inits[dq.input[1]]))


# Each model: its ONNX file and extra tinyrt-compile options. "static" is
# the float model quantized by tinyrt itself, calibrated on the training
# digits (make_digits.py writes DATA/calibration).
# "emitted" is the file "static" wrote with --emit-qdq: the same QDQ model
# as ONNX, which must be a valid model giving the same logits.
MODELS = {"fp32": ("{data}/fp32.onnx", []), "int8": ("{data}/int8.onnx", []),
          "static": ("{data}/fp32.onnx", ["--quantize", "static", "--calibration", "{data}/calibration",
                                          "--emit-qdq", "{out}/static_qdq.onnx"]),
          "emitted": ("{work}/static/static_qdq.onnx", []),
          "percentile": ("{data}/fp32.onnx", ["--quantize", "static", "--calibration", "{data}/calibration",
                                              "--calibration-percentile", "99.99"]),
          # 7-bit weights: bytes (vpmaddubsw) on x86 without VNNI, the
          # same integers as every other target's products.
          "static7": ("{data}/fp32.onnx", ["--quantize", "static", "--calibration", "{data}/calibration",
                                           "--weight-bits", "7"]),
          # Half weights: each weight rounded to 11 significant bits.
          "fp16": ("{data}/fp32.onnx", ["--weights", "fp16"])}
# On targets with half arithmetic (aarch64-neon-fp16): products in half.
HALF_MODELS = {"half": ("{data}/fp32.onnx", ["--precision", "fp16"])}


def models_for(target):
    return {**MODELS, **HALF_MODELS} if target.endswith("-fp16") else MODELS
MAX_FP16_LOSS = 0.5
FP16_ATOL = 2e-3  # of max |logit| (docs/PRECISION.md)
HALF_ATOL = 4e-3  # --precision fp16: inputs and sums rounded too


def run(compile_exe, data, work, target, runner, model, count):
    """Logits [count, 10] of model MODELS[model] compiled for target and run."""
    out_dir = os.path.join(work, target, model)
    os.makedirs(out_dir, exist_ok=True)
    name = "digits_" + model
    src, extra = models_for(target)[model]
    fmt = dict(data=data, out=out_dir, work=os.path.join(work, target))
    cmd = [compile_exe, src.format(**fmt), "-o", out_dir, "--target", target, "--name", name,
           "--input-shape", f"image={count},1,8,8"] + [a.format(**fmt) for a in extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"run_digits: {' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")
    logits = os.path.join(out_dir, "logits.bin")
    if os.path.exists(logits):
        os.remove(logits)
    cmd = shlex.split(runner) + [os.path.join(out_dir, name + ".so"), name + "_model", "--in",
                                 os.path.join(data, "test_images.bin"), "--out", logits, "--compare-threads", "2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"run_digits: {' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    y = np.fromfile(logits, np.float32)
    if y.size != count * 10:
        sys.exit(f"run_digits: {target} {model}: {y.size} logits, expected {count * 10}")
    return y.reshape(count, 10)


def acc(logits, labels):
    return 100.0 * float((logits.argmax(1) == labels).mean())


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    compile_exe, data, work = sys.argv[1:4]
    pairs = [a.split("=", 1) for a in sys.argv[4:]]
    target = pairs[0][0]
    exp = np.load(os.path.join(data, "expected.npz"))
    labels, torch_logits, qdq_logits = exp["labels"], exp["torch_logits"], exp["qdq_logits"]
    count = len(labels)
    step = logit_scale(os.path.join(data, "int8.onnx"))

    results = {}
    for t, runner in pairs:
        if t in results:
            continue
        t0 = time.monotonic()
        results[t] = {m: run(compile_exe, data, work, t, runner, m, count) for m in models_for(t)}
        results[t]["seconds"] = time.monotonic() - t0
    ref = pairs[-1][0]

    with open(os.path.join(data, "summary.txt")) as f:
        print(f.read().rstrip())
    print(f"\n{'':24}{'fp32 acc':>10}{'int8 acc':>10}{'int8-fp32':>11}{'static acc':>12}   compile+run")
    print(f"{'PyTorch / QDQ reference':24}{acc(torch_logits, labels):9.2f}%{acc(qdq_logits, labels):9.2f}%"
          f"{acc(qdq_logits, labels) - acc(torch_logits, labels):+10.2f}")
    for t, r in results.items():
        a32, a8, ast = acc(r["fp32"], labels), acc(r["int8"], labels), acc(r["static"], labels)
        print(f"{t:24}{a32:9.2f}%{a8:9.2f}%{a8 - a32:+10.2f}{ast:11.2f}%   {r['seconds']:.1f} s")
    print()

    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    r = results[target]
    fp32, int8 = r["fp32"], r["int8"]
    err = np.abs(fp32 - torch_logits)
    check(bool(np.all(err <= 1e-4 + 1e-3 * np.abs(torch_logits))),
          f"{target} fp32 logits = PyTorch's (max |error| {err.max():.2e}; "
          f"{int((fp32.argmax(1) == torch_logits.argmax(1)).sum())}/{count} predictions the same)")
    a32, a8 = acc(fp32, labels), acc(int8, labels)
    check(a32 >= FP32_FLOOR, f"{target} fp32 accuracy {a32:.2f}% >= {FP32_FLOOR:.0f}%")
    check(a32 - a8 <= MAX_INT8_LOSS, f"{target} int8 accuracy {a8:.2f}% within {MAX_INT8_LOSS:.0f} point of fp32 {a32:.2f}%")
    a16, e16 = acc(r["fp16"], labels), np.abs(r["fp16"] - torch_logits)
    check(a32 - a16 <= MAX_FP16_LOSS and bool(np.all(e16 <= FP16_ATOL * np.abs(torch_logits).max())),
          f"{target} --weights fp16 accuracy {a16:.2f}% within {MAX_FP16_LOSS} point of fp32 {a32:.2f}%, logits within "
          f"{FP16_ATOL} x max|logit| of PyTorch's (max |error| {e16.max():.2e} of {np.abs(torch_logits).max():.2f})")
    if "half" in r:
        ah, eh = acc(r["half"], labels), np.abs(r["half"] - torch_logits)
        check(a32 - ah <= MAX_FP16_LOSS and bool(np.all(eh <= HALF_ATOL * np.abs(torch_logits).max())),
              f"{target} --precision fp16 accuracy {ah:.2f}% within {MAX_FP16_LOSS} point of fp32 {a32:.2f}%, logits "
              f"within {HALF_ATOL} x max|logit| of PyTorch's (max |error| {eh.max():.2e} of "
              f"{np.abs(torch_logits).max():.2f}; {int((r['half'].argmax(1) == fp32.argmax(1)).sum())}/{count} "
              f"predictions as fp32's)")
    emitted = os.path.join(work, target, "static", "static_qdq.onnx")
    try:
        onnx.checker.check_model(onnx.load(emitted), full_check=True)
        valid = True
    except Exception as e:  # noqa: BLE001 (any checker failure fails the check)
        print(f"info {emitted}: {e}")
        valid = False
    check(valid, f"{target} --emit-qdq wrote a valid ONNX model")
    diff = int((r["emitted"].view(np.uint32) != r["static"].view(np.uint32)).sum())
    check(diff == 0, f"{target} the emitted QDQ model compiled again gives the static logits, byte for byte ({diff} differ)")
    for m, what in (("static", "min/max"), ("percentile", "99.99th percentile"), ("static7", "7-bit weights")):
        am = acc(r[m], labels)
        check(a32 - am <= MAX_INT8_LOSS, f"{target} tinyrt --quantize static ({what}) accuracy {am:.2f}% within "
              f"{MAX_INT8_LOSS:.0f} point of fp32 {a32:.2f}%")
    if target != ref:
        for m in ("int8", "static", "static7"):
            mine, other = r[m], results[ref][m]
            same_pred = int((mine.argmax(1) == other.argmax(1)).sum())
            check(same_pred == count, f"{target} {m} predictions = {ref}'s ({same_pred}/{count})")
            diff = int((mine.view(np.uint32) != other.view(np.uint32)).sum())
            check(diff == 0, f"{target} {m} logits = {ref}'s, byte for byte ({diff} of {mine.size} differ)")
    steps = np.rint(np.abs(int8 - qdq_logits) / step).astype(int)
    print(f"info {target} int8 against the QDQ model run as the ONNX definition: "
          f"{int((steps > 0).sum())} of {int8.size} logits differ (by at most {steps.max()} steps of {step:.4g}), "
          f"{int((int8.argmax(1) == qdq_logits.argmax(1)).sum())}/{count} predictions the same")
    ties = int(sum(1 for row in int8 if (row == row.max()).sum() > 1))
    print(f"info {target} int8: {ties} of {count} digits have a tie for the top logit (the first class wins)")
    if failures:
        sys.exit(f"run_digits: {len(failures)} failed")
    print(f"run_digits: {target} passed")


if __name__ == "__main__":
    main()
