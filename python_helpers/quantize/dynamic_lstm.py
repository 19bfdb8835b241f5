#!/usr/bin/python3
"""Rewrites every ai.onnx LSTM of a float ONNX model whose W and R are
initializers into com.microsoft.DynamicQuantizeLSTM, the op ONNX Runtime's
dynamic quantizer writes: W as [D, I, 4H] and R as [D, H, 4H], int8,
symmetric per column (zero point 0, scale = max|column| / 127, values in
[-127, 127]). No ONNX Runtime: onnx and numpy only.

Use: dynamic_lstm.py IN.onnx OUT.onnx [--reduce-range]

--reduce-range: values in [-63, 63] (7 bits, ONNX Runtime's reduce_range,
for x86 without VNNI, where tinyrt then multiplies them as bytes).

What it is for: ONNX Runtime's quantized-LSTM latency, the peer of
`tinyrt-compile --quantize dynamic` (bench/compare_quantized_lstm.sh), and
tinyrt's own import of the op (tests/kernels/make_rnn_cases.py)."""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


QMAX = 127


def quantize_columns(w):
    """w [D, K, N] float -> (int8 [D, K, N], scales [D, N]), per column."""
    m = np.abs(w).max(axis=1)
    scale = np.where(m > 0, m / float(QMAX), 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale[:, None, :]), -QMAX, QMAX).astype(np.int8)
    return q, scale


def rewrite(model):
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    done = 0
    for idx, n in enumerate(list(g.node)):
        if n.op_type != "LSTM" or n.domain not in ("", "ai.onnx"):
            continue
        if len(n.input) < 3 or n.input[1] not in inits or n.input[2] not in inits:
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if attrs.get("layout", 0) != 0:
            continue
        ins = list(n.input) + [""] * (8 - len(n.input))
        extra = []
        for which, name in (("W", n.input[1]), ("R", n.input[2])):
            w = numpy_helper.to_array(inits[name]).astype(np.float32)  # [D, 4H, K]
            q, scale = quantize_columns(np.transpose(w, (0, 2, 1)))
            base = f"{n.name or 'lstm'}_{which}"
            g.initializer.extend([
                numpy_helper.from_array(q, base + "_quantized"),
                numpy_helper.from_array(scale, base + "_scale"),
                numpy_helper.from_array(np.zeros(scale.shape, np.int8), base + "_zero_point"),
            ])
            extra.append((base + "_quantized", base + "_scale", base + "_zero_point"))
        ins[1], ins[2] = extra[0][0], extra[1][0]
        ins += [extra[0][1], extra[0][2], extra[1][1], extra[1][2]]
        attrs.pop("layout", None)
        node = helper.make_node("DynamicQuantizeLSTM", ins, list(n.output), name=n.name, domain="com.microsoft",
                                **attrs)
        g.node.remove(n)
        g.node.insert(idx, node)
        done += 1
    used = {i for n in g.node for i in n.input}
    for init in list(g.initializer):
        if init.name not in used:
            g.initializer.remove(init)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return done


def main():
    global QMAX
    if len(sys.argv) == 4 and sys.argv[3] == "--reduce-range":
        QMAX = 63
    elif len(sys.argv) != 3:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    n = rewrite(model)
    if n == 0:
        sys.exit(f"{sys.argv[1]}: no LSTM with constant W and R")
    onnx.save(model, sys.argv[2])
    print(f"{sys.argv[2]}: {n} LSTM(s) as com.microsoft.DynamicQuantizeLSTM")


if __name__ == "__main__":
    main()
