#!/usr/bin/python3
"""Compiles a model and checks in its JSON report that every kernel whose
label's first op is LABEL ("Conv" in "Conv+Relu.winograd_out") runs in one
of the given families (e.g. that the
convolutions of a model compiled over run-time image sizes stay on the
scheduled emitters instead of the loop fallback, which gives the same
results far slower). Prints the kernels it checked. MODEL is a model.onnx,
or a case directory: its model.onnx, compiled with the ranges of its
tinyrt_dims.txt; "{dir}" in the compile arguments is the case directory
(--quantize static --calibration {dir}).

  check_families.py TINYRT_COMPILE MODEL LABEL FAMILY[,FAMILY...] [COMPILE ARGS...]
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    tool, model, label, families = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4].split(","))
    args = sys.argv[5:]
    if os.path.isdir(model):
        args = [a.replace("{dir}", model) for a in args]
        dims = os.path.join(model, "tinyrt_dims.txt")
        if os.path.exists(dims):
            with open(dims) as f:
                args = f.read().split() + args
        model = os.path.join(model, "model.onnx")
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([tool, model, "-o", out, "--name", "m"] + args, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("check_families: the compile failed: " + r.stderr.strip())
        with open(os.path.join(out, "m.json")) as f:
            groups = json.load(f)["fusion_groups"]
    checked = [g for g in groups if g["label"].split("+")[0].split(".")[0] == label]
    if not checked:
        sys.exit(f"check_families: no kernel labelled {label}...")
    bad = 0
    for g in checked:
        ok = g["family"] in families
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} kernel {g['kernel']} {g['label']} {g['output_shape']}: {g['family']}")
    print(f"{len(checked) - bad} of {len(checked)} {label} kernels in {sorted(families)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
