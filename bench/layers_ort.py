#!/usr/bin/python3
"""Layer by layer against ONNX Runtime: joins tinyrt-perf --profile --json
with ORT's own per-node profile (bench/ort_count/ort_run.c, ORT_RUN_PROFILE)
by ONNX node name, and prints where the time differs most.

  bench/layers_ort.py TINYRT_PROFILE.json ORT_PROFILE.json [TOP]

Called by bench/layers_ort.sh, which runs both. A tinyrt kernel and an ORT
node (its name after ORT's fusions, minus the suffix "_token_N" of its QDQ
fusion or "_output_N_nchwc" of its NCHWc layout, which names a float
convolution after its output) are joined when the kernel computes part of
the node: one of its nodes is the node or a node tinyrt's QDQ lowering
derived from it (NAME_int__0, NAME_float__0, ...). Each connected group is one row (a pad
loop and its convolution's GEMM against ORT's QLinearConv; a GEMM with a
fused residual add against QLinearConv + QLinearAdd). Kernels no ORT node
maps to are summed as "tinyrt only", ORT nodes no kernel computes as "ORT
only". Times are medians over the runs, in microseconds.
"""
import collections
import json
import re
import sys


def ort_nodes(path):
    """{base name: (median µs, op)} of ORT's kernel events."""
    runs = collections.defaultdict(list)
    ops = {}
    for e in json.load(open(path)):
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        name = e["name"][: -len("_kernel_time")]
        runs[name].append(e["dur"])
        ops[name] = e.get("args", {}).get("op_name", "?")
    out = {}
    for name, d in runs.items():
        d.sort()
        base = re.sub(r"(_token_\d+|_output_\d+_nchwc|_nchwc)$", "", name)
        t, op = out.get(base, (0.0, ops[name]))
        out[base] = (t + d[len(d) // 2], op)
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    tinyrt = json.load(open(sys.argv[1]))
    ort = ort_nodes(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    kernels = tinyrt["profile"]
    # Kernels and ORT nodes joined where a kernel computes (part of) the node:
    # each connected group is one row (a pad loop and its convolution's GEMM
    # against ORT's QLinearConv; a GEMM with a fused residual add against
    # QLinearConv + QLinearAdd).
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, k in enumerate(kernels):
        find(("k", i))
        for n in k["nodes"]:
            for base in (n, re.sub(r"_(int|float|scaled|biased|quant\w*)__\d+$", "", n)):
                if base in ort:
                    parent[find(("k", i))] = find(("o", base))
    groups = collections.defaultdict(lambda: [[], []])  # root -> [kernels, ORT nodes]
    for i in range(len(kernels)):
        groups[find(("k", i))][0].append(i)
    ort_only = 0.0
    for base in ort:  # an ORT node no kernel joined is a root of its own, with no kernels
        r = find(("o", base))
        if r in groups:
            groups[r][1].append(base)
        else:
            ort_only += ort[base][0]
    tinyrt_only = sum(kernels[i]["median_ms"] * 1000 for ks, os in groups.values() if not os for i in ks)
    table = []
    for ks, names in groups.values():
        if not names:
            continue
        main_k = max(ks, key=lambda i: kernels[i]["median_ms"])
        k = kernels[main_k]
        tus = sum(kernels[i]["median_ms"] for i in ks) * 1000
        ous = sum(ort[n][0] for n in names)
        ops = sorted(set(ort[n][1] for n in names))
        geo = k.get("gemm", {}).get("tile_class", {})
        shape = "ic %s oc %s row %s" % (geo.get("ic"), geo.get("oc"), geo.get("row")) if geo else ""
        fam = "+".join(sorted(set(kernels[i]["family"] for i in ks), key=lambda f: f != k["family"]))
        label = ",".join(str(i) for i in sorted(ks))
        table.append((tus - ous, label, fam, shape, "+".join(ops), names[0], tus, ous))
    table.sort(reverse=True)
    t_sum = sum(k["median_ms"] for k in kernels) * 1000
    o_sum = sum(us for us, _ in ort.values())
    print("tinyrt kernels %.0f us (ORT-matched %.0f, tinyrt only %.0f); ORT nodes %.0f us (ORT only %.0f)"
          % (t_sum, t_sum - tinyrt_only, tinyrt_only, o_sum, ort_only))
    print("| kernel | family | geometry | ORT op | first ORT node | tinyrt us | ORT us | tinyrt / ORT | gap us |")
    print("|---|---|---|---|---|---|---|---|---|")
    for gap, i, fam, shape, ops, name, tus, ous in table[:top]:
        ratio = tus / ous if ous > 0 else float("inf")
        print("| %s | %s | %s | %s | %s | %.1f | %.1f | %.2f | %+.1f |"
              % (i, fam, shape, ops, name[-48:], tus, ous, ratio, gap))
    by_family = collections.defaultdict(lambda: [0.0, 0.0])
    for gap, i, fam, shape, ops, name, tus, ous in table:
        fam = fam.split("+")[0]
        by_family[fam][0] += tus
        by_family[fam][1] += ous
    print()
    print("| family | tinyrt us | ORT us | tinyrt / ORT |")
    print("|---|---|---|---|")
    for fam, (tus, ous) in sorted(by_family.items(), key=lambda x: -x[1][0]):
        print("| %s | %.0f | %.0f | %.2f |" % (fam, tus, ous, tus / ous if ous else float("inf")))


if __name__ == "__main__":
    main()
