#!/usr/bin/python3
"""The compiler's refusals that are not about a model's content
(docs/SECURITY.md, docs/ABI.md "Names"):

  - memory running out, in tinyrt's code or inside LLVM, ends in exit 1 and
    an "out of memory" message, never a signal (a model of 256 MiB of folded
    weights, within every cap, compiled under address-space limits that run
    out before, during and after LLVM's code generation);
  - reserved names: --name stddef, --name TinyRT_net and --name __x are
    refused with exit 2 naming the rule; a model file called tinyrt.onnx or
    stdint.onnx compiles as model_tinyrt / model_stdint, with a warning.

    tests/compiler/check_refusals.py build/tinyrt-compile WORKDIR
"""
import os, resource, subprocess, sys

import onnx
from onnx import TensorProto as T, helper as h

compiler, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failures += not ok


def save(m, name):
    path = os.path.join(work, name)
    onnx.save(m, path)
    return path


def run(args, limit=None):
    def pre():
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return subprocess.run([compiler] + args, capture_output=True, text=True, preexec_fn=pre, timeout=600)


# 8192 x 8192 float32: exactly --max-folded-bytes and --max-weights-bytes.
n = 8192
g = h.make_graph([h.make_node("ConstantOfShape", ["s"], ["B"], value=h.make_tensor("v", T.FLOAT, [1], [0.5])),
                  h.make_node("MatMul", ["x", "B"], ["y"])], "g",
                 [h.make_tensor_value_info("x", T.FLOAT, [1, n])], [h.make_tensor_value_info("y", T.FLOAT, [1, n])],
                 [h.make_tensor("s", T.INT64, [2], [n, n])])
big = save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "big_weights.onnx")
for gib in (0.6, 1.0, 1.3):
    r = run([big, "-o", os.path.join(work, "big"), "--target", "x86-64-avx2"], int(gib * (1 << 30)))
    check(r.returncode == 1 and "error: out of memory" in r.stderr,
          f"256 MiB of weights under a {gib} GiB address space: exit {r.returncode}, {r.stderr.strip()[-160:]!r}")

relu = h.make_model(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                                 [h.make_tensor_value_info("y", T.FLOAT, [2])]), opset_imports=[h.make_opsetid("", 13)])
plain = save(relu, "plain.onnx")
for name, rule in (("stddef", "stddef.h would shadow"), ("TinyRT_net", "belong to the runtime"),
                   ("__x", "reserved to the C implementation")):
    r = run([plain, "-o", os.path.join(work, "n"), "--name", name])
    check(r.returncode == 2 and rule in r.stderr, f"--name {name}: exit {r.returncode}, {r.stderr.strip()!r}")
for stem in ("tinyrt", "stdint"):
    out = os.path.join(work, "out_" + stem)
    r = run([save(relu, stem + ".onnx"), "-o", out])
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    check(r.returncode == 0 and f"model_{stem}.h" in files and f"{stem}.h" not in files and
          f"the model is named 'model_{stem}'" in r.stderr, f"{stem}.onnx: exit {r.returncode}, files {files}")

print(f"{(8 - failures)} passed, {failures} failed")
sys.exit(1 if failures else 0)
