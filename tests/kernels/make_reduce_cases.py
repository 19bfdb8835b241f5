#!/usr/bin/python3
"""Loop-emitter reductions on odd shapes, against float64 references:
rows computed one output at a time with the reduction vectorized along its
innermost variable (reductions over the last axis, Softmax, LayerNorm,
Q K^T of attention), rows of several vectors at once (a reduction over an
outer axis, a MatMul of two activations), with extents that are not a
multiple of any vector width (so every vector loop has a remainder),
reductions over two axes, and NaN, which Max and Min must propagate
whatever order they combine in.

Usage: make_reduce_cases.py OUTDIR

Writes OUTDIR/<case>/model.onnx and test_data_set_0/{input_K,output_0}.pb
(the ONNX backend-test layout)."""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def save(out_dir, name, nodes, inputs, y, opset=13):
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.astype(np.float32), "y").SerializeToString())


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    rand = lambda *s: rng.standard_normal(s).astype(np.float32)
    for e in (5, 7, 9, 17, 33, 70):
        x = rand(3, 5, e)
        x64 = x.astype(np.float64)
        for op, ref in (("ReduceSum", np.sum), ("ReduceMean", np.mean), ("ReduceMax", np.max), ("ReduceMin", np.min)):
            xi = x.copy()
            if op in ("ReduceMax", "ReduceMin"):
                xi[1, 2, e // 2] = np.nan  # one row's answer is NaN, wherever the lane falls
            ins = [("x", xi)]
            nodes = [helper.make_node(op, ["x", "axes"] if op == "ReduceSum" else ["x"], ["y"], keepdims=1,
                                      **({} if op == "ReduceSum" else {"axes": [-1]}))]
            if op == "ReduceSum":
                nodes.insert(0, helper.make_node("Constant", [], ["axes"],
                                                 value=numpy_helper.from_array(np.array([-1], np.int64))))
            save(out, f"{op.lower()}_last_{e}", nodes, ins, ref(xi.astype(np.float64), axis=-1, keepdims=True))
        # Softmax and a LayerNormalization written as its ops.
        s = np.exp(x64 - x64.max(-1, keepdims=True))
        save(out, f"softmax_{e}", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", x)],
             s / s.sum(-1, keepdims=True))
        mu = x64.mean(-1, keepdims=True)
        var = ((x64 - mu) ** 2).mean(-1, keepdims=True)
        eps = np.float32(1e-5)
        nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1]),
                 helper.make_node("Sub", ["x", "m"], ["d"]),
                 helper.make_node("Mul", ["d", "d"], ["d2"]),
                 helper.make_node("ReduceMean", ["d2"], ["v"], axes=[-1]),
                 helper.make_node("Constant", [], ["eps"], value=numpy_helper.from_array(np.array(eps))),
                 helper.make_node("Add", ["v", "eps"], ["ve"]),
                 helper.make_node("Sqrt", ["ve"], ["sd"]),
                 helper.make_node("Div", ["d", "sd"], ["y"])]
        save(out, f"layernorm_{e}", nodes, [("x", x)], (x64 - mu) / np.sqrt(var + 1e-5))
        # Attention scores: Q [2, 6, e] times K^T, K [2, 7, e] (each key read
        # along its features).
        q, k = rand(2, 6, e), rand(2, 7, e)
        save(out, f"qkt_{e}", [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
                               helper.make_node("MatMul", ["q", "kt"], ["y"])],
             [("q", q), ("k", k)], q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1))
        # Weights times V: rows of several vectors at once, then the rest.
        a, v = rand(2, 6, e), rand(2, e, 37)
        save(out, f"av_{e}", [helper.make_node("MatMul", ["a", "v"], ["y"])], [("a", a), ("v", v)],
             a.astype(np.float64) @ v.astype(np.float64))
        # A reduction over an outer axis (the row is the last axis) and one
        # over two axes (the row is what is left).
        x3 = rand(2, e, 41)
        save(out, f"sum_axis1_{e}", [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1),
                                     helper.make_node("Constant", [], ["axes"],
                                                      value=numpy_helper.from_array(np.array([1], np.int64)))][::-1],
             [("x", x3)], x3.astype(np.float64).sum(1, keepdims=True))
        save(out, f"max_axes12_{e}", [helper.make_node("ReduceMax", ["x"], ["y"], axes=[1, 2], keepdims=1)],
             [("x", x3.transpose(0, 2, 1).copy())], x3.astype(np.float64).transpose(0, 2, 1).max((1, 2), keepdims=True))


if __name__ == "__main__":
    main()
