#!/usr/bin/python3
"""ONNX Runtime's QOperator contrib ops (com.microsoft: QLinearAdd,
QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
QLinearConcat, QGemm, MatMulIntegerToFloat) against numpy references of
their definitions: inputs dequantized, the float op in float32 (Sigmoid
rounded from double), the result quantized (round half to even,
saturation). uint8 and int8, zero points at the extremes, broadcasting,
odd sizes, both QGemm outputs, channels-last pooling.

exact/: integer results bit for bit (each op standing alone computes its
parts op by op). near/: QGemm with a quantized output, which runs as the
int8 GEMM whose requantization is one multiply-add (docs/QUANTIZATION.md):
within one step, and the float-output products (float rounding).

Usage: make_contrib_quant_cases.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = np.float32
TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.float32: TensorProto.FLOAT}


def write(out_dir, name, node, inputs, inits, y):
    d = os.path.join(out_dir, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info(n, TYPES[a.dtype.type], list(a.shape)) for n, a in inputs],
                          [helper.make_tensor_value_info("y", TYPES[y.dtype.type], list(y.shape))],
                          [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    onnx.save(m, os.path.join(out_dir, name, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    with open(os.path.join(d, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


def rand(rng, shape, t):
    info = np.iinfo(t)
    return rng.integers(info.min, info.max + 1, size=shape).astype(t)


def dq(x, s, z):
    return ((x.astype(np.int32) - np.int32(z)).astype(F) * F(s)).astype(F)


def q(v, s, z, t):
    info = np.iinfo(t)
    return np.clip(np.rint((v / F(s)).astype(F)) + F(z), info.min, info.max).astype(t)


def binary_cases(out, rng):
    # (name, op, type, A shape, B shape, B constant, zero points A B C, scales)
    for name, op, t, sa, sb, const_b, zs, ss in (
            ("qlinearadd_u8_broadcast", "Add", np.uint8, (2, 3, 5), (5,), True, (128, 7, 255), (0.05, 0.13, 0.11)),
            ("qlinearadd_s8_same", "Add", np.int8, (4, 9), (4, 9), False, (-128, 5, 127), (0.021, 0.017, 0.04)),
            ("qlinearmul_u8", "Mul", np.uint8, (3, 1, 7), (1, 4, 7), False, (0, 255, 100), (0.02, 0.03, 0.05)),
            ("qlinearmul_s8_scalar_b", "Mul", np.int8, (6, 5), (), True, (3, -2, 0), (0.1, 0.07, 0.3))):
        a, b = rand(rng, sa, t), rand(rng, sb, t)
        fa, fb = dq(a, ss[0], zs[0]), dq(b, ss[1], zs[1])
        y = q((fa + fb if op == "Add" else fa * fb).astype(F), ss[2], zs[2], t)
        ins = ["a", "as", "az", "b", "bs", "bz", "cs", "cz"]
        inits = [("as", F(ss[0])), ("az", t(zs[0])), ("bs", F(ss[1])), ("bz", t(zs[1])), ("cs", F(ss[2])), ("cz", t(zs[2]))]
        inputs = [("a", a)] + ([] if const_b else [("b", b)])
        if const_b:
            inits.append(("b", b))
        write(out, name, helper.make_node("QLinear" + op, ins, ["y"], domain="com.microsoft"), inputs, inits, y)
    return 4


def unary_cases(out, rng):
    n = 0
    for name, op, t, shape, zx, zy, sx, sy, alpha in (
            ("qlinearsigmoid_u8", "Sigmoid", np.uint8, (2, 37), 128, 0, 0.06, 1 / 255, None),
            ("qlinearsigmoid_s8", "Sigmoid", np.int8, (3, 4, 5), -3, -128, 0.1, 1 / 256, None),
            ("qlinearleakyrelu_u8", "LeakyRelu", np.uint8, (5, 11), 200, 30, 0.05, 0.04, 0.1),
            ("qlinearleakyrelu_s8_default_alpha", "LeakyRelu", np.int8, (4, 6), 0, -100, 0.2, 0.1, None)):
        x = rand(rng, shape, t)
        fx = dq(x, sx, zx)
        if op == "Sigmoid":
            f = (1 / (1 + np.exp(-fx.astype(np.float64)))).astype(F)
        else:
            a = F(0.01 if alpha is None else alpha)
            f = np.where(fx < 0, (a * fx).astype(F), fx).astype(F)
        y = q(f, sy, zy, t)
        attrs = {} if alpha is None else {"alpha": alpha}
        node = helper.make_node("QLinear" + op, ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", **attrs)
        write(out, name, node, [("x", x)], [("xs", F(sx)), ("xz", t(zx)), ("ys", F(sy)), ("yz", t(zy))], y)
        n += 1
    return n


def pool_cases(out, rng):
    n = 0
    # A power-of-two x_scale keeps every dequantized value and their sum
    # exact, so the mean does not depend on the summation order.
    for name, t, shape, last, zx, zy, sx, sy in (
            ("qlinearglobalaveragepool_u8", np.uint8, (2, 3, 5, 7), 0, 128, 3, 0.125, 0.07),
            ("qlinearglobalaveragepool_s8_channels_last", np.int8, (1, 4, 3, 6), 1, -5, 2, 0.0625, 0.03),
            ("qlinearglobalaveragepool_u8_1d", np.uint8, (2, 9, 13), 0, 0, 255, 0.25, 0.2)):
        x = rand(rng, shape, t)
        fx = dq(x, sx, zx)
        axes = tuple(range(1, len(shape) - 1)) if last else tuple(range(2, len(shape)))
        count = int(np.prod([shape[a] for a in axes]))
        m = (fx.astype(np.float64).sum(axis=axes, keepdims=True).astype(F) / F(count)).astype(F)
        y = q(m, sy, zy, t)
        node = helper.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft",
                                channels_last=last)
        write(out, name, node, [("x", x)], [("xs", F(sx)), ("xz", t(zx)), ("ys", F(sy)), ("yz", t(zy))], y)
        n += 1
    return n


def concat_cases(out, rng):
    t = np.uint8
    xs = [rand(rng, (2, c, 3), t) for c in (3, 1, 4)]
    params = [(0.05, 10), (0.2, 128), (0.013, 250)]
    sy, zy = 0.1, 90
    y = q(np.concatenate([dq(x, s, z) for x, (s, z) in zip(xs, params)], axis=1), sy, zy, t)
    ins, inits = ["ys", "yz"], [("ys", F(sy)), ("yz", t(zy))]
    for k, (s, z) in enumerate(params):
        ins += [f"x{k}", f"s{k}", f"z{k}"]
        inits += [(f"s{k}", F(s)), (f"z{k}", t(z))]
    node = helper.make_node("QLinearConcat", ins, ["y"], domain="com.microsoft", axis=-2)
    write(out, "qlinearconcat_u8_three_scales", node, [(f"x{k}", x) for k, x in enumerate(xs)], inits, y)
    return 1


def gemm_cases(exact, near, rng):
    n = 0
    for name, M, K, N, trans_b, per_col, bias, quant_out, alpha in (
            ("qgemm_u8_float_out_bias", 3, 37, 19, 1, True, "row", False, 1.0),
            ("qgemm_u8_quant_out", 5, 16, 8, 0, False, "full", True, 0.5),
            ("qgemm_u8_quant_out_no_c", 4, 9, 13, 1, True, None, True, 1.0)):
        a = rand(rng, (M, K), np.uint8)
        b = rng.integers(-127, 128, size=(N, K) if trans_b else (K, N)).astype(np.int8)
        az, sa = 131, F(0.02)
        sb = (rng.uniform(0.005, 0.02, N) if per_col else np.array(0.01)).astype(F)
        bk = b.T if trans_b else b
        acc = (a.astype(np.int64) - az) @ bk.astype(np.int64)
        col = (F(alpha) * sa * sb).astype(F)
        ins = ["a", "as", "az", "b", "bs", ""]
        inits = [("as", sa), ("az", np.uint8(az)), ("b", b), ("bs", sb)]
        c = None
        if bias:
            c = rng.integers(-5000, 5000, size=(N,) if bias == "row" else (M, N)).astype(np.int32)
            ins.append("c")
            inits.append(("c", c))
            acc = acc + c
        yf = (acc.astype(np.float64) * col.astype(np.float64)).astype(F)
        if quant_out:
            ins = ins + ([] if bias else [""]) + ["ys", "yz"]
            inits += [("ys", F(0.05)), ("yz", np.uint8(100))]
            y = q(yf, 0.05, 100, np.uint8)
        else:
            y = yf
        node = helper.make_node("QGemm", ins, ["y"], domain="com.microsoft", transB=trans_b, alpha=alpha)
        write(near, name, node, [("a", a)], inits, y)
        n += 1
    for name, sa_shape, per_col, zeros, bias in (("matmulintegertofloat_u8_per_column_bias", (2, 3, 7), True, True, True),
                                                  ("matmulintegertofloat_u8_tensor", (4, 6), False, False, False)):
        K, N = sa_shape[-1], 5
        a = rand(rng, sa_shape, np.uint8)
        b = rng.integers(-128, 128, size=(K, N)).astype(np.int8)
        sa, sb = F(0.03), (rng.uniform(0.01, 0.03, N) if per_col else np.array(0.02)).astype(F)
        az, bz = (np.uint8(120), (np.zeros(N, np.int8) if per_col else np.int8(0))) if zeros else (None, None)
        fa = dq(a, sa, az if az is not None else 0)
        y = (fa.astype(np.float64) @ (b.astype(np.float64) * sb.astype(np.float64))).astype(F)
        ins = ["a", "b", "as", "bs"] + (["az", "bz"] if zeros else [])
        inits = [("b", b), ("as", sa), ("bs", sb)] + ([("az", az), ("bz", bz)] if zeros else [])
        if bias:
            bv = rng.standard_normal(N).astype(F)
            y = (y + bv).astype(F)
            ins = ins + ([] if zeros else ["", ""]) + ["bias"]
            inits.append(("bias", bv))
        node = helper.make_node("MatMulIntegerToFloat", ins, ["y"], domain="com.microsoft")
        write(near, name, node, [("a", a)], inits, y)
        n += 1
    return n


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    exact, near = os.path.join(sys.argv[1], "exact"), os.path.join(sys.argv[1], "near")
    rng = np.random.default_rng(50)
    n = binary_cases(exact, rng) + unary_cases(exact, rng) + pool_cases(exact, rng) + concat_cases(exact, rng)
    m = gemm_cases(exact, near, rng)
    print(f"wrote {n} exact and {m} near contrib-op cases to {sys.argv[1]}")


if __name__ == "__main__":
    main()
