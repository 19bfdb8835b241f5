#!/usr/bin/python3
"""The integrity fields end to end (ctest compiler/integrity).

  check_integrity.py TINYRT_COMPILE WORKDIR TARGET=RUNNER [TARGET=RUNNER...]

RUNNER is a command line (an emulator and its options, then the runner) of
tinyrt-runner for TARGET. For a small model written here (an Add of a
constant, a GEMM whose weights are packed):

- the model hash tinyrt-compile prints equals NAME.h's NAME_MODEL_HASH and
  NAME.json's "model_hash", and is FNV-1a 64 of the ONNX file's bytes
  followed by NAME.json's "compile_options" (the options hash is that text's,
  the source checksum the file's);
- compiling again with the same options gives the same hash, the same
  weights checksum and the same object, byte for byte;
- each option that shapes the output (name, target, input shape, GEMM tile,
  a binding, the serial threshold) and a one-value change of the model
  gives another hash; a limit (which only refuses models) does not;
- a model of small steps runs them on the calling thread (the JSON's
  "serial"), and --serial-step-ops 0 shares them;
- for each TARGET, the runner's --verify passes on the compiled .so and
  prints the JSON's weights checksum, and fails with TINYRT_ERR_CORRUPT's
  message naming the expected and found checksums once one byte of a
  weight is flipped in a copy of the .so.
"""
import json
import os
import re
import shlex
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

COMPILE, WORK = sys.argv[1], sys.argv[2]
RUNNERS = [a.split("=", 1) for a in sys.argv[3:]]
os.makedirs(WORK, exist_ok=True)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def fnv1a64(data, h=0xcbf29ce484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


# y = (x + C) @ W + B, x: [N, 64] with a symbolic batch. The GEMM reads its
# packed weights from an array on every target (a small constant like C may
# be folded into the code instead); the test finds one of W's values in the
# .so to flip it.
C = (np.arange(64, dtype=np.float32) * 0.001 + 1234.5).astype(np.float32)
rng = np.random.default_rng(7)
W = rng.standard_normal((64, 32)).astype(np.float32)
B = rng.standard_normal(32).astype(np.float32)


def write_model(path, c, w=W):
    g = h.make_graph(
        [h.make_node("Add", ["x", "C"], ["a"]), h.make_node("MatMul", ["a", "W"], ["m"]),
         h.make_node("Add", ["m", "B"], ["y"])],
        "integrity", [h.make_tensor_value_info("x", T.FLOAT, ["N", 64])],
        [h.make_tensor_value_info("y", T.FLOAT, ["N", 32])],
        [nh.from_array(c, "C"), nh.from_array(w, "W"), nh.from_array(B, "B")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


model = os.path.join(WORK, "model.onnx")
write_model(model, C)
# One weight of W changed: the GEMM reads W from its packed array on every
# target, so the weights checksum must change (a change in C may not: where
# the loop kernel over C is unrolled, as for AVX2 with one task, LLVM folds
# C into the code and it is no weight).
W2 = W.copy()
W2[17, 5] += 1
model2 = os.path.join(WORK, "model2.onnx")
write_model(model2, C, W2)


def compile_model(tag, path=model, target="host", name="net", shape="x=1,64", extra=()):
    out = os.path.join(WORK, tag)
    cmd = [COMPILE, path, "-o", out, "--target", target, "--name", name, *extra]
    if shape:
        cmd += ["--input-shape", shape]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("tinyrt-compile failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    m = re.search(r"; model hash (0x[0-9a-f]{16})\n", r.stdout)
    if not m:
        sys.exit("no model hash in the summary: " + r.stdout)
    with open(os.path.join(out, name + ".json")) as f:
        js = json.load(f)
    with open(os.path.join(out, name + ".h")) as f:
        header = f.read()
    with open(os.path.join(out, name + ".o"), "rb") as f:
        obj = f.read()
    return {"dir": out, "printed": m.group(1), "json": js, "header": header, "obj": obj, "name": name}


def macro(a, what):
    m = re.search(r"#define %s_%s UINT64_C\((0x[0-9a-f]{16})\)" % (a["name"].upper(), what), a["header"])
    return m.group(1) if m else None


base = compile_model("base")
j = base["json"]
onnx_bytes = open(model, "rb").read()
text = j["compile_options"].encode()
print("compile options:\n  " + j["compile_options"].rstrip("\n").replace("\n", "\n  "))
print("model hash " + base["printed"])
check(base["printed"] == j["model_hash"] == macro(base, "MODEL_HASH"), "printed hash = NAME.json = NAME.h")
check(int(j["source_checksum"], 16) == fnv1a64(onnx_bytes), "source checksum = FNV-1a 64 of the file")
check(j["source_checksum"] == macro(base, "SOURCE_CHECKSUM"), "NAME.h source checksum")
check(int(j["options_hash"], 16) == fnv1a64(text), "options hash = FNV-1a 64 of compile_options")
check(int(j["model_hash"], 16) == fnv1a64(onnx_bytes + text), "model hash = FNV-1a 64 of file + compile_options")
check(j["weights_checksum"] == macro(base, "WEIGHTS_CHECKSUM"), "NAME.h weights checksum")
check("#define NET_WEIGHTS_BYTES %du" % j["weights_bytes"] in base["header"], "NAME.h weights bytes")

again = compile_model("again")
check(again["printed"] == base["printed"], "same model and options: same model hash")
check(again["json"]["weights_checksum"] == j["weights_checksum"], "same weights checksum")
check(again["obj"] == base["obj"], "same object, byte for byte")

variants = {
    "another --name": compile_model("name", name="net2"),
    "another --target": compile_model("target", target="aarch64-neon"),
    "another --input-shape": compile_model("shape", shape="x=2,64"),
    "a --gemm-tile": compile_model("tile", extra=["--gemm-tile", "2,1"]),
    "a --bind": compile_model("bind", shape=None, extra=["--bind", "x=" + ",".join(["0.5"] * 64)]),
    "a --serial-step-ops": compile_model("serial", extra=["--serial-step-ops", "0"]),
    "one weight changed in the model": compile_model("model2", path=model2),
}
seen = {base["printed"]}
for what, a in variants.items():
    check(a["printed"] not in seen, what + ": another model hash (" + a["printed"] + ")")
    seen.add(a["printed"])
check(variants["one weight changed in the model"]["json"]["weights_checksum"] != j["weights_checksum"],
      "one weight changed: another weights checksum")
# A batch of 4096 rows gives the kernels several tasks. Under a threshold
# above the steps' average operations each runs its tasks on the calling
# thread (one task in the descriptor); under the host's own (their average
# is above it) or 0, none does.
big = compile_model("serial-default", shape="x=4096,64")["json"]["fusion_groups"]
serial = compile_model("serial-all", shape="x=4096,64", extra=["--serial-step-ops", "1000000000"])["json"]["fusion_groups"]
shared = compile_model("serial-0", shape="x=4096,64", extra=["--serial-step-ops", "0"])["json"]["fusion_groups"]
check(any(g["tasks"] > 1 for g in big), "4096 rows: a kernel with several tasks")
check(all(g["serial"] == (g["tasks"] > 1) for g in serial), "a threshold above the average: every step of several tasks serial")
check(not any(g["serial"] for g in big + shared), "the host's threshold or 0: no step serial")
check([g["ops"] for g in big] == [g["ops"] for g in serial] and all(g["ops"] > 1 for g in big),
      "the JSON gives each step's operations")
limit = compile_model("limit", extra=["--max-folded-bytes", "123456789"])
check(limit["printed"] == base["printed"], "a --max-* limit (refuses, never changes output): same hash")

# The runner's --verify on every target, then with one byte of C flipped.
for target, runner in RUNNERS:
    a = compile_model("run-" + target, target=target)
    so = os.path.join(a["dir"], "net.so")
    want = a["json"]["weights_checksum"]
    cmd = shlex.split(runner) + [so, "net_model", "--verify"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    print("  " + (r.stdout + r.stderr).strip())
    check(r.returncode == 0 and ("weights checksum " + want) in r.stdout, target + ": --verify passes")
    data = bytearray(open(so, "rb").read())
    at = -1
    for v in W.flatten():
        needle = v.tobytes()
        at = data.find(needle)
        if at >= 0 and data.find(needle, at + 1) < 0:
            break
        at = -1
    check(at >= 0, target + ": a weight of W found once in the .so")
    if at < 0:
        continue
    data[at + 1] ^= 0x04
    bad = os.path.join(a["dir"], "corrupt.so")
    open(bad, "wb").write(bytes(data))
    r = subprocess.run(shlex.split(runner) + [bad, "net_model", "--verify"], capture_output=True, text=True,
                       timeout=300)
    msg = (r.stdout + r.stderr).strip()
    print("  " + msg)
    check(r.returncode != 0 and "weights checksum mismatch" in msg and ("expected " + want) in msg and
          "found 0x" in msg,
          target + ": a flipped byte is TINYRT_ERR_CORRUPT naming both checksums")

if failures:
    sys.exit("check_integrity: %d failed" % len(failures))
print("check_integrity: all passed")
