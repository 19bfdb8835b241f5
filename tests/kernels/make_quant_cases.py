#!/usr/bin/python3
"""Int8 / uint8 quantized cases: single integer ops whose outputs are
compared exactly, and the float QDQ patterns ONNX Runtime's quantizer
writes, with numpy references computed here.

Usage: make_quant_cases.py OUTDIR

Case families (opset 13, ONNX backend-test layout:
OUTDIR/<family>/<case>/model.onnx and test_data_set_0/{input_0,output_0}.pb):
  exact/qlinearconv_*    QLinearConv: u8 and s8 activations, x zero points
                         at the extremes and in the middle, per-tensor and
                         per-output-channel w_scale, u8/s8 y with extreme
                         zero points, odd channel counts, 1x1 3x3 5x1 1x7,
                         stride 2, (a)symmetric pads, dilation 2, group 2,
                         depthwise, 1-D, batch 2, with and without bias,
                         saturating scales, power-of-two scales whose
                         products hit .5 ties (round half to even)
  exact/convinteger_*    ConvInteger: int32 out; w_zero_point absent,
                         scalar 0 or per-channel zeros; x_zero_point absent
  exact/qlinearmatmul_*  QLinearMatMul: [M,K]x[K,N] and [2,M,K]x[K,N],
                         per-tensor and per-column b_scale
  exact/matmulinteger_*  MatMulInteger: int32 out
  winograd/*             3x3 stride-1 QLinearConv and ConvInteger, the int8 Winograd
                         F(2,3)'s layers (--winograd f2): odd channels
                         (int16 pairs padded), channels past a vector,
                         partial tiles, pads 0, 2 and asymmetric, one
                         input row, batch 2, x zero points at both ends,
                         inputs and weights at their end values and many
                         input channels (the largest sums)
  exact/table_*          a function of one u8/s8 element (SiLU and
                         hard-swish as QDQ leaves them, Tanh, Exp
                         saturating, Sigmoid to float), odd shapes, zero
                         points at the extremes, both extreme inputs
  qdq/qdq_*              float graphs: Q/DQ activations (u8, or s8
                         symmetric), DQ(int8) per-channel weights, DQ(int32)
                         biases, around Conv (3x3+Relu, 1x1, stride 2,
                         depthwise, 1-D, + MaxPool), a residual Add,
                         MatMul+Add and Gemm, conv -> SiLU / hard-swish
                         (u8, s8) -> conv; float output. Activation
                         scales are calibrated (min/max) on the float graph.
                         qdq/TOLERANCE holds the runner's --atol: an
                         integer implementation may differ by one output
                         step where the float value sits on a rounding tie.

Exact references: acc = sum (x - x_zp) * (w - w_zp) in int64 (padding adds
nothing), then for the QLinear ops, all in float32,
scale = (x_scale * w_scale) / y_scale, v = float32(acc) * scale,
q = rint(v) + y_zp (half to even), saturated to the y type. QDQ references
evaluate the float graph in float64 (Q: rint half to even, saturate;
DQ: (q - zp) * scale). Everything is seeded: every run writes the same bytes."""
import itertools
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

TYPES = {"u8": (np.uint8, 0, 255), "s8": (np.int8, -128, 127)}


def conv_nd(x, w, strides, pads, dil, group):
    """Direct convolution of x (N,C,...) by w (OC,C/group,...) in x's dtype
    (int64 for exact sums, float64 otherwise); pads = begin..., end...
    (ONNX order), padded with zeros."""
    nsp = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)])
    n = x.shape[0]
    oc, icg = w.shape[:2]
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] - ((k[i] - 1) * dil[i] + 1)) // strides[i] + 1 for i in range(nsp)]
    y = np.zeros([n, oc] + out_sp, dtype=x.dtype)
    ocg = oc // group
    for g in range(group):
        xs = x[:, g * icg:(g + 1) * icg]
        ws = w[g * ocg:(g + 1) * ocg]
        for tap in itertools.product(*[range(kk) for kk in k]):
            sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
                       for i in range(nsp))
            patch = xs[(slice(None), slice(None)) + sl]
            wt = ws[(slice(None), slice(None)) + tuple(tap)]
            y[:, g * ocg:(g + 1) * ocg] += np.einsum("ni...,oi->no...", patch, wt)
    return y


def to_int32(acc):
    assert np.abs(acc).max() < 2 ** 31, "accumulator overflows int32"
    return acc.astype(np.int32)


def requant(acc, x_scale, w_scale, y_scale, y_zp, ytype, channel_axis):
    """The QLinear output stage, in float32 throughout; w_scale is a scalar
    or one scale per channel along channel_axis of acc."""
    dtype, lo, hi = TYPES[ytype]
    scale = (np.float32(x_scale) * np.asarray(w_scale, np.float32)) / np.float32(y_scale)
    if scale.ndim == 1:
        shape = [1] * acc.ndim
        shape[channel_axis] = -1
        scale = scale.reshape(shape)
    v = acc.astype(np.float32) * scale
    q = np.rint(v) + np.float32(y_zp)
    return np.clip(q, lo, hi).astype(dtype)


def random_act(rng, shape, t, edge=False):
    """Uniform over the type, or with `edge` only its two end values."""
    dtype, lo, hi = TYPES[t]
    if edge:
        return rng.choice(np.array([lo, hi]), size=shape).astype(dtype)
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def random_weight(rng, shape, full, narrow=None, pair_axis=None, edge=False):
    """int8 weights: the full range with -128 and 127 present, the symmetric
    range [-127, 127] a symmetric quantizer writes, or [-narrow, narrow];
    with `edge` only -127 and 127 (x86 without VNNI multiplies them as
    signed bytes, whose pair sums reach 2 * 128 * 127 at the end values of
    the input).
    pair_axis: for 7-bit weights, the inputs of two products summed together
    (x86 without VNNI: inputs 0 and 1 of the first and the last output
    channel) set to +narrow and -narrow: x * w + x' * w' = +-255 * 2 * narrow."""
    if edge:
        return rng.choice(np.array([-127, 127]), size=shape).astype(np.int8)
    if narrow is not None:
        w = rng.integers(-narrow, narrow + 1, size=shape).astype(np.int8)
        if pair_axis is not None and w.shape[pair_axis] >= 2:
            first = [0] * w.ndim
            first[pair_axis] = slice(0, 2)
            last = [0] * w.ndim
            last[pair_axis] = slice(0, 2)
            last[1 - pair_axis] = -1
            w[tuple(first)], w[tuple(last)] = narrow, -narrow
        return w
    w = rng.integers(-128 if full else -127, 128, size=shape).astype(np.int8)
    if full:
        w.flat[0], w.flat[-1] = -128, 127
    return w


def ugly(v):
    """A float32 scale with four significant digits, e.g. 0.01237."""
    return np.float32(float(f"{v:.4g}"))


def pick_scales(rng, acc, per_channel, n_channels, channel_axis, mode):
    """x_scale, w_scale (scalar or per channel) and y_scale. "ties": powers
    of two whose product is 1/8 so that 1/8 of the outputs are exact halves;
    "sat": y_scale so small that most outputs saturate; otherwise outputs
    have an rms of about 40 steps."""
    if mode == "ties":
        return np.float32(0.5), np.float32(0.25), np.float32(1.0)
    x_scale = ugly(rng.uniform(0.004, 0.05))
    if per_channel:
        w_scale = np.array([ugly(v) for v in rng.uniform(0.001, 0.02, n_channels)], np.float32)
        shape = [1] * acc.ndim
        shape[channel_axis] = -1
        real = acc.astype(np.float64) * x_scale * w_scale.reshape(shape)
    else:
        w_scale = ugly(rng.uniform(0.001, 0.02))
        real = acc.astype(np.float64) * x_scale * w_scale
    spread = 600.0 if mode == "sat" else 40.0
    return x_scale, w_scale, ugly(max(np.sqrt(np.mean(real ** 2)), 1e-6) / spread)


def write_case(out_dir, name, nodes, inits, x, xtype, y, ytype):
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", xtype, list(x.shape))],
                          [helper.make_tensor_value_info("y", ytype, list(y.shape))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for fname, arr, tname in (("input_0.pb", x, "x"), ("output_0.pb", y, "y")):
        with open(os.path.join(d, "test_data_set_0", fname), "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(arr), tname).SerializeToString())


def onnx_type(t):
    return {"u8": TensorProto.UINT8, "s8": TensorProto.INT8}[t]


def scalar(v, dtype):
    return np.array(v, dtype=dtype)


# ---------------------------------------------------------------- exact ops

# (name, N, C, spatial, OC, kernel, strides, pads, dilations, group,
#  x type, x_zp, per-channel w_scale, y type, y_zp, bias, full-range w, mode)
QLINEAR_CONV = [
    ("u8_1x1_ic1_oc1", 1, 1, (5, 7), 1, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "u8", 128, False, "u8", 128, True, False, ""),
    ("u8_xzp0_3x3_ic3_oc7_pad1_perchan", 1, 3, (9, 8), 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 0, True, "u8", 0, True, True, ""),
    ("u8_xzp255_ic5_oc17_s2_asympad", 1, 5, (11, 10), 17, (3, 3), (2, 2), (0, 1, 2, 1), (1, 1), 1, "u8", 255, True, "u8", 255, False, False, ""),
    ("u8_ic17_oc40_1x7", 1, 17, (4, 13), 40, (1, 7), (1, 1), (0, 3, 0, 3), (1, 1), 1, "u8", 97, True, "u8", 131, True, True, ""),
    ("u8_ic33_oc3_5x1_dil2", 1, 33, (14, 5), 3, (5, 1), (1, 1), (4, 0, 4, 0), (2, 1), 1, "u8", 128, False, "s8", -128, True, False, ""),
    ("u8_ic5_oc7_3x3_dil2", 1, 5, (10, 9), 7, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1, "u8", 200, True, "u8", 100, True, False, ""),
    ("u8_group2_ic10_oc40", 1, 10, (7, 6), 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2, "u8", 128, True, "u8", 128, True, True, ""),
    ("u8_batch2_ic3_oc17_s2", 2, 3, (12, 11), 17, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, "u8", 37, False, "u8", 128, False, False, ""),
    # First layers over an RGB image with enough channels for x86's int16 pairs (Target::int16_run_min_out_c).
    ("u8_ic3_oc64_3x3_s2_first", 1, 3, (13, 12), 64, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, "u8", 97, True, "u8", 128, True, True, ""),
    ("s8_ic3_oc65_7x7_s2_first", 1, 3, (15, 14), 65, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1, "s8", -7, True, "u8", 10, False, True, ""),
    ("u8_conv1d_ic5_oc7_s2", 1, 5, (29,), 7, (3,), (2,), (1, 2), (1,), 1, "u8", 128, True, "u8", 128, True, False, ""),
    ("u8_depthwise_ic17", 1, 17, (7, 7), 17, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 17, "u8", 128, True, "u8", 128, True, False, ""),
    ("u8_ic3_oc8_3x3_s2_wide", 1, 3, (6, 133), 8, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, "u8", 128, True, "u8", 128, True, False, ""),
    ("s8_ic2_oc5_5x5_wide", 1, 2, (7, 70), 5, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1, "s8", -5, True, "s8", 3, True, False, ""),
    ("u8_batch2_ic4_oc7_1x3_wide", 2, 4, (3, 67), 7, (1, 3), (1, 1), (0, 1, 0, 1), (1, 1), 1, "u8", 0, False, "u8", 10, False, True, ""),
    ("u8_depthwise_ic37_5x5_s2_xzp255", 1, 37, (11, 13), 37, (5, 5), (2, 2), (2, 1, 2, 2), (1, 1), 37, "u8", 255, True, "u8", 0, True, False, ""),
    ("s8_depthwise_ic20_3x3_dil2_w3", 1, 20, (9, 3), 20, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 20, "s8", -128, True, "s8", 5, False, True, ""),
    ("u8_depthwise_ic70_7x1_xzp0", 1, 70, (15, 6), 70, (7, 1), (1, 1), (3, 0, 3, 0), (1, 1), 70, "u8", 0, False, "u8", 128, True, False, ""),
    ("s8_xzpm128_ic3_oc7_3x3", 1, 3, (8, 9), 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", -128, True, "s8", -128, True, True, ""),
    ("s8_xzp127_ic17_oc3_1x1", 1, 17, (6, 5), 3, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", 127, False, "s8", 127, False, False, ""),
    ("s8_xzp0_ic33_oc17_s2_asympad", 1, 33, (9, 9), 17, (3, 3), (2, 2), (1, 0, 0, 1), (1, 1), 1, "s8", 0, True, "s8", 0, True, False, ""),
    ("s8_ic1_oc40_5x1_u8out", 1, 1, (15, 6), 40, (5, 1), (1, 1), (2, 0, 2, 0), (1, 1), 1, "s8", -21, True, "u8", 0, True, True, ""),
    ("s8_group2_conv1d_batch2_dil2", 2, 10, (23,), 14, (5,), (1,), (2, 2), (2,), 2, "s8", -128, True, "s8", 0, True, False, ""),
    ("s8_ic5_oc1_1x7_s2", 1, 5, (3, 17), 1, (1, 7), (1, 2), (0, 3, 0, 3), (1, 1), 1, "s8", 64, False, "s8", -100, False, True, ""),
    ("sat_u8_ic17_oc7_3x3", 1, 17, (6, 6), 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 128, True, "u8", 128, True, True, "sat"),
    ("sat_s8_ic5_oc40_1x1", 1, 5, (5, 5), 40, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", 0, False, "s8", 0, False, False, "sat"),
    ("ties_u8_ic3_oc7_1x1", 1, 3, (6, 7), 7, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "u8", 128, False, "u8", 128, True, False, "ties"),
    # 7-bit weights (ONNX Runtime's reduce_range): x86 without VNNI multiplies
    # them as bytes (vpmaddubsw), its pair sums at most 255 * 128.
    ("7bit_u8_ic17_oc40_3x3", 1, 17, (9, 8), 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 128, True, "u8", 128, True, False, "7bit"),
    ("7bit_s8_ic33_oc17_1x1", 1, 33, (6, 7), 17, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", -128, True, "s8", 0, True, False, "7bit"),
    ("7bit_u8_ic3_oc8_3x3_s2_wide", 1, 3, (6, 133), 8, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, "u8", 0, True, "u8", 128, True, False, "7bit"),
    ("7bit_s8_group2_ic10_oc14", 1, 10, (7, 6), 14, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2, "s8", 5, True, "u8", 3, True, False, "7bit"),
    # Inputs only at their type's end values, weights only -127 and 127: x86
    # without VNNI multiplies them as signed bytes (|x| * (w * sign x),
    # vpsignb + vpmaddubsw), its pair sums up to 2 * 128 * 127.
    ("edge_u8_ic17_oc40_3x3", 1, 17, (9, 8), 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 0, True, "u8", 128, True, False, "edge"),
    ("edge_s8_ic33_oc17_1x1", 1, 33, (6, 7), 17, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", 0, True, "s8", 0, True, False, "edge"),
    ("edge_s8_ic3_oc8_3x3_s2_wide", 1, 3, (6, 133), 8, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, "s8", 127, True, "u8", 128, True, False, "edge"),
]

# 3x3 stride-1 convolutions for the int8 Winograd F(2,3) (the tuple as
# QLINEAR_CONV's): V = B^T (d - x_zp) B reaches 4 * 255 with inputs at an
# end and the zero point at the other, U = 4 G g G^T 9 * 128 with weights
# of -128, and the int32 sums their largest over 300 input channels.
WINOGRAD_CONV = [
    ("u8_xzp128_ic17_oc40", 1, 17, (9, 8), 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 128, True, "u8", 128, True, True, ""),
    ("s8_xzpm128_ic33_oc19_odd", 1, 33, (7, 11), 19, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", -128, True, "s8", 5, True, True, ""),
    ("u8_xzp0_edge_ic64_oc16", 1, 64, (6, 6), 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 0, True, "u8", 128, True, False, "edge"),
    ("u8_xzp255_ic300_oc8", 1, 300, (5, 5), 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 255, True, "u8", 0, False, True, ""),
    ("s8_edge_ic40_oc24_xzp127", 1, 40, (6, 5), 24, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", 127, False, "s8", 0, True, False, "edge"),
    ("s8_batch2_valid_ic24_oc24", 2, 24, (10, 10), 24, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", 3, True, "u8", 100, True, True, ""),
    ("u8_asympad_ic20_oc12", 1, 20, (8, 9), 12, (3, 3), (1, 1), (0, 2, 1, 0), (1, 1), 1, "u8", 97, True, "u8", 3, False, True, ""),
    ("u8_pad2_ic16_oc16", 1, 16, (5, 4), 16, (3, 3), (1, 1), (2, 2, 2, 2), (1, 1), 1, "u8", 40, True, "s8", -128, True, True, ""),
    ("s8_one_row_ic18_oc7", 1, 18, (1, 13), 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", 0, True, "s8", 0, True, True, ""),
    ("u8_wide_ic9_oc33", 1, 9, (4, 70), 33, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 128, True, "u8", 128, False, True, ""),
]

# ConvInteger for the int8 Winograd: its int32 sums are the output (the
# tuple as CONV_INTEGER's, below).
WINOGRAD_CONV_INTEGER = [
    ("u8_xzp200_ic24_oc20_3x3", 1, 24, (7, 9), 20, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 200, "chan", True),
    ("s8_noxzp_ic11_oc8_3x3_valid", 2, 11, (6, 5), 8, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", None, "none", True),
]

# (name, N, C, spatial, OC, kernel, strides, pads, dilations, group,
#  x type, x_zp (None: absent), w_zp ("none": absent, "scalar", "chan"), full-range w)
CONV_INTEGER = [
    ("u8_xzp255_ic3_oc7_3x3_nowzp", 1, 3, (7, 8), 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", 255, "none", True),
    ("u8_xzp0_ic17_oc40_1x1", 1, 17, (5, 6), 40, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "u8", 0, "scalar", False),
    ("s8_xzpm128_ic5_oc17_1x7", 1, 5, (4, 15), 17, (1, 7), (1, 1), (0, 3, 0, 3), (1, 1), 1, "s8", -128, "chan", True),
    ("s8_xzp127_ic33_oc3_5x1_s2_dil2", 1, 33, (17, 4), 3, (5, 1), (2, 1), (4, 0, 3, 0), (2, 1), 1, "s8", 127, "none", False),
    ("u8_noxzp_ic1_oc3_3x3_asympad", 1, 1, (9, 7), 3, (3, 3), (1, 1), (0, 2, 1, 0), (1, 1), 1, "u8", None, "scalar", True),
    ("u8_group2_ic10_oc14", 1, 10, (6, 7), 14, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2, "u8", 128, "chan", False),
    ("s8_conv1d_batch2_ic5_oc7", 2, 5, (31,), 7, (3,), (1,), (1, 1), (1,), 1, "s8", 0, "scalar", True),
    ("u8_xzp97_ic3_oc40_3x3_s2", 1, 3, (13, 12), 40, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, "u8", 97, "chan", False),
]

# (name, A shape, N, a type, a_zp, per-column b_scale, y type, y_zp, full-range b, mode)
QLINEAR_MATMUL = [
    ("u8_m1_k1_n1", (1, 1), 1, "u8", 128, False, "u8", 128, False, ""),
    ("u8_azp0_m5_k3_n7_percol", (5, 3), 7, "u8", 0, True, "u8", 0, True, ""),
    ("u8_azp255_m13_k8_n33_percol", (13, 8), 33, "u8", 255, True, "u8", 255, False, ""),
    ("u8_m5_k31_n7_s8out", (5, 31), 7, "u8", 97, False, "s8", -128, True, ""),
    ("u8_m13_k64_n33_percol", (13, 64), 33, "u8", 128, True, "u8", 128, True, ""),
    ("s8_azpm128_m1_k64_n7_percol", (1, 64), 7, "s8", -128, True, "s8", 127, False, ""),
    ("s8_azp127_m5_k8_n1", (5, 8), 1, "s8", 127, False, "s8", 0, True, ""),
    ("s8_azp0_m13_k31_n33_percol_u8out", (13, 31), 33, "s8", 0, True, "u8", 128, False, ""),
    ("u8_3d_2x5x31_n7_percol", (2, 5, 31), 7, "u8", 128, True, "u8", 128, True, ""),
    ("s8_3d_2x13x3_n33", (2, 13, 3), 33, "s8", -40, False, "s8", -128, False, ""),
    ("sat_u8_m5_k64_n7", (5, 64), 7, "u8", 128, True, "u8", 128, True, "sat"),
    ("ties_s8_m13_k8_n33", (13, 8), 33, "s8", 0, False, "s8", 0, False, "ties"),
    ("7bit_u8_m13_k64_n33_percol", (13, 64), 33, "u8", 255, True, "u8", 128, False, "7bit"),
    ("7bit_s8_m5_k31_n7", (5, 31), 7, "s8", -128, False, "s8", 0, False, "7bit"),
    ("edge_u8_m13_k64_n33_percol", (13, 64), 33, "u8", 0, True, "u8", 128, False, "edge"),
    ("edge_s8_m5_k31_n7", (5, 31), 7, "s8", -128, False, "s8", 0, False, "edge"),
]

# (name, A shape, N, a type, a_zp (None: absent), b_zp ("none", "scalar", "col"), full-range b)
MATMUL_INTEGER = [
    ("u8_m1_k1_n1", (1, 1), 1, "u8", 128, "none", False),
    ("u8_azp0_m5_k3_n33", (5, 3), 33, "u8", 0, "scalar", True),
    ("u8_azp255_m13_k64_n7", (13, 64), 7, "u8", 255, "col", False),
    ("s8_azpm128_m5_k31_n1", (5, 31), 1, "s8", -128, "none", True),
    ("s8_azp127_m13_k8_n33", (13, 8), 33, "s8", 127, "col", False),
    ("s8_azp0_m1_k64_n33", (1, 64), 33, "s8", 0, "scalar", True),
    ("u8_noazp_m5_k8_n7", (5, 8), 7, "u8", None, "none", False),
    ("u8_3d_2x13x31_n7", (2, 13, 31), 7, "u8", 97, "col", True),
    ("s8_3d_2x1x64_n33", (2, 1, 64), 33, "s8", -21, "none", False),
]


def conv_attrs(k, s, pads, dil, group):
    return dict(kernel_shape=list(k), strides=list(s), pads=list(pads), dilations=list(dil), group=group)


def qlinear_conv_cases(out_dir, rng, cases=None):
    cases = QLINEAR_CONV if cases is None else cases
    for (name, n, c, sp, oc, k, s, pads, dil, group, xt, x_zp, per_ch, yt, y_zp, bias, full,
         mode) in cases:
        x = random_act(rng, (n, c) + sp, xt, edge=mode == "edge")
        w = random_weight(rng, (oc, c // group) + k, full, narrow={"ties": 3, "7bit": 64}.get(mode), pair_axis=1,
                          edge=mode == "edge")
        acc = conv_nd(x.astype(np.int64) - x_zp, w.astype(np.int64), s, pads, dil, group)
        b = None
        if bias:
            b = rng.integers(-int(acc.std()) - 1, int(acc.std()) + 2, size=oc).astype(np.int32)
            acc = acc + b.reshape([1, oc] + [1] * len(sp))
        acc = to_int32(acc)
        x_scale, w_scale, y_scale = pick_scales(rng, acc, per_ch, oc, 1, mode)
        y = requant(acc, x_scale, w_scale, y_scale, y_zp, yt, 1)
        xdt, ydt = TYPES[xt][0], TYPES[yt][0]
        w_zp = np.zeros(oc, np.int8) if per_ch else scalar(0, np.int8)
        inits = [numpy_helper.from_array(scalar(x_scale, np.float32), "x_scale"),
                 numpy_helper.from_array(scalar(x_zp, xdt), "x_zero_point"),
                 numpy_helper.from_array(w, "w"),
                 numpy_helper.from_array(np.asarray(w_scale, np.float32), "w_scale"),
                 numpy_helper.from_array(w_zp, "w_zero_point"),
                 numpy_helper.from_array(scalar(y_scale, np.float32), "y_scale"),
                 numpy_helper.from_array(scalar(y_zp, ydt), "y_zero_point")]
        ins = ["x"] + [i.name for i in inits]
        if b is not None:
            inits.append(numpy_helper.from_array(b, "b"))
            ins.append("b")
        node = helper.make_node("QLinearConv", ins, ["y"], **conv_attrs(k, s, pads, dil, group))
        write_case(out_dir, "qlinearconv_" + name, [node], inits, x, onnx_type(xt), y, onnx_type(yt))
    return len(cases)


def integer_op_inputs(w, w_name, x_zp, xt, x_zp_name, w_zp, n, w_zp_name):
    """Inputs and initializers of ConvInteger/MatMulInteger: x, the weight,
    then the optional zero points (x_zp None: omitted; w_zp "none":
    omitted, "chan"/"col": n zeros, else a scalar 0), trailing omitted
    ones dropped."""
    inits = [numpy_helper.from_array(w, w_name)]
    ins = ["x", w_name, "", ""]
    if x_zp is not None:
        inits.append(numpy_helper.from_array(scalar(x_zp, TYPES[xt][0]), x_zp_name))
        ins[2] = x_zp_name
    if w_zp != "none":
        per = w_zp in ("chan", "col")
        inits.append(numpy_helper.from_array(np.zeros(n, np.int8) if per else scalar(0, np.int8), w_zp_name))
        ins[3] = w_zp_name
    while ins[-1] == "":
        ins.pop()
    return ins, inits


def conv_integer_cases(out_dir, rng, cases=None):
    cases = CONV_INTEGER if cases is None else cases
    for name, n, c, sp, oc, k, s, pads, dil, group, xt, x_zp, wzp, full in cases:
        x = random_act(rng, (n, c) + sp, xt)
        w = random_weight(rng, (oc, c // group) + k, full)
        y = to_int32(conv_nd(x.astype(np.int64) - (x_zp or 0), w.astype(np.int64), s, pads, dil, group))
        ins, inits = integer_op_inputs(w, "w", x_zp, xt, "x_zero_point", wzp, oc, "w_zero_point")
        node = helper.make_node("ConvInteger", ins, ["y"], **conv_attrs(k, s, pads, dil, group))
        write_case(out_dir, "convinteger_" + name, [node], inits, x, onnx_type(xt), y, TensorProto.INT32)
    return len(cases)


def qlinear_matmul_cases(out_dir, rng):
    for name, ashape, nn, at, a_zp, per_col, yt, y_zp, full, mode in QLINEAR_MATMUL:
        a = random_act(rng, ashape, at, edge=mode == "edge")
        b = random_weight(rng, (ashape[-1], nn), full, narrow={"ties": 3, "7bit": 64}.get(mode), pair_axis=0,
                          edge=mode == "edge")
        acc = to_int32(np.matmul(a.astype(np.int64) - a_zp, b.astype(np.int64)))
        a_scale, b_scale, y_scale = pick_scales(rng, acc, per_col, nn, acc.ndim - 1, mode)
        y = requant(acc, a_scale, b_scale, y_scale, y_zp, yt, acc.ndim - 1)
        adt, ydt = TYPES[at][0], TYPES[yt][0]
        inits = [numpy_helper.from_array(scalar(a_scale, np.float32), "a_scale"),
                 numpy_helper.from_array(scalar(a_zp, adt), "a_zero_point"),
                 numpy_helper.from_array(b, "b"),
                 numpy_helper.from_array(np.asarray(b_scale, np.float32), "b_scale"),
                 numpy_helper.from_array(np.zeros(nn, np.int8) if per_col else scalar(0, np.int8), "b_zero_point"),
                 numpy_helper.from_array(scalar(y_scale, np.float32), "y_scale"),
                 numpy_helper.from_array(scalar(y_zp, ydt), "y_zero_point")]
        node = helper.make_node("QLinearMatMul", ["x"] + [i.name for i in inits], ["y"])
        write_case(out_dir, "qlinearmatmul_" + name, [node], inits, a, onnx_type(at), y, onnx_type(yt))
    return len(QLINEAR_MATMUL)


def matmul_integer_cases(out_dir, rng):
    for name, ashape, nn, at, a_zp, bzp, full in MATMUL_INTEGER:
        a = random_act(rng, ashape, at)
        b = random_weight(rng, (ashape[-1], nn), full)
        y = to_int32(np.matmul(a.astype(np.int64) - (a_zp or 0), b.astype(np.int64)))
        ins, inits = integer_op_inputs(b, "b", a_zp, at, "a_zero_point", bzp, nn, "b_zero_point")
        node = helper.make_node("MatMulInteger", ins, ["y"])
        write_case(out_dir, "matmulinteger_" + name, [node], inits, a, onnx_type(at), y, TensorProto.INT32)
    return len(MATMUL_INTEGER)


# Functions of one 8-bit element (tabulate_byte_functions: 256-entry tables,
# byte shuffles). (name, shape, x type, x_zp, x_scale, chain, y type, y_zp,
# y_scale); y type "f32": the chain's float result is the output.
TABLES = [
    ("silu_u8_2x67x3x5", (2, 67, 3, 5), "u8", 131, 0.043, "silu", "u8", 12, 0.031),
    ("silu_s8_1x5x7x9", (1, 5, 7, 9), "s8", -3, 0.05, "silu", "s8", -100, 0.024),
    ("hardswish_u8_xzp0_yzp255_1x130", (1, 130), "u8", 0, 0.02, "hardswish", "u8", 255, 0.011),
    ("hardswish_s8_xzpm128_1x19x1x1", (1, 19, 1, 1), "s8", -128, 0.03, "hardswish", "u8", 0, 0.02),
    ("tanh_s8_xzp127_s8out_3x33", (3, 33), "s8", 127, 0.04, "tanh", "s8", 0, 0.008),
    ("sigmoid_u8_to_f32_1x3x17", (1, 3, 17), "u8", 200, 0.07, "sigmoid", "f32", 0, 0),
    ("exp_s8_saturating_u8_4x70", (4, 70), "s8", 0, 0.1, "exp", "u8", 0, 0.05),
]


def table_cases(out_dir, rng):
    f32 = np.float32
    for name, shape, xt, xzp, xs, chain, yt, yzp, ys in TABLES:
        x = random_act(rng, shape, xt)
        x[(0,) * len(shape)] = TYPES[xt][1]  # both extremes appear
        x[(-1,) * len(shape)] = TYPES[xt][2]
        inits = [numpy_helper.from_array(scalar(xs, f32), "xs"),
                 numpy_helper.from_array(scalar(xzp, TYPES[xt][0]), "xzp")]
        nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xzp"], ["d"])]
        # ONNX's semantics in float32, op by op (transcendentals rounded
        # from float64, as the interpreter that fills the table does).
        d = ((x.astype(np.int32) - xzp).astype(f32) * f32(xs)).astype(f32)
        sig = lambda v: (1 / (1 + np.exp(-v.astype(np.float64)))).astype(f32)
        if chain in ("silu", "hardswish"):
            # the gate is quantized (u8, zero point 0, scale 1/255) and
            # multiplied with the input, as ORT's QDQ quantizer leaves it
            if chain == "silu":
                nodes.append(helper.make_node("Sigmoid", ["d"], ["g"]))
                g = sig(d)
            else:
                nodes.append(helper.make_node("HardSigmoid", ["d"], ["g"], alpha=1 / 6, beta=0.5))
                g = np.clip(f32(1 / 6) * d + f32(0.5), 0, 1).astype(f32)
            gs = f32(1 / 255)
            inits += [numpy_helper.from_array(scalar(gs, f32), "gs"),
                      numpy_helper.from_array(scalar(0, np.uint8), "gzp")]
            nodes += [helper.make_node("QuantizeLinear", ["g", "gs", "gzp"], ["gq"]),
                      helper.make_node("DequantizeLinear", ["gq", "gs", "gzp"], ["gd"]),
                      helper.make_node("Mul", ["d", "gd"], ["r"])]
            gq = np.clip(np.rint(g / gs), 0, 255)
            r = (d * (gq.astype(f32) * gs).astype(f32)).astype(f32)
        else:
            nodes.append(helper.make_node(chain.capitalize(), ["d"], ["r"]))
            r = {"tanh": lambda v: np.tanh(v.astype(np.float64)).astype(f32), "sigmoid": sig,
                 "exp": lambda v: np.exp(v.astype(np.float64)).astype(f32)}[chain](d)
        if yt == "f32":
            nodes[-1].output[0] = "y"
            write_case(out_dir, "table_" + name, nodes, inits, x, onnx_type(xt), r, TensorProto.FLOAT)
            continue
        yd, lo, hi = TYPES[yt]
        inits += [numpy_helper.from_array(scalar(ys, f32), "ys"), numpy_helper.from_array(scalar(yzp, yd), "yzp")]
        nodes.append(helper.make_node("QuantizeLinear", ["r", "ys", "yzp"], ["y"]))
        y = np.clip(np.rint((r / f32(ys)).astype(f32)) + yzp, lo, hi).astype(yd)
        write_case(out_dir, "table_" + name, nodes, inits, x, onnx_type(xt), y, onnx_type(yt))
    return len(TABLES)


# ------------------------------------------------------------------ QDQ graphs

class Qdq:
    """Builds a QDQ graph and evaluates it in float64 as it goes. Built
    twice: the first time (ranges=None) Q/DQ are identities, weights stay
    float, and every activation Q records its input's min/max under its
    label, as a calibrator running the float model would; the second time
    those ranges give the quantization parameters. A label used twice
    shares one scale and zero point (MaxPool's output, as ORT does)."""

    def __init__(self, ranges=None):
        self.calib = ranges is None
        self.ranges = {} if ranges is None else ranges
        self.params = {}
        self.nodes, self.inits, self.val = [], [], {}
        self.count = 0

    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, arr, prefix):
        name = self.fresh(prefix)
        self.inits.append(numpy_helper.from_array(arr, name))
        self.val[name] = arr
        return name

    def node(self, op, ins, value, prefix, **attrs):
        out = self.fresh(prefix)
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        self.val[out] = value
        return out

    def act_params(self, label, signed):
        """Scale and zero point as ORT's min/max calibration computes them:
        the range widened to include 0; u8 asymmetric, or s8 symmetric."""
        if label not in self.params:
            lo, hi = self.ranges[label]
            lo, hi = min(lo, 0.0), max(hi, 0.0)
            if signed:
                scale, zp = np.float32(max(-lo, hi) / 127), np.int8(0)
            else:
                scale = np.float32((hi - lo) / 255)
                zp = np.uint8(np.clip(np.rint(-lo / np.float64(scale)), 0, 255))
            self.params[label] = (scale, zp, self.const(np.array(scale), label + "_scale"),
                                  self.const(np.array(zp), label + "_zero_point"))
        return self.params[label]

    def qdq(self, t, label, signed=False):
        """QuantizeLinear then DequantizeLinear of activation t."""
        x = self.val[t]
        if self.calib:
            lo, hi = float(x.min()), float(x.max())
            old = self.ranges.get(label, (lo, hi))
            self.ranges[label] = (min(old[0], lo), max(old[1], hi))
            return t
        scale, zp, sname, zname = self.act_params(label, signed)
        self.last_scale = scale
        qmin, qmax = (-128, 127) if signed else (0, 255)
        q = np.clip(np.rint(x / np.float64(scale)) + int(zp), qmin, qmax)
        qn = self.node("QuantizeLinear", [t, sname, zname], q, label + "_q")
        return self.node("DequantizeLinear", [qn, sname, zname], (q - int(zp)) * np.float64(scale), label + "_dq")

    def weight(self, w, axis):
        """DQ(int8 weight), symmetric per channel along axis: scale =
        max|w| / 127. Returns (tensor, per-channel scales)."""
        red = tuple(i for i in range(w.ndim) if i != axis)
        scale = (np.abs(w).max(axis=red) / 127).astype(np.float32)
        if self.calib:
            return self.const(w, "w"), scale
        shape = [1] * w.ndim
        shape[axis] = -1
        s = scale.reshape(shape).astype(np.float64)
        q = np.clip(np.rint(w / s), -127, 127).astype(np.int8)
        ins = [self.const(q, "w_quantized"), self.const(scale, "w_scale"),
               self.const(np.zeros(len(scale), np.int8), "w_zero_point")]
        return self.node("DequantizeLinear", ins, q * s, "w_dq", axis=axis), scale

    def bias(self, b, x_label, w_scale, signed=False):
        """DQ(int32 bias) with scale = x_scale * w_scale (float32), zp 0."""
        if self.calib:
            return self.const(b, "b")
        scale = self.act_params(x_label, signed)[0] * w_scale
        q = np.rint(b / scale.astype(np.float64)).astype(np.int32)
        ins = [self.const(q, "b_quantized"), self.const(scale, "b_scale"),
               self.const(np.zeros(len(scale), np.int32), "b_zero_point")]
        return self.node("DequantizeLinear", ins, q * scale.astype(np.float64), "b_dq", axis=0)

    def conv(self, x, w, b, strides, pads, dil=None, group=1):
        wv = self.val[w]
        nsp = len(strides)
        dil = dil or (1,) * nsp
        y = conv_nd(self.val[x], wv, strides, pads, dil, group)
        ins = [x, w]
        if b is not None:
            y = y + self.val[b].reshape([1, -1] + [1] * nsp)
            ins.append(b)
        return self.node("Conv", ins, y, "conv", kernel_shape=list(wv.shape[2:]), strides=list(strides),
                         pads=list(pads), dilations=list(dil), group=group)

    def conv_transpose(self, x, w, b, strides, pads, out_pad):
        """2-D ConvTranspose (group 1): every input pixel scatters its taps."""
        xv, wv = self.val[x], self.val[w]
        n, ic, h, wd = xv.shape
        oc, kh, kw = wv.shape[1], wv.shape[2], wv.shape[3]
        full = np.zeros((n, oc, (h - 1) * strides[0] + kh + out_pad[0], (wd - 1) * strides[1] + kw + out_pad[1]))
        for i, j in itertools.product(range(kh), range(kw)):
            contrib = np.einsum("nchw,co->nohw", xv, wv[:, :, i, j])
            full[:, :, i:i + (h - 1) * strides[0] + 1:strides[0], j:j + (wd - 1) * strides[1] + 1:strides[1]] += contrib
        y = full[:, :, pads[0]:full.shape[2] - pads[2], pads[1]:full.shape[3] - pads[3]]
        ins = [x, w]
        if b is not None:
            y = y + self.val[b].reshape(1, -1, 1, 1)
            ins.append(b)
        return self.node("ConvTranspose", ins, y, "convtranspose", kernel_shape=[kh, kw], strides=list(strides),
                         pads=list(pads), output_padding=list(out_pad))

    def relu(self, x):
        return self.node("Relu", [x], np.maximum(self.val[x], 0), "relu")

    def add(self, a, b):
        return self.node("Add", [a, b], self.val[a] + self.val[b], "add")

    def matmul(self, a, b):
        return self.node("MatMul", [a, b], np.matmul(self.val[a], self.val[b]), "matmul")

    def gemm_transb(self, a, b, c):
        return self.node("Gemm", [a, b, c], self.val[a] @ self.val[b].T + self.val[c], "gemm", transB=1)

    def sigmoid(self, x):
        return self.node("Sigmoid", [x], 1 / (1 + np.exp(-self.val[x])), "sigmoid")

    def hardsigmoid(self, x):
        return self.node("HardSigmoid", [x], np.clip(self.val[x] / 6 + 0.5, 0, 1), "hardsigmoid",
                         alpha=1 / 6, beta=0.5)

    def mul(self, a, b):
        return self.node("Mul", [a, b], self.val[a] * self.val[b], "mul")

    def maxpool_3x3_s2_p1(self, x):
        v = np.pad(self.val[x], [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-np.inf)
        oh, ow = (v.shape[2] - 3) // 2 + 1, (v.shape[3] - 3) // 2 + 1
        y = np.full(v.shape[:2] + (oh, ow), -np.inf)
        for i, j in itertools.product(range(3), range(3)):
            y = np.maximum(y, v[:, :, i:i + 2 * (oh - 1) + 1:2, j:j + 2 * (ow - 1) + 1:2])
        return self.node("MaxPool", [x], y, "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])

    # ---- the patterns: each takes the builder, the input tensor, the float parameters

    def conv_block(self, x, x_label, p, y_label, strides, pads, group=1, relu=False, signed=False):
        w, ws = self.weight(p["w"], 0)
        b = self.bias(p["b"], x_label, ws, signed) if "b" in p else None
        y = self.conv(x, w, b, strides, pads, group=group)
        return self.qdq(self.relu(y) if relu else y, y_label, signed)


def pattern_conv(strides, pads, group=1, relu=False, signed=False):
    def build(g, x, p):
        xd = g.qdq(x, "x", signed)
        return g.conv_block(xd, "x", p, "y", strides, pads, group, relu, signed)
    return build


def pattern_conv_transpose(strides, pads, out_pad, relu=False):
    """QDQ ConvTranspose (weights [IC, OC, k...] per channel along axis 1),
    as ONNX Runtime's quantizer writes it: tinyrt's ConvTransposeInteger."""
    def build(g, x, p):
        xd = g.qdq(x, "x")
        w, ws = g.weight(p["w"], 1)
        b = g.bias(p["b"], "x", ws) if "b" in p else None
        y = g.conv_transpose(xd, w, b, strides, pads, out_pad)
        return g.qdq(g.relu(y) if relu else y, "y")
    return build


def transpose_params(rng, ic, oc, k, bias=True, gain=0.5):
    p = {"w": (rng.standard_normal((ic, oc) + k) * gain / np.sqrt(ic)).astype(np.float32)}
    if bias:
        p["b"] = (0.1 * rng.standard_normal(oc)).astype(np.float32)
    return p


def pattern_residual(g, x, p):
    xd = g.qdq(x, "x")
    a = g.conv_block(xd, "x", p["c1"], "c1", (1, 1), (1, 1, 1, 1))
    b = g.conv_block(xd, "x", p["c2"], "c2", (1, 1), (0, 0, 0, 0))
    s = g.qdq(g.add(a, b), "sum")
    return g.qdq(g.relu(s), "y")


def pattern_conv_maxpool(g, x, p):
    xd = g.qdq(x, "x")
    c = g.conv_block(xd, "x", p, "c", (1, 1), (1, 1, 1, 1))
    return g.qdq(g.maxpool_3x3_s2_p1(c), "c")  # MaxPool keeps its input's scale


def pattern_matmul_add(g, x, p):
    xd = g.qdq(x, "x")
    w, ws = g.weight(p["w"], 1)
    y = g.add(g.matmul(xd, w), g.bias(p["b"], "x", ws))
    return g.qdq(y, "y")


def pattern_gemm(g, x, p):
    xd = g.qdq(x, "x")
    w, ws = g.weight(p["w"], 0)
    return g.qdq(g.gemm_transb(xd, w, g.bias(p["b"], "x", ws)), "y")


def pattern_gated(gate, signed=False):
    """conv -> x * gate(x) (SiLU, hard-swish) with Q/DQ between each op ->
    1x1 conv: the gated activation runs on the first conv's channels-last
    output."""
    def build(g, x, p):
        xd = g.qdq(x, "x", signed)
        c = g.conv_block(xd, "x", p["c1"], "c1", (1, 1), (1, 1, 1, 1), signed=signed)
        m = g.qdq(g.mul(c, g.qdq(getattr(g, gate)(c), "gate")), "act", signed)
        return g.conv_block(m, "act", p["c2"], "y", (1, 1), (0, 0, 0, 0), signed=signed)
    return build


def conv_params(rng, oc, icg, k, bias=True, gain=0.5):
    p = {"w": (rng.standard_normal((oc, icg) + k) * gain / np.sqrt(icg * np.prod(k))).astype(np.float32)}
    if bias:
        p["b"] = (0.1 * rng.standard_normal(oc)).astype(np.float32)
    return p


def linear_params(rng, k, n, transposed, gain=0.5):
    w = rng.standard_normal((n, k) if transposed else (k, n)) * gain / np.sqrt(k)
    return {"w": w.astype(np.float32), "b": (0.1 * rng.standard_normal(n)).astype(np.float32)}


# (name, input shape, pattern, parameters(rng))
QDQ_CASES = [
    ("conv3x3_relu", (1, 3, 10, 11), pattern_conv((1, 1), (1, 1, 1, 1), relu=True),
     lambda r: conv_params(r, 8, 3, (3, 3))),
    ("conv1x1_nobias", (1, 8, 6, 7), pattern_conv((1, 1), (0, 0, 0, 0)),
     lambda r: conv_params(r, 12, 8, (1, 1), bias=False)),
    ("conv_s2_ic5_oc7", (1, 5, 13, 12), pattern_conv((2, 2), (1, 1, 1, 1)),
     lambda r: conv_params(r, 7, 5, (3, 3))),
    ("residual_add", (1, 6, 8, 8), pattern_residual,
     lambda r: {"c1": conv_params(r, 6, 6, (3, 3)), "c2": conv_params(r, 6, 6, (1, 1))}),
    ("matmul_add", (2, 5, 24), pattern_matmul_add, lambda r: linear_params(r, 24, 10, False)),
    ("gemm_transb", (4, 30), pattern_gemm, lambda r: linear_params(r, 30, 12, True)),
    ("conv_maxpool", (1, 4, 10, 9), pattern_conv_maxpool, lambda r: conv_params(r, 6, 4, (3, 3))),
    ("s8_symmetric_conv_relu", (1, 4, 9, 8), pattern_conv((1, 1), (1, 1, 1, 1), relu=True, signed=True),
     lambda r: conv_params(r, 9, 4, (3, 3))),
    ("depthwise8", (1, 8, 9, 10), pattern_conv((1, 1), (1, 1, 1, 1), group=8),
     lambda r: conv_params(r, 8, 1, (3, 3), gain=0.7)),
    ("conv1d_relu", (1, 6, 37), pattern_conv((1,), (2, 2), relu=True), lambda r: conv_params(r, 9, 6, (5,))),
    ("conv_silu_conv", (1, 3, 9, 11), pattern_gated("sigmoid"),
     lambda r: {"c1": conv_params(r, 20, 3, (3, 3), gain=1.5), "c2": conv_params(r, 7, 20, (1, 1))}),
    ("s8_conv_hardswish_conv", (1, 4, 6, 13), pattern_gated("hardsigmoid", signed=True),
     lambda r: {"c1": conv_params(r, 70, 4, (3, 3), gain=2.0), "c2": conv_params(r, 5, 70, (1, 1), gain=0.3)}),
    ("convtranspose_2x2_s2", (1, 6, 5, 7), pattern_conv_transpose((2, 2), (0, 0, 0, 0), (0, 0), relu=True),
     lambda r: transpose_params(r, 6, 5, (2, 2))),
    ("convtranspose_3x3_s2_pad_outpad", (2, 5, 4, 6), pattern_conv_transpose((2, 2), (1, 1, 1, 1), (1, 1)),
     lambda r: transpose_params(r, 5, 9, (3, 3), bias=False, gain=0.3)),
]

QDQ_ATOL = 0.02


def qdq_cases(out_dir, rng):
    for name, shape, pattern, make_params in QDQ_CASES:
        x = rng.standard_normal(shape).astype(np.float32)
        p = make_params(rng)
        cal = Qdq()
        cal.val["x"] = x.astype(np.float64)
        pattern(cal, "x", p)
        g = Qdq(cal.ranges)
        g.val["x"] = x.astype(np.float64)
        out = pattern(g, "x", p)
        assert g.nodes[-1].output[0] == out
        g.nodes[-1].output[0] = "y"
        y = g.val[out].astype(np.float32)
        assert g.last_scale < QDQ_ATOL, f"{name}: the output step {g.last_scale} exceeds the tolerance"
        write_case(out_dir, "qdq_" + name, g.nodes, g.inits, x, TensorProto.FLOAT, y, TensorProto.FLOAT)
    with open(os.path.join(out_dir, "TOLERANCE"), "w") as f:
        f.write(f"--atol {QDQ_ATOL}\n")
    return len(QDQ_CASES)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    exact, qdq = os.path.join(sys.argv[1], "exact"), os.path.join(sys.argv[1], "qdq")
    winograd = os.path.join(sys.argv[1], "winograd")
    counts = {"qlinearconv": qlinear_conv_cases(exact, np.random.default_rng(11)),
              "convinteger": conv_integer_cases(exact, np.random.default_rng(12)),
              "qlinearmatmul": qlinear_matmul_cases(exact, np.random.default_rng(13)),
              "matmulinteger": matmul_integer_cases(exact, np.random.default_rng(14)),
              "table": table_cases(exact, np.random.default_rng(16)),
              "qdq": qdq_cases(qdq, np.random.default_rng(15)),
              "winograd": qlinear_conv_cases(winograd, np.random.default_rng(17), WINOGRAD_CONV)
              + conv_integer_cases(winograd, np.random.default_rng(18), WINOGRAD_CONV_INTEGER)}
    print(f"wrote {sum(counts.values())} cases to {sys.argv[1]}: "
          + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
