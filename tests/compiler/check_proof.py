#!/usr/bin/python3
"""Compiles every model.onnx under the given directories for one target and
checks the bounds proof of the generated code (codegen/address_proof.h):
every access of the scheduled kernel families (GEMM, int8 GEMM, depthwise,
Winograd, recurrent) must be proved; the loop family may leave accesses
under lane-varying masks to run-time tests. Prints the counts per family.

  check_proof.py TINYRT_COMPILE TARGET DIR...
"""
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

MUST_PROVE = {"gemm", "qgemm", "depthwise", "winograd_in", "winograd_out", "winograd_weights", "recurrent"}


def compile_one(tool, target, model, out):
    r = subprocess.run([tool, model, "-o", out, "--target", target], capture_output=True, text=True)
    if r.returncode != 0:
        return model, None, r.stderr.strip().splitlines()[-1:] or [""]
    with open(os.path.join(out, "model.json")) as f:
        return model, json.load(f), None


def main():
    tool, target, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    models = sorted(os.path.join(root, "model.onnx") for d in dirs for root, _, files in os.walk(d)
                    if "model.onnx" in files)
    if not models:
        sys.exit("check_proof: no model.onnx under " + " ".join(dirs))
    totals = collections.defaultdict(lambda: [0, 0])
    failures = []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
        jobs = [pool.submit(compile_one, tool, target, m, os.path.join(tmp, str(i))) for i, m in enumerate(models)]
        for job in jobs:
            model, j, err = job.result()
            if j is None:
                # Models the compiler refuses on purpose are other tests' business.
                print(f"skip {model}: {err[0]}")
                continue
            for g in j["fusion_groups"]:
                a = g.get("addresses")
                if not a:
                    continue
                totals[g["family"]][0] += a["accesses"]
                totals[g["family"]][1] += a["unproved"]
                if a["unproved"] and g["family"] in MUST_PROVE:
                    failures.append(f"{model}: kernel {g['kernel']} ({g['family']}, {g['label']}): "
                                    f"{a['unproved']} of {a['accesses']} accesses not proved")
    for fam, (n, u) in sorted(totals.items()):
        print(f"{target} {fam}: {n - u} of {n} accesses proved")
    for f in failures:
        print("FAIL " + f)
    print(f"{len(models)} models, {len(failures)} kernels with unproved accesses in a scheduled family")
    sys.exit(1 if failures else 0)


main()
