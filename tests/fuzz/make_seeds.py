#!/usr/bin/python3
"""Writes the fuzz targets' seeds (generated, never committed):

  OUTDIR/import/       ONNX's node test models and the hostile corpus
                       (tests/hostile/make_cases.py), each up to 64 KiB
                       (fuzz_import's -max_len)
  OUTDIR/import.dict   a libFuzzer dictionary: the op types, attribute names
                       and domains of those models
  OUTDIR/runtime_api/  OUTDIR/compile_run/  OUTDIR/fold/
                       fixed pseudo-random inputs (the harnesses read their
                       choices from the bytes; every byte string is valid)
                       and the inputs that found defects (REGRESSIONS)

    tests/fuzz/make_seeds.py OUTDIR NODE_TEST_DIR
"""
import base64, os, random, shutil, subprocess, sys, warnings

import onnx

warnings.simplefilter("ignore")  # onnx.load of the malformed protobufs of the hostile corpus

OUT, NODE = sys.argv[1], sys.argv[2]
MAX = 64 << 10
HERE = os.path.dirname(os.path.abspath(__file__))

imp = os.path.join(OUT, "import")
shutil.rmtree(imp, ignore_errors=True)
os.makedirs(imp)
words = set()


def add(path, name):
    if os.path.getsize(path) > MAX:
        return
    shutil.copyfile(path, os.path.join(imp, name))
    try:
        m = onnx.load(path, load_external_data=False)
    except Exception:
        return
    graphs = [m.graph]
    while graphs:
        g = graphs.pop()
        for n in g.node:
            words.add(n.op_type)
            if n.domain:
                words.add(n.domain)
            for a in n.attribute:
                words.add(a.name)
                graphs.extend([a.g] if a.HasField("g") else [])
                graphs.extend(a.graphs)


for case in sorted(os.listdir(NODE)):
    p = os.path.join(NODE, case, "model.onnx")
    if os.path.exists(p):
        add(p, f"node-{case}.onnx")
hostile = os.path.join(OUT, "hostile")
subprocess.run([sys.executable, os.path.join(HERE, "..", "hostile", "make_cases.py"), hostile], check=True,
               stdout=subprocess.DEVNULL)
corpus = os.path.join(hostile, "corpus")
for f in sorted(os.listdir(corpus)):
    if f.endswith(".onnx"):
        add(os.path.join(corpus, f), f"hostile-{f}")

with open(os.path.join(OUT, "import.dict"), "w") as f:
    for w in sorted(words):
        if w and all(32 <= ord(c) < 127 and c not in '"\\' for c in w):
            f.write(f'"{w}"\n')

rng = random.Random(8)
for target, count, lo, hi in (("runtime_api", 64, 8, 600), ("compile_run", 48, 4, 160), ("fold", 48, 8, 200)):
    d = os.path.join(OUT, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for i in range(count):
        with open(os.path.join(d, f"seed-{i:03d}"), "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(rng.randrange(lo, hi))))

# Inputs that found defects (fixed), kept as seeds so that every fuzz run
# replays them first.
REGRESSIONS = {
    "compile_run": [
        # MatMul of two computed operands with K = 0 (A [1,2,0], B [1,0,3])
        # reached the GEMM over run-time weights, which packs nothing.
        "yCbWWbbQdYbf9/9AC5WVykaIM68sLB0bB04b3E3r1hsM9tR9spn7/Vlhis1V4/bdJqjuII3dS0ujrw==",
        # Pow(x, NaN) with x = 0 gave inf (0^y's special case took NaN for y < 0).
        "+5qKve1op+hL4K3lMR1EaYj2+o65+s4gizqZPSMpVmcqrmOP3/nFpkB0",
        # TopK, Gemm with alpha = beta = 0, Div: 0 * sum was -0 through the
        # interpreter, +0 through the GEMM (alpha folded into the weights).
        "jjkxXSbMzMzMzMzMcHXBgjSg5eVTcXVlZXotZeXl5eXl5eXl5X4dv0pvMXOvEnVyY2UyX2NoZWNr83Vt",
    ],
    "fold": [
        # Conv of two rank-1 Ranges: the weight's spatial sizes were sliced
        # from dimension 2 before any rank check (std::length_error).
        "Mh9AQEUEW2j5w57K3ayP6ALG8b2eLO2mh/xUFcMRvbPE7pvAfq1NJlPZpsI0qObOHyJfhwVyDhTJNyX19vEbKvEQnqmwbaR+SJv0dz3sEmwWuL8WiPtvoZCRaWFV162ZMsTp0UNNm8rb+vSbzAAAAAD3AAAPPNB8FZmUiEc9znUYSt1FBFueNsNoGqyP6ALG8etu6JileVSiBEE0mu2JvvloFoj7b6GQkWlhVdetmTLE6dFDTaV5VKIEQTSa7Ym+Lg5oVA==",
    ],
}
for target, inputs in REGRESSIONS.items():
    for i, b64 in enumerate(inputs):
        with open(os.path.join(OUT, target, f"regression-{i:03d}"), "wb") as f:
            f.write(base64.b64decode(b64))

print(f"{len(os.listdir(imp))} import seeds, {len(words)} dictionary words in {OUT}")
