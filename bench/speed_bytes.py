#!/usr/bin/python3
"""Speed against bytes (issue 28's report): each zoo and torchvision model
compiled four ways — default, --winograd off, --weights fp16, and with a
tuning file — timed in one process with the runs alternated
(build/ab_bench), and each build's weights, arena and code bytes from its
JSON. Prints a markdown table: per model and variant the median ms and its
ratio to the default, weights and arena against the default's.

  bench/speed_bytes.py BUILD_DIR TUNING_FILE [--models A,B,...] [--rounds N] [--runs N] [--threads N]
Run from the project root; needs the exported models (ctest -R models/make,
zoo/make) and build/ab_bench. The tuning file is for the host target
(tinyrt-tune ... -o FILE).
"""
import json
import math
import os
import subprocess
import sys

VARIANTS = [("default", []), ("off", ["--winograd", "off"]), ("fp16", ["--weights", "fp16"]), ("tuned", None)]


def models(build):
    out = []
    for kind in ("torchvision", "zoo"):
        d = os.path.join(build, "models", kind)
        for m in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if os.path.exists(os.path.join(d, m, "model.onnx")):
                out.append((m, os.path.join(d, m, "model.onnx")))
    return out


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    build, tuning = args[0], args[1]
    opts = {"--models": "", "--rounds": "5", "--runs": "10", "--threads": "1"}
    rest = args[2:]
    for i in range(0, len(rest), 2):
        if rest[i] not in opts or i + 1 >= len(rest):
            sys.exit(f"unknown or incomplete option {rest[i]}\n{__doc__}")
        opts[rest[i]] = rest[i + 1]
    wanted = set(filter(None, opts["--models"].split(",")))
    print(f"| model | default ms | off / default | fp16 / default | tuned / default | weights MB default / off / fp16 "
          f"| arena KB default / off | code KB default / off |")
    print("|---|---|---|---|---|---|---|---|")
    geo = {v: [] for v, _ in VARIANTS[1:]}
    for name, path in models(build):
        if wanted and name not in wanted:
            continue
        sos, js = [], []
        for v, extra in VARIANTS:
            out = os.path.join(build, "speed_bytes", v, name)
            flags = extra if extra is not None else ["--tuning", tuning]
            r = subprocess.run([os.path.join(build, "tinyrt-compile"), path, "-o", out, "--name", "model"] + flags,
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{name} {v}: {r.stderr}")
            sos.append(os.path.join(out, "model.so"))
            with open(os.path.join(out, "model.json")) as f:
                js.append(json.load(f))
        r = subprocess.run([os.path.join(build, "ab_bench"), "--threads", opts["--threads"], "--rounds",
                            opts["--rounds"], "--runs", opts["--runs"]] + sos, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{name}: {r.stderr}")
        med = [float(l.split("median")[1].split()[0]) for l in r.stdout.splitlines() if " median " in l]
        ratio = [m / med[0] for m in med]
        for (v, _), x in zip(VARIANTS[1:], ratio[1:]):
            geo[v].append(x)
        mb = lambda j: j["weights_bytes"] / 1e6
        print(f"| {name} | {med[0]:.4g} | {ratio[1]:.3f} | {ratio[2]:.3f} | {ratio[3]:.3f} | "
              f"{mb(js[0]):.3g} / {mb(js[1]):.3g} / {mb(js[2]):.3g} | {js[0]['arena_bytes'] / 1e3:.0f} / "
              f"{js[1]['arena_bytes'] / 1e3:.0f} | {js[0]['code_bytes'] / 1e3:.0f} / {js[1]['code_bytes'] / 1e3:.0f} |",
              flush=True)
    g = {v: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else 0 for v, xs in geo.items()}
    print(f"| **geomean** | | {g['off']:.3f} | {g['fp16']:.3f} | {g['tuned']:.3f} | | | |")


if __name__ == "__main__":
    main()
