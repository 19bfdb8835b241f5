#!/usr/bin/python3
"""An int8 GEMM's time over the float GEMM's on one target, per product
form: the figures of Target::int8_over_float (the compile's "int8 slower
than float", docs/QUANTIZATION.md).

  bench/int8_over_float.py TARGET [MODEL...] [--rounds N] [--runs N]

(from the project root, after scripts/build.sh and the model exports)

For each model (torchvision and zoo names under build/models; resnet18,
squeezenet1_1, mobilenet_v3_small, efficientnet_b0 by default) its float
model with --winograd off and three QDQ models next to it (bench/make_qdq.py;
bench/force_widened.py): qdq.onnx (weights in [-127, 127]: signed bytes on
x86-64-avx2), qdq7.onnx (7-bit: bytes) and qdqw.onnx (a weight of -128 per
layer: widened), each profiled by tinyrt-perf --profile, the four run in
turn in each of ROUNDS rounds (x86: each kernel's best median in ms; ARM:
guest instructions). The GEMM steps of the int8 model (family qgemm) are
matched to the float model's (family gemm) by geometry (output and input
channels per group, row, linear), in order; the ratio is their summed time
over the float ones'. On a target with dot products (VNNI, sdot) the three
QDQ models multiply alike.

--depthwise: the depthwise steps instead (Target::depthwise_int8_over_float),
matched in kernel order (the int8 and float models have the same depthwise
layers in the same order), the QDQ models qdq and qdq7 only (depthwise
products do not depend on the GEMM weights' form).
"""
import argparse
import collections
import json
import os
import subprocess
import sys

VARIANTS = [("qdq", "8-bit [-127, 127]"), ("qdq7", "7-bit"), ("qdqw", "a -128 per layer")]


def model_dir(name):
    for sub in ("torchvision", "zoo"):
        d = os.path.join("build/models", sub, name)
        if os.path.isdir(d):
            return d
    sys.exit(f"no model {name} under build/models (ctest -R export)")


def profile(path, target, runs, extra):
    out = subprocess.run(["build/tinyrt-perf", path, "--target", target, "--profile", "--json", "--runs", str(runs)] +
                         extra, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["profile"]


def cost(entry):
    return entry["guest_instructions"] if "guest_instructions" in entry else entry["median_ms"]


def gemm_steps(prof, family):
    steps = collections.defaultdict(list)
    for e in prof:
        if e["family"] == family and "gemm" in e:
            g = e["gemm"]
            steps[(g["oc_per_group"], g["ic_per_group"], g["row"], g["linear"])].append(cost(e))
    return steps


def depthwise_steps(prof, _family):
    # (the family is "depthwise" in int8 and float models alike)
    steps = sorted((e["kernel"], cost(e)) for e in prof if e["family"] == "depthwise")
    return {"depthwise": [c for _, c in steps]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target")
    ap.add_argument("models", nargs="*", default=["resnet18", "squeezenet1_1", "mobilenet_v3_small",
                                                  "efficientnet_b0"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--depthwise", action="store_true")
    a = ap.parse_args()
    # (depthwise products do not depend on the GEMM weights' form: qdq and qdq7)
    variants = VARIANTS[:2] if a.depthwise else VARIANTS
    steps_of = depthwise_steps if a.depthwise else gemm_steps
    for m in a.models:
        d = model_dir(m)
        for v, _ in variants:
            if not os.path.exists(os.path.join(d, v + ".onnx")):
                sys.exit(f"{d}/{v}.onnx missing: bench/make_qdq.py (--reduce-range for qdq7), "
                         "bench/force_widened.py qdq.onnx qdqw.onnx")
    best = {}  # (model, variant) -> {geometry: [costs]}, the best per step over rounds

    def keep(key, steps):
        old = best.get(key)
        best[key] = steps if old is None else {g: [min(x, y) for x, y in zip(old[g], steps[g])] for g in old}

    for r in range(a.rounds):
        for m in a.models:
            d = model_dir(m)
            keep((m, "float"), steps_of(profile(os.path.join(d, "model.onnx"), a.target, a.runs,
                                                ["--winograd", "off"]), "gemm"))
            for v, _ in variants:
                keep((m, v), steps_of(profile(os.path.join(d, v + ".onnx"), a.target, a.runs, []), "qgemm"))
        print(f"round {r + 1}/{a.rounds}", file=sys.stderr)
    what_steps = "depthwise" if a.depthwise else "GEMM"
    print("| model | " + " | ".join(f"{v} ({what}) / float" for v, what in variants)
          + f" | int8 {what_steps} steps matched |")
    print("|---|" + "---|" * (len(variants) + 1))
    totals = {v: [0.0, 0.0] for v, _ in variants}
    for m in a.models:
        f = best[(m, "float")]
        cells, matched = [], 0
        for v, _ in variants:  # (the variants have the same GEMM geometries: one count)
            q = best[(m, v)]
            num = den = 0.0
            n = 0
            for g, costs in q.items():
                fc = f.get(g, [])
                for i in range(min(len(costs), len(fc))):
                    num += costs[i]
                    den += fc[i]
                    n += 1
            totals[v][0] += num
            totals[v][1] += den
            matched = n
            cells.append(f"{num / den:.3f}" if den else "-")
        print(f"| {m} | " + " | ".join(cells) + f" | {matched} |")
    print("| all | " + " | ".join(f"**{t[0] / t[1]:.3f}**" if t[1] else "-" for t in totals.values()) + " | |")
    cpu = ""
    if os.path.exists("/proc/cpuinfo"):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    print(f"\ntarget={a.target} rounds={a.rounds} runs={a.runs} CPU: {cpu}")


if __name__ == "__main__":
    main()
