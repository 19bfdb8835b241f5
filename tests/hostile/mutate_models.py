#!/usr/bin/python3
"""Mutates the attributes and input dimensions of ONNX's node test models and
runs tinyrt-compile on each variant, reporting crashes (signals), internal
errors and time-outs. A campaign, not a CI test: its findings become cases of
tests/hostile/ (make_corpus.py).

    tests/hostile/mutate_models.py build/tinyrt-compile OUTDIR [--limit N] [--seed S]
"""
import argparse, copy, glob, os, random, subprocess, sys

import onnx

INTS = [0, -1, 1, 2**31, 2**32, 2**62, -(2**62), 7]


def variants(m, rng):
    g = m.graph
    for ni, node in enumerate(g.node):
        for ai, a in enumerate(node.attribute):
            if a.type == onnx.AttributeProto.INT:
                for v in INTS:
                    mm = copy.deepcopy(m)
                    mm.graph.node[ni].attribute[ai].i = v
                    yield f"n{ni}.{a.name}={v}", mm
            elif a.type == onnx.AttributeProto.INTS and len(a.ints):
                for k in range(len(a.ints)):
                    for v in rng.sample(INTS, 3):
                        mm = copy.deepcopy(m)
                        mm.graph.node[ni].attribute[ai].ints[k] = v
                        yield f"n{ni}.{a.name}[{k}]={v}", mm
                mm = copy.deepcopy(m)
                del mm.graph.node[ni].attribute[ai].ints[-1]
                yield f"n{ni}.{a.name}=short", mm
                mm = copy.deepcopy(m)
                mm.graph.node[ni].attribute[ai].ints.extend([1, 1])
                yield f"n{ni}.{a.name}=long", mm
            elif a.type == onnx.AttributeProto.FLOAT:
                for v in [0.0, -1.0, float("nan"), float("inf"), 1e30]:
                    mm = copy.deepcopy(m)
                    mm.graph.node[ni].attribute[ai].f = v
                    yield f"n{ni}.{a.name}={v}", mm
    for ii, vi in enumerate(g.input):
        dims = vi.type.tensor_type.shape.dim
        for k in range(len(dims)):
            for v in [0, 1, 2**31, 3 * 2**61]:
                mm = copy.deepcopy(m)
                mm.graph.input[ii].type.tensor_type.shape.dim[k].dim_value = v
                yield f"in{ii}.dim{k}={v}", mm
    for ti, t in enumerate(g.initializer):
        if t.dims:
            mm = copy.deepcopy(m)
            mm.graph.initializer[ti].dims[0] = 0
            yield f"init{ti}.dim0=0", mm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("outdir")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.outdir, exist_ok=True)
    found = {"crash": 0, "internal": 0, "timeout": 0, "ok": 0, "error": 0}
    n = 0
    for d in sorted(glob.glob(os.path.join(args.data, "*"))):
        path = os.path.join(d, "model.onnx")
        if not os.path.exists(path):
            continue
        m = onnx.load(path)
        for what, mm in variants(m, rng):
            n += 1
            if args.limit and n > args.limit:
                break
            f = os.path.join(args.outdir, "cur.onnx")
            with open(f, "wb") as fh:
                fh.write(mm.SerializeToString())
            try:
                r = subprocess.run([args.compiler, f, "-o", os.path.join(args.outdir, "out"), "--target", "host"],
                                   capture_output=True, timeout=args.timeout, text=True, errors="replace")
                out = r.stdout + r.stderr
                if r.returncode < 0 or r.returncode >= 128:
                    kind = "crash"
                elif "internal error" in out:
                    kind = "internal"
                else:
                    kind = "ok" if r.returncode == 0 else "error"
            except subprocess.TimeoutExpired:
                kind, out = "timeout", ""
            found[kind] += 1
            if kind in ("crash", "internal", "timeout"):
                name = f"{kind}-{os.path.basename(d)}-{what}".replace("/", "_")[:150]
                with open(os.path.join(args.outdir, name + ".onnx"), "wb") as fh:
                    fh.write(mm.SerializeToString())
                last = out.strip().splitlines()[-1] if out.strip() else ""
                print(f"{kind}: {os.path.basename(d)} {what} rc={getattr(r, 'returncode', None) if kind != 'timeout' else 'timeout'} {last[:200]}", flush=True)
        if args.limit and n > args.limit:
            break
    print(f"{n} variants: " + ", ".join(f"{k} {v}" for k, v in found.items()), flush=True)
    return 1 if found["crash"] or found["internal"] or found["timeout"] else 0


if __name__ == "__main__":
    sys.exit(main())
