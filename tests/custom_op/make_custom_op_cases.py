#!/usr/bin/python3
"""Models with custom ops (tinyrt-compile --custom-op, docs/ABI.md) in
ONNX's backend-test layout, references computed with numpy; the C
implementations are custom_ops.c.

 * ok/custom_op_conv_cummax: x -> Conv (channels-last output, so the call
   needs a row-major copy) -> my.ops::CumMax (cumulative max along the last
   axis; output shape from value_info) -> Sub(., conv) -> my.ops::Twice
   (2 * x; declared with the :same rule) -> y. The conv output stays live
   across the call, so the arena plumbing is exercised.
 * fail/custom_op_fail: x -> Relu -> my.ops::Fail (returns status 1) -> Neg.

Usage: make_custom_op_cases.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write_case(out_dir, name, model, inputs, outputs):
    d = os.path.join(out_dir, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for k, (n, a) in enumerate(outputs):
        with open(os.path.join(d, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def conv2d(x, w, b, pad):
    n, ci, h, wd = x.shape
    co, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, co, h, wd))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j].astype(np.float64))
    return out + b.reshape(1, co, 1, 1)


def opsets():
    return [helper.make_opsetid("", 17), helper.make_opsetid("my.ops", 1)]


def ok_case(out_dir):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 3, 6, 7)).astype(np.float32)
    w = (rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("CumMax", ["c"], ["m"], domain="my.ops", name="cummax_node"),
        helper.make_node("Sub", ["m", "c"], ["d"], name="sub"),
        helper.make_node("Twice", ["d"], ["y"], domain="my.ops", name="twice_node"),
    ]
    graph = helper.make_graph(
        nodes, "custom_op_conv_cummax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 7])],
        # y's shape is symbolic, not declared: the :same rule gives it.
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "c", "h", "w"])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
        value_info=[helper.make_tensor_value_info("m", TensorProto.FLOAT, [1, 8, 6, 7])])
    model = helper.make_model(graph, opset_imports=opsets())
    c = conv2d(x, w, b, 1)
    y = 2 * (np.maximum.accumulate(c, axis=-1) - c)
    write_case(out_dir, "custom_op_conv_cummax", model, [("x", x)], [("y", y.astype(np.float32))])


def fail_case(out_dir):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Fail", ["r"], ["f"], domain="my.ops", name="fail_node"),
        helper.make_node("Neg", ["f"], ["y"], name="neg"),
    ]
    graph = helper.make_graph(nodes, "custom_op_fail",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
    model = helper.make_model(graph, opset_imports=opsets())
    write_case(out_dir, "custom_op_fail", model, [("x", x)], [("y", -np.maximum(x, 0))])


def main():
    out = sys.argv[1]
    ok_case(os.path.join(out, "ok"))
    fail_case(os.path.join(out, "fail"))


if __name__ == "__main__":
    main()
