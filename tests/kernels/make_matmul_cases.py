#!/usr/bin/python3
"""Products of two activations (MatMul whose B is computed, as attention's
Q K^T and P V) through the GEMM emitter with B packed at run time
(GemmSpec::arena_weights), against float64 references: rank 3 and rank 4
(two batch axes), one row, one input channel (K = 1), no input
channel (K = 0: zeros), output widths that
are not a multiple of any vector width and span several register tiles,
prime row counts, operands that are transposes (the head split of
attention), a scale and a mask fused as the epilogue, and a full
attention head (scores, Softmax, weights times V). A 2-D product of two
activations stays a loop kernel and is kept here for that path.

Usage: make_matmul_cases.py OUTDIR

Writes OUTDIR/<case>/model.onnx and test_data_set_0/{input_K,output_0}.pb
(the ONNX backend-test layout)."""
import sys

import numpy as np
from onnx import helper, numpy_helper

from make_reduce_cases import save  # same directory


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, np.float32)))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(13)
    rand = lambda *s: rng.standard_normal(s).astype(np.float32)
    f64 = lambda a: a.astype(np.float64)
    mm = lambda a, b: f64(a) @ f64(b)
    # (name, A shape, B shape)
    for name, sa, sb in (("rank3_odd", (3, 31, 16), (3, 16, 37)),
                         ("rank3_wide", (2, 7, 9), (2, 9, 70)),
                         ("rank4_two_batch_axes", (2, 3, 7, 5), (2, 3, 5, 11)),
                         ("k1", (2, 9, 1), (2, 1, 6)),
                         ("one_row", (5, 1, 19), (5, 19, 23)),
                         ("one_column", (2, 13, 8), (2, 8, 1)),
                         ("batch1_long_k", (1, 6, 203), (1, 203, 17)),
                         ("k0", (2, 3, 0), (2, 0, 4))):  # sums over nothing: zeros
        a, b = rand(*sa), rand(*sb)
        save(out, f"matmul_{name}", [helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", a), ("b", b)], mm(a, b))
    # Attention's head split: Q, K, V [seq, heads, d] transposed to
    # [heads, seq, d] (K to [heads, d, seq]); scores scaled, a mask added.
    seq, heads, d = 23, 3, 8
    q, k, v, mask = rand(seq, heads, d), rand(seq, heads, d), rand(seq, heads, d), rand(heads, seq, seq)
    qh, kh, vh = (f64(t).transpose(1, 0, 2) for t in (q, k, v))
    scores = qh @ kh.transpose(0, 2, 1) / np.sqrt(d) + f64(mask)
    save(out, "matmul_attention_scores",
         [helper.make_node("Transpose", ["q"], ["qh"], perm=[1, 0, 2]),
          helper.make_node("Transpose", ["k"], ["kt"], perm=[1, 2, 0]),
          helper.make_node("MatMul", ["qh", "kt"], ["s"]), const("scale", np.sqrt(d)),
          helper.make_node("Div", ["s", "scale"], ["ss"]), helper.make_node("Add", ["ss", "mask"], ["y"])],
         [("q", q), ("k", k), ("mask", mask)], scores)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    save(out, "matmul_attention_head",
         [helper.make_node("Transpose", ["q"], ["qh"], perm=[1, 0, 2]),
          helper.make_node("Transpose", ["k"], ["kt"], perm=[1, 2, 0]),
          helper.make_node("Transpose", ["v"], ["vh"], perm=[1, 0, 2]),
          helper.make_node("MatMul", ["qh", "kt"], ["s"]), const("scale", np.sqrt(d)),
          helper.make_node("Div", ["s", "scale"], ["ss"]), helper.make_node("Add", ["ss", "mask"], ["sm"]),
          helper.make_node("Softmax", ["sm"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "vh"], ["o"]),
          helper.make_node("Transpose", ["o"], ["y"], perm=[1, 0, 2])],
         [("q", q), ("k", k), ("v", v), ("mask", mask)], (p @ vh).transpose(1, 0, 2))
    a, b = rand(11, 6), rand(6, 13)
    save(out, "matmul_2d_loop", [helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", a), ("b", b)], mm(a, b))


if __name__ == "__main__":
    main()
