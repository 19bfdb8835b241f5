#!/usr/bin/python3
"""Narrower tiles (the weights plan, issue 28): a weights budget the
target's own tiles miss by their channel padding is met with narrower
tiles (the JSON lists each as a "tile" trade, the weights as emitted
within the budget), and the model so
compiled still matches its reference (tinyrt-onnx-test on the model's
test data).

  check_narrow_tiles.py TINYRT_COMPILE TINYRT_ONNX_TEST MODEL_DIR TARGET OUT_DIR BUDGET
"""
import json
import os
import subprocess
import sys


def compile_model(tool, model, target, out, *opts):
    r = subprocess.run([tool, model, "--target", target, "-o", out, "--name", "model", "-v", "--winograd", "off"] +
                       list(opts), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(out, "model.json")) as f:
        return r, json.load(f)


def main():
    tool, onnx_test, model_dir, target, out, budget = sys.argv[1:7]
    model = os.path.join(model_dir, "model.onnx")
    _, wide = compile_model(tool, model, target, os.path.join(out, "wide"))
    r, tight = compile_model(tool, model, target, os.path.join(out, "tight"), "--max-weights-bytes", budget)
    limit = tight["budgets"]["weights_budget_bytes"]
    assert wide["weights_bytes"] > limit, f"the target's own tiles fit the budget: {wide['weights_bytes']} <= {limit}"
    assert tight["weights_bytes"] <= limit, (tight["weights_bytes"], limit)
    tiles = [t for t in tight["memory_trades"] if t["kind"] == "tile"]
    assert tiles and all(t["bytes"] < 0 and t["wanted"] != t["taken"] for t in tiles), tight["memory_trades"]
    assert "tiles narrowed" in r.stdout + r.stderr, r.stdout + r.stderr
    run = subprocess.run([onnx_test, "--winograd", "off", "--max-weights-bytes", budget, "--target", target, model_dir],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    print(f"{target}: weights {wide['weights_bytes']} -> {tight['weights_bytes']} bytes (budget {limit}), "
          + ", ".join(f"{t['node']} {t['wanted']} -> {t['taken']}" for t in tiles) + "; "
          + run.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
