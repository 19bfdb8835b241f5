#!/usr/bin/python3
"""Measures the float GEMM register tiles of a target layer by layer and
proposes the target's tile table (compiler_host/target/target.cpp,
gemm_tile_table): on ARM targets by executed guest instructions under qemu,
on x86 targets (run natively) by each kernel's median time over --runs runs,
one configuration at a time (--jobs 1; compare runs of one sitting only:
these VMs drift).

  bench/tune_tiles.py [--target armv7-neon] [--tiles 3,2 4,1 ...]
                      [--jobs 2] [--runs 30] [--data FILE] [MODEL...]

For every model and candidate tile it runs
  tinyrt-perf MODEL --target T --profile --json --gemm-tile MR,NV --winograd W
for W in off and auto (Winograd's GEMMs are tiled too), keeps each GEMM
kernel's instructions per inference with the shape its tile was chosen for
(output channels per group, pixels per tiled row), and caches the raw
rows in --data (default build/tune_tiles-TARGET.json; delete it to
measure again). Then, for each cell of a coarse grid over (input channels
1 / 2-3 / 4+, the linear mode, output channels, row pixels), it sums the instructions of the cell's layers per
tile and keeps the cheapest tile where it saves at least MARGIN against the
target's own choice: the target's gemm_tile_table. It prints each layer's
best tile, the table, and per model the GEMM instructions with the
target's choice, with the table, with a table fitted without that model
(leave one out: what a model outside the measured set can expect), and
with the best tile of every layer.

Models: names from bench/models.sh (default: the six torchvision models
and the edge zoo), exported into build/models when missing.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_paths(names):
    env = dict(os.environ, BENCH_MODELS=os.environ.get("BENCH_MODELS", os.path.join(ROOT, "build/models")))
    script = ". bench/models.sh; for m in $MODELS; do model_path $m; done"
    out = subprocess.run(["sh", "-c", script, "models.sh"] + names, cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    names = names or [os.path.basename(os.path.dirname(p)) for p in out]
    return dict(zip(names, out))


def timed(target):
    return target == "host" or target.startswith("x86")


def measure(perf, path, target, tile, winograd, runs):
    """Per-kernel cost (instructions, or median ms on x86) with `tile` forced
    (None: the target's own choice)."""
    cmd = [perf, path, "--target", target, "--profile", "--json", "--runs", str(runs if timed(target) else 1),
           "--winograd", winograd]
    if tile:
        cmd += ["--gemm-tile", tile]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()[-300:]
    j = json.loads(r.stdout)
    metric = "median_ms" if timed(target) else "guest_instructions"
    rows = [{"label": k["label"], "node": k["nodes"][0] if k["nodes"] else "", "gemm": k.get("gemm"),
             "cost": k[metric]} for k in j["profile"]]
    return {"total": j[metric], "rows": rows}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="armv7-neon")
    ap.add_argument("--tiles", nargs="+", default=["3,2", "4,1", "5,1", "6,1", "7,1", "8,1", "2,2", "2,3", "2,4", "4,2"])
    ap.add_argument("--jobs", type=int, help="configurations measured at once (default: 2 on ARM, 1 on x86)")
    ap.add_argument("--runs", type=int, default=30, help="x86: runs per configuration (each kernel's median)")
    ap.add_argument("--data")
    ap.add_argument("--tinyrt", default=os.path.join(ROOT, "build"))
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    if a.jobs is None:
        a.jobs = 1 if timed(a.target) else 2
    perf = os.path.join(a.tinyrt, "tinyrt-perf")
    data_path = a.data or os.path.join(ROOT, "build", f"tune_tiles-{a.target}.json")
    data = json.load(open(data_path)) if os.path.exists(data_path) else {}
    paths = model_paths(a.models)
    jobs = []
    for m, p in paths.items():
        for w in ("off", "auto"):
            for t in a.tiles + ["default"]:
                key = f"{m}|{w}|{t}"
                if key not in data:
                    jobs.append((key, p, t, w))
    if jobs:
        print(f"measuring {len(jobs)} configurations on {a.target} ...", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = {}
        for key, p, t, w in jobs:
            futs[ex.submit(measure, perf, p, a.target, None if t == "default" else t, w, a.runs)] = key
        for n, f in enumerate(concurrent.futures.as_completed(futs), 1):
            res, err = f.result()
            key = futs[f]
            data[key] = res if res else {"error": err}
            print(f"  [{n}/{len(jobs)}] {key}: {res['total'] if res else err}", file=sys.stderr)
            json.dump(data, open(data_path, "w"))
    analyse(data, list(paths), a.tiles)


# Grid edges: a cell holds the layers with oc in (previous edge, edge] and
# rows likewise; coarse, so that each cell's choice rests on many layers.
OC_EDGES = [16, 64, 1 << 40]
ROW_EDGES = [4, 16, 64, 1 << 40]
# A cell takes a tile other than the target's own choice only when it saves
# at least this share of the cell's instructions.
MARGIN = 0.03


def fmt(x):  # instructions, or milliseconds
    return f"{x:.0f}" if x >= 100 else f"{x:.4g}"


def ic_class(ic):  # Target::tile_ic_class
    return 4 if ic >= 4 else 1 if ic == 1 else 3


def cell(oc, row, linear, ic):
    return (ic_class(ic), bool(linear), next(i for i, e in enumerate(OC_EDGES) if oc <= e),
            next(i for i, e in enumerate(ROW_EDGES) if row <= e))


def bounds(edges, i):
    lo = 0 if i == 0 else edges[i - 1]
    return lo, ("kAny" if edges[i] >= 1 << 40 else str(edges[i]))


def fit(complete, shapes, tiles, models):
    """cell -> (tile, its instructions / the default's, the default's) for the
    cells where a tile beats the target's choice by MARGIN over `models`' layers."""
    cells = {}
    for lk, v in complete.items():
        if lk[0] in models:
            acc = cells.setdefault(cell(*shapes[lk]), {t: 0.0 for t in tiles + ["default"]})
            for t in acc:
                acc[t] += v[t]
    table = {}
    for c, acc in cells.items():
        best = min(tiles, key=lambda t: acc[t])
        if acc[best] <= (1 - MARGIN) * acc["default"]:
            table[c] = (best, acc[best] / acc["default"], acc["default"])
    return table


def analyse(data, models, tiles):
    # layer -> {tile: instructions}, layer = (model, winograd mode, label, node)
    layers = {}
    shapes = {}
    for key, res in data.items():
        m, w, t = key.split("|")
        if m not in models or "rows" not in res or (t not in tiles and t != "default"):
            continue
        for r in res["rows"]:
            g = r["gemm"]
            if g:
                lk = (m, w, r["label"], r["node"])
                layers.setdefault(lk, {})[t] = r.get("cost", r.get("instructions"))  # older caches: instructions
                shapes[lk] = (g["oc_per_group"], g["row"], g["linear"], g["ic_per_group"])
    complete = {lk: v for lk, v in layers.items() if all(t in v for t in tiles + ["default"])}
    print(f"{len(complete)} GEMM layers measured with every tile ({len(layers) - len(complete)} incomplete)\n")
    print("| model | winograd | layer | oc | row | linear | ic | default | best | best / default |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for lk, v in sorted(complete.items()):
        oc, row, linear, ic = shapes[lk]
        best = min(tiles, key=lambda t: v[t])
        print(f"| {lk[0]} | {lk[1]} | {lk[2][:40]} | {oc} | {row} | {linear} | {ic} | {fmt(v['default'])} | {best} {fmt(v[best])} |"
              f" {v[best] / v['default']:.3f} |")
    table = fit(complete, shapes, tiles, models)
    print(f"\nThe table: cells where a tile saves >= {MARGIN:.0%} of the cell's cost against the target's"
          " own choice (other cells keep it)\n")
    for c in sorted(table):
        t, ratio, base = table[c]
        (lo_oc, hi_oc), (lo_row, hi_row) = bounds(OC_EDGES, c[2]), bounds(ROW_EDGES, c[3])
        print(f"  { {1: 'ic 1', 3: 'ic 2-3', 4: 'ic >= 4'}[c[0]] }, {'linear' if c[1] else 'rows'}: {lo_oc} < oc <= {hi_oc}, {lo_row} < row <= {hi_row}: {t} ({ratio:.3f} of {fmt(base)})")

    def total(tab, m):
        d = f = b = 0.0
        for lk, v in complete.items():
            if lk[0] == m and lk[1] == "auto":
                c = cell(*shapes[lk])
                d += v["default"]
                f += v[tab[c][0]] if c in tab else v["default"]
                b += min(v[t] for t in tiles)
        return d, f, b
    print("\nPer model, cost (instructions or ms) of its GEMM layers (winograd auto): the target's choice -> with the table"
          " -> with a table fitted without the model (leave one out) -> the best tile of every layer")
    for m in models:
        d, f, b = total(table, m)
        _, lo, _ = total(fit(complete, shapes, tiles, [x for x in models if x != m]), m)
        if d:
            print(f"  {m}: {fmt(d)} -> {fmt(f)} ({f / d:.3f}) -> {fmt(lo)} ({lo / d:.3f}) -> {fmt(b)} ({b / d:.3f})")
    print("\nC++ rows for gemm_tile_table {ic_class, linear, min_oc, max_oc, min_row, max_row, mr, nv} (a layer with min < x <= max):")
    for c in sorted(table):
        mr, nv = table[c][0].split(",")
        (lo_oc, hi_oc), (lo_row, hi_row) = bounds(OC_EDGES, c[2]), bounds(ROW_EDGES, c[3])
        print(f"      {{{c[0]}, {'true' if c[1] else 'false'}, {lo_oc}, {hi_oc}, {lo_row}, {hi_row}, {mr}, {nv}}},")


if __name__ == "__main__":
    main()
