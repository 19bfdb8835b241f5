#!/usr/bin/python3
"""A copy of a QDQ model with one weight of every int8 DequantizeLinear'd
initializer (rank >= 2) set to -128, which on x86 without VNNI sends the
layer to the widened form (vpmaddwd) instead of signed bytes
(docs/QUANTIZATION.md): the same layers and the same arithmetic, to time
one form against the other.

Use: force_widened.py IN.onnx OUT.onnx, then e.g.
  build/tinyrt-compile OUT.onnx -o /tmp/w --name m
  build/tinyrt-compile IN.onnx -o /tmp/s --name m
  build/ab_bench --threads 1 --rounds 6 --runs 10 /tmp/w/m.so /tmp/s/m.so
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    m = onnx.load(sys.argv[1])
    inits = {t.name: t for t in m.graph.initializer}
    n = 0
    for node in m.graph.node:
        if node.op_type == "DequantizeLinear" and node.input[0] in inits:
            t = inits[node.input[0]]
            a = numpy_helper.to_array(t)
            if a.dtype == np.int8 and a.ndim >= 2:
                a = a.copy()
                a.flat[0] = -128
                t.CopyFrom(numpy_helper.from_array(a, t.name))
                n += 1
    onnx.save(m, sys.argv[2])
    print(f"{n} weights with a -128")


if __name__ == "__main__":
    main()
