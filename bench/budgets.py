#!/usr/bin/python3
"""Weights and arena with the default budgets (issue 28), per model: each
zoo and torchvision model compiled with defaults and with --winograd off;
prints the weights against the model's own weights (JSON budgets), the
arena against the --winograd off plan's, and the Winograd layers taken.
With --weights fp16 among the options, also the weights against the same
compile's with float weights (defaults otherwise).

  bench/budgets.py BUILD_DIR TARGET [--models A,B,...] [--check] [MORE_COMPILE_OPTIONS...]
--models: only these; --check: exit 1 when a model's weights or arena is
over 1.1x (the default budgets; ctest compiler/default-budgets).
Needs the exported models (ctest -R models/make, zoo/make).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile


def compile_json(tool, model, out, target, opts):
    r = subprocess.run([tool, model, "-o", out, "--name", "model", "--target", target] + opts,
                       capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip().splitlines()[-1:]
    with open(os.path.join(out, "model.json")) as f:
        return json.load(f), None


def main():
    build, target, opts = sys.argv[1], sys.argv[2], sys.argv[3:]
    only, check = None, "--check" in opts
    if "--models" in opts:
        i = opts.index("--models")
        only = set(opts[i + 1].split(","))
        del opts[i:i + 2]
    opts = [o for o in opts if o != "--check"]
    tool = os.path.join(build, "tinyrt-compile")
    models = sorted(glob.glob(f"{build}/models/zoo/*/model.onnx") + glob.glob(f"{build}/models/torchvision/*/model.onnx"))
    if only is not None:
        models = [m for m in models if m.split("/")[-2] in only]
        assert len(models) == len(only), f"models not found: {only}"
    failed = False
    worst_w = worst_a = worst_h = 0.0
    half = "fp16" in opts and "--weights" in opts
    f32_opts = [o for o in opts if o not in ("--weights", "fp16")]
    print(f"{'model':22s} {'weights/model':>13s} {'arena/off':>10s} winograd" + ("  fp16/fp32" if half else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            name = m.split("/")[-2]
            j, err = compile_json(tool, m, os.path.join(tmp, name), target, opts)
            off, err2 = compile_json(tool, m, os.path.join(tmp, name + "_off"), target, opts + ["--winograd", "off"])
            if j is None or off is None:
                print(f"{name:22s} failed: {(err or err2)[0] if (err or err2) else ''}")
                failed = True
                continue
            w = j["weights_bytes"] / max(1, j["budgets"]["model_weights_bytes"])
            a = j["arena_bytes"] / max(1, off["arena_bytes"])
            worst_w, worst_a = max(worst_w, w), max(worst_a, a)
            wino = [t for t in j["memory_trades"] if t["kind"] == "winograd"]
            taken = sum(1 for t in wino if t["taken"] != "direct")
            narrowed = sum(1 for t in j["memory_trades"] if t["kind"] == "tile")
            extra = ""
            if half:
                f32, _ = compile_json(tool, m, os.path.join(tmp, name + "_f32"), target, f32_opts)
                h = j["weights_bytes"] / max(1, f32["weights_bytes"]) if f32 else float("nan")
                worst_h = max(worst_h, h)
                extra = f"  {h:9.3f}"
            tiles = f"  {narrowed} tiles narrowed" if narrowed else ""
            print(f"{name:22s} {w:13.3f} {a:10.3f} {taken:3d}/{len(wino)}{extra}{tiles}", flush=True)
    print(f"{target}: weights at most {worst_w:.3f}x the model's, arena at most {worst_a:.3f}x the --winograd off plan's"
          + (f", at most {worst_h:.3f}x the float weights' compile" if half else ""))
    if check and (failed or worst_w > 1.1 or worst_a > 1.1):
        sys.exit(1)


main()
