#!/usr/bin/python3
"""Writes a model of one 3x3 convolution (stride 1, "same" padding, float,
seeded weights), to time one layer geometry against ONNX Runtime:

    bench/conv_layer.py OUT.onnx CHANNELS SIZE [--out-channels N] [--explicit-pad] [--layers N]
    build/tinyrt-perf OUT.onnx --winograd off --profile
    build/ort_count/ort_time OUT.onnx 30 --time 1

Input [1, CHANNELS, SIZE, SIZE]; output channels CHANNELS unless given.
--explicit-pad: a Pad node before an unpadded Conv instead of the Conv's
own pads (the padded copy then makes every GEMM tile an interior one).
--layers N: N such convolutions in a chain, each with weights of its own
(CHANNELS in and out), so that each layer's weights come from memory as
in a deep model instead of staying in the caches between runs.
bench/RESULTS.md's per-layer tables were written with it."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("channels", type=int)
    ap.add_argument("size", type=int)
    ap.add_argument("--out-channels", type=int)
    ap.add_argument("--explicit-pad", action="store_true")
    ap.add_argument("--layers", type=int, default=1)
    a = ap.parse_args()
    c, oc, hw = a.channels, a.out_channels or a.channels, a.size
    if a.layers > 1 and (a.explicit_pad or oc != c):
        ap.error("--layers takes neither --explicit-pad nor other output channels")
    rng = np.random.default_rng(0)
    inits, nodes, x = [], [], "x"
    if a.explicit_pad:
        inits.append(numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"))
        nodes.append(helper.make_node("Pad", ["x", "pads"], ["xp"]))
        x = "xp"
    pads = {} if a.explicit_pad else {"pads": [1, 1, 1, 1]}
    for i in range(a.layers):
        w = (rng.standard_normal((oc, c, 3, 3)) * 0.05).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        y = "y" if i == a.layers - 1 else f"y{i}"
        nodes.append(helper.make_node("Conv", [x, f"w{i}"], [y], kernel_shape=[3, 3], **pads))
        x = y
    g = helper.make_graph(nodes, "conv_layer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, oc, hw, hw])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), a.out)

if __name__ == "__main__":
    main()
