#!/usr/bin/python3
"""Single-op convolution cases with odd shapes, for every kernel family
(the GEMM emitter, the depthwise emitter, ConvTranspose as GEMM + col2im,
the loop emitter's fallbacks), and activations written as subgraphs
(GELU, Mish, hard-swish, SiLU) that fusion turns into conv epilogues,
pooling windows (MaxPool with NaNs in its input, AveragePool with and
without the padding counted) after a 1x1 convolution and alone:
one input channel, prime widths, channel counts that are not a multiple
of any vector width, stride 3, dilation 2, pads larger than the kernel,
asymmetric pads, non-square kernels, 1-D, groups, batch 2, bias or not.

Usage: make_conv_cases.py OUTDIR [WINOGRAD_OUTDIR]

WINOGRAD_OUTDIR gets 3x3 stride-1 convolutions of odd shapes (one
channel, prime sizes, outputs smaller than a tile, channel counts that are
not a multiple of any vector width, pads beyond the kernel, batch 2, a
residual add reading the convolution's own input), which the tests run
with --winograd f2 and f4 so that every one goes through the Winograd
transforms.

Writes OUTDIR/<case>/model.onnx and test_data_set_0/{input_0,output_0}.pb
(the ONNX backend-test layout) with float64 numpy references, so that
tinyrt-onnx-test checks each kernel against an independent computation."""
import itertools
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def conv_ref(x, w, b, strides, pads, dil, group):
    """Direct convolution in float64; pads = begin..., end... (ONNX order)."""
    nsp = x.ndim - 2
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)])
    n, c = x.shape[:2]
    oc, icg = w.shape[:2]
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] - ((k[i] - 1) * dil[i] + 1)) // strides[i] + 1 for i in range(nsp)]
    y = np.zeros([n, oc] + out_sp)
    ocg = oc // group
    for g in range(group):
        xs = x[:, g * icg:(g + 1) * icg]
        ws = w[g * ocg:(g + 1) * ocg].astype(np.float64)
        for tap in itertools.product(*[range(kk) for kk in k]):
            sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
                       for i in range(nsp))
            patch = xs[(slice(None), slice(None)) + sl]  # n, icg, out...
            wt = ws[(slice(None), slice(None)) + tuple(tap)]  # ocg, icg
            y[:, g * ocg:(g + 1) * ocg] += np.einsum("ni...,oi->no...", patch, wt)
    if b is not None:
        y += b.reshape([1, oc] + [1] * nsp)
    return y.astype(np.float32)


def conv_transpose_ref(x, w, b, strides, pads, dil, opad, group):
    """Scatter form: every input pixel adds w * x at stride * i + dil * k."""
    nsp = x.ndim - 2
    n, c = x.shape[:2]
    cg, ocg = c // group, w.shape[1]
    k = w.shape[2:]
    full = [strides[i] * (x.shape[2 + i] - 1) + opad[i] + (k[i] - 1) * dil[i] + 1 for i in range(nsp)]
    y = np.zeros([n, ocg * group] + full)
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg].astype(np.float64)
        ws = w[g * cg:(g + 1) * cg].astype(np.float64)
        for tap in itertools.product(*[range(kk) for kk in k]):
            contrib = np.einsum("ni...,io->no...", xs, ws[(slice(None), slice(None)) + tuple(tap)])
            sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (x.shape[2 + i] - 1) * strides[i] + 1, strides[i])
                       for i in range(nsp))
            y[(slice(None), slice(g * ocg, (g + 1) * ocg)) + sl] += contrib
    crop = tuple(slice(pads[i], full[i] - pads[i + nsp]) for i in range(nsp))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y += b.reshape([1, -1] + [1] * nsp)
    return y.astype(np.float32)


def save(out_dir, name, node_attrs, x, w, b, y, op="Conv"):
    inits = [numpy_helper.from_array(w, "w")]
    ins = ["x", "w"]
    if b is not None:
        inits.append(numpy_helper.from_array(b, "b"))
        ins.append("b")
    save_graph(out_dir, name, [helper.make_node(op, ins, ["y"], **node_attrs)], inits, x, y)


def save_graph(out_dir, name, nodes, inits, x, y):
    """A model from x to y with these nodes and initializers, and its data."""
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for fname, arr, tname in (("input_0.pb", x, "x"), ("output_0.pb", y, "y")):
        with open(os.path.join(d, "test_data_set_0", fname), "wb") as f:
            f.write(numpy_helper.from_array(arr, tname).SerializeToString())


# (name, N, C, spatial, OC, kernel, strides, pads(begin+end), dilations, group, bias)
CASES = [
    ("c1_first_layer", 1, 1, (29, 11), 8, (10, 4), (2, 2), (5, 1, 4, 2), (1, 1), 1, True),
    ("c3_7x7_s2", 1, 3, (23, 19), 13, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1, True),
    ("prime_width", 1, 5, (7, 31), 17, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, False),
    ("stride3", 2, 6, (17, 13), 9, (3, 2), (3, 3), (0, 1, 2, 0), (1, 1), 1, True),
    ("dilation2", 1, 7, (15, 16), 37, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1, True),
    ("pads_beyond_kernel", 1, 4, (5, 6), 5, (2, 2), (1, 1), (3, 4, 3, 2), (1, 1), 1, True),
    ("non_square", 1, 11, (9, 14), 24, (1, 5), (1, 2), (0, 2, 0, 2), (1, 1), 1, True),
    ("one_by_one_odd", 1, 19, (3, 5), 41, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
    ("grouped", 1, 12, (8, 9), 18, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 3, True),
    ("conv1d_audio", 1, 1, (401,), 12, (20,), (4,), (0, 0), (1,), 1, True),
    ("conv1d_stride3_dil2", 2, 9, (53,), 10, (5,), (3,), (4, 1), (2,), 1, False),
    ("conv1d_grouped", 1, 8, (37,), 8, (3,), (1,), (1, 1), (1,), 2, True),
    # Few output rows over an input that outweighs the weights: the tasks
    # split runs of pixels along the rows (RowUnits), the last one partial.
    ("conv1d_long_row", 1, 4, (203,), 5, (3,), (1,), (1, 1), (1,), 1, True),
    ("few_rows_batch2", 2, 4, (3, 50), 6, (3, 2), (1, 1), (1, 0, 1, 1), (1, 1), 1, True),
    ("depthwise_3x3", 1, 24, (13, 11), 24, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 24, True),
    ("depthwise_odd_channels", 2, 37, (9, 7), 37, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 37, True),
    ("depthwise_5x5_s2", 1, 20, (15, 15), 20, (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), 20, False),
    ("depthwise_dil2_pads", 1, 3, (6, 5), 3, (3, 3), (1, 1), (4, 3, 2, 4), (2, 2), 3, True),
    ("depthwise_stride3_nonsquare", 1, 17, (19, 8), 17, (3, 1), (3, 1), (1, 0, 1, 0), (1, 1), 17, True),
    ("depthwise_1d", 1, 33, (41,), 33, (7,), (1,), (3, 3), (1,), 33, True),
    ("depthwise_multiplier2", 1, 6, (7, 7), 12, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 6, True),
    ("one_channel_one_pixel", 1, 1, (1, 1), 1, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
    # Unpadded windows over a dense channels-last input: a kernel row is one
    # K of k_w * C contiguous inputs (GemmSpec::k_run), remainders included.
    ("valid_stft_like", 1, 1, (977,), 70, (96,), (40,), (0, 0), (1,), 1, False),
    ("valid_1d_c2_odd", 1, 2, (61,), 9, (9,), (5,), (0, 0), (1,), 1, True),
    ("valid_2d_c3_batch2", 2, 3, (17, 23), 13, (5, 3), (2, 3), (0, 0, 0, 0), (1, 1), 1, True),
    ("valid_c5_k7", 1, 5, (9, 29), 19, (2, 7), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
    ("valid_c9_dilated_rows", 1, 9, (19, 12), 10, (3, 3), (1, 2), (0, 0, 0, 0), (2, 1), 1, True),
    # Input channels per tap for --precision fp16's half products (ctest
    # aarch64-neon-fp16/precision): 70 = two 32-channel chunks and 6 more,
    # each chunk's sums added into float; 8 channels: the sums added into
    # float after every 4 taps (9 = 2 groups and 1); 27 in all for a 1x1
    # (once after the taps, 3 vectors of 8 and 3 single channels); 300 in
    # 9 chunks and 12; grouped with dilation (24: every tap); odd output
    # channel counts.
    ("half_chunks_remainder", 1, 70, (7, 9), 12, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    ("half_sums_every_4_taps", 2, 8, (6, 11), 20, (3, 3), (2, 1), (1, 0, 1, 2), (1, 1), 1, True),
    ("half_one_sum_1x1", 1, 27, (5, 13), 9, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, False),
    ("half_long_k_1x1", 1, 300, (3, 4), 33, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
    ("half_grouped_dilated", 1, 48, (6, 7), 40, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 2, True),
    # Tiles across output rows (GemmSpec::span: x86-64-avx2, 32 or more
    # input channels per group): across batch entries, stride 2, dilation
    # with pads past the kernel, groups over rows of 3, 1-D over a batch.
    ("span_batch2_stride2", 2, 40, (9, 11), 21, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, True),
    ("span_pads_beyond_dilated", 1, 33, (5, 7), 19, (3, 2), (1, 1), (3, 2, 4, 3), (2, 1), 1, False),
    ("span_grouped_rows_of_3", 1, 64, (3, 3), 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2, True),
    ("span_1d_batch2", 2, 32, (29,), 24, (5,), (2,), (2, 2), (1,), 1, True),
    # 3-D: depth slices unfolded, then the 2-D GEMM kernel.
    ("conv3d_3x3x3", 1, 4, (5, 7, 6), 9, (3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 1, True),
    ("conv3d_c1_stride3_dil2", 2, 1, (11, 8, 13), 5, (3, 2, 3), (3, 1, 3), (2, 0, 1, 4, 1, 0), (2, 1, 2), 1, False),
    ("conv3d_pads_beyond_grouped", 1, 6, (3, 5, 4), 6, (2, 3, 1), (1, 2, 1), (3, 1, 0, 2, 4, 0), (1, 1, 1), 3, True),
    ("conv3d_depthwise", 1, 5, (4, 6, 7), 5, (3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 5, True),
]


# (name, N, C, spatial, OC per group, kernel, strides, pads, dilations, output_padding, group, bias)
TRANSPOSE_CASES = [
    ("unet_2x2_s2", 1, 16, (8, 7), 8, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), (0, 0), 1, True),
    ("3x3_s2_pad_opad", 1, 5, (5, 6), 7, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (1, 1), 1, True),
    ("stride3_dil2", 2, 3, (4, 5), 4, (3, 2), (3, 3), (2, 0, 1, 1), (2, 2), (0, 2), 1, False),
    ("one_channel", 1, 1, (6, 3), 1, (4, 4), (2, 1), (1, 0, 2, 0), (1, 1), (0, 0), 1, True),
    ("conv1d", 1, 9, (23,), 13, (5,), (3,), (2, 1), (1,), (1,), 1, True),
    ("grouped", 1, 6, (5, 5), 2, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (0, 0), 3, True),
]


# (name, N, C, spatial, OC, pads(begin+end), bias)
WINOGRAD_CASES = [
    ("one_channel", 1, 1, (9, 7), 1, (1, 1, 1, 1), True),
    ("prime_sizes", 1, 5, (13, 11), 17, (1, 1, 1, 1), False),
    ("batch2_no_pad", 2, 16, (10, 10), 24, (0, 0, 0, 0), True),
    ("pads_beyond_kernel", 1, 7, (6, 9), 9, (4, 3, 2, 5), True),
    ("output_1x1", 1, 3, (3, 3), 5, (0, 0, 0, 0), True),
    ("wide_channels", 1, 67, (14, 14), 70, (1, 1, 1, 1), True),
    ("one_row", 1, 4, (1, 20), 6, (1, 1, 1, 1), True),
    ("tall_thin", 1, 9, (23, 2), 8, (1, 0, 1, 1), True),
    # Many tiles, few channels: the grouped GEMM's tasks split the tiles.
    ("many_tiles_few_channels", 1, 12, (29, 37), 8, (1, 1, 1, 1), True),
]


def winograd_cases(out_dir, rng):
    for name, n, c, sp, oc, pads, bias in WINOGRAD_CASES:
        x = rng.standard_normal((n, c) + sp).astype(np.float32)
        w = (rng.standard_normal((oc, c, 3, 3)) / np.sqrt(c * 9)).astype(np.float32)
        b = rng.standard_normal(oc).astype(np.float32) if bias else None
        attrs = dict(kernel_shape=[3, 3], pads=list(pads))
        if c >= 8:
            save(out_dir, "winograd_" + name, attrs, x, w, b, conv_ref(x, w, b, (1, 1), pads, (1, 1), 1))
            continue
        # Winograd reads channels-last; an input of fewer than 8 channels
        # the application writes stays NCHW (read in place by the direct
        # GEMM), so these convolve x * 0.5 (exact), which a loop kernel
        # writes channels-last.
        y = conv_ref(x * np.float32(0.5), w, b, (1, 1), pads, (1, 1), 1)
        ins = ["h", "w"] + (["b"] if bias else [])
        nodes = [helper.make_node("Mul", ["x", "half"], ["h"]), helper.make_node("Conv", ins, ["y"], **attrs)]
        inits = [numpy_helper.from_array(np.array(0.5, np.float32), "half"), numpy_helper.from_array(w, "w")]
        if bias:
            inits.append(numpy_helper.from_array(b, "b"))
        save_graph(out_dir, "winograd_" + name, nodes, inits, x, y)
    # Relu(Conv(x) + x): the residual is the convolution's own input, read
    # by the output transform's epilogue (and written over in place).
    c, sp = 12, (11, 13)
    x = rng.standard_normal((2, c) + sp).astype(np.float32)
    w = (rng.standard_normal((c, c, 3, 3)) / np.sqrt(c * 9)).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    y = np.maximum(conv_ref(x, w, b, (1, 1), (1, 1, 1, 1), (1, 1), 1) + x, 0).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "x"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    save_graph(out_dir, "winograd_residual_relu", nodes, [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
               x, y)
    return len(WINOGRAD_CASES) + 1


def activation_cases(out_dir):
    """Conv -> activation -> conv, exported by PyTorch (its output is the
    reference): the activation subgraph must fuse into the first conv."""
    import warnings
    import torch
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)

    class Net(torch.nn.Module):
        def __init__(self, act):
            super().__init__()
            self.c, self.act, self.d = torch.nn.Conv2d(8, 16, 3, padding=1), act, torch.nn.Conv2d(16, 5, 1)

        def forward(self, x):
            return self.d(self.act(self.c(x)))

    class Depthwise(torch.nn.Module):
        # A depthwise convolution with the activation fused: 13 channels
        # (a partial last vector everywhere), rows of 9 (a short last tile),
        # a 3x3 window at stride 1 or a 5x5 one at stride 2.
        def __init__(self, act, k, stride):
            super().__init__()
            self.c = torch.nn.Conv2d(13, 13, k, stride=stride, padding=k // 2, groups=13)
            self.act, self.d = act, torch.nn.Conv2d(13, 5, 1)

        def forward(self, x):
            return self.d(self.act(self.c(x)))

    acts = [("gelu", torch.nn.GELU()), ("mish", torch.nn.Mish()), ("hardswish", torch.nn.Hardswish()),
            ("silu", torch.nn.SiLU())]
    cases = [(name, lambda a=act: Net(a), (1, 8, 11, 9)) for name, act in acts]
    cases += [("depthwise_silu", lambda: Depthwise(torch.nn.SiLU(), 3, 1), (1, 13, 11, 9)),
              ("depthwise_gelu_5x5_s2", lambda: Depthwise(torch.nn.GELU(), 5, 2), (1, 13, 15, 17))]
    for name, make, shape in cases:
        torch.manual_seed(0)
        net = make().eval()
        x = torch.randn(*shape)
        d = os.path.join(out_dir, "epilogue_" + name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        torch.onnx.export(net, x, os.path.join(d, "model.onnx"), opset_version=13, input_names=["x"],
                          output_names=["y"])
        with torch.no_grad():
            y = net(x).numpy()
        for fname, arr, tname in (("input_0.pb", x.numpy(), "x"), ("output_0.pb", y, "y")):
            with open(os.path.join(d, "test_data_set_0", fname), "wb") as f:
                f.write(numpy_helper.from_array(arr, tname).SerializeToString())
    return len(cases)


def pool_ref(x, k, strides, pads, dil, is_max, include_pad):
    """MaxPool / AveragePool in float64 (ceil_mode 0): NaN propagates
    through a max; an average divides by its window's inputs, or by the
    whole window with count_include_pad."""
    nsp = x.ndim - 2
    fill = -np.inf if is_max else 0.0
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)],
                constant_values=fill)
    ones = np.pad(np.ones(x.shape[2:]), [(pads[i], pads[i + nsp]) for i in range(nsp)])
    out_sp = [(xp.shape[2 + i] - ((k[i] - 1) * dil[i] + 1)) // strides[i] + 1 for i in range(nsp)]
    terms, counts = [], []
    for tap in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(nsp))
        terms.append(xp[(slice(None), slice(None)) + sl])
        counts.append(ones[sl])
    t = np.stack(terms)
    if is_max:
        y = np.max(t, axis=0)  # NaN if any term is NaN
    else:
        n = float(np.prod(k)) if include_pad else np.sum(np.stack(counts), axis=0)
        y = np.sum(t, axis=0) / n
    return y.astype(np.float32)


# (name, N, C, spatial, kernel, strides, pads(begin+end), dilations, max, count_include_pad, after a conv)
# After a 1x1 convolution the pool reads channels-last data (one vector of
# channels per pixel, tasks per output pixel: interior pixels take the
# window without padding checks); alone it reads NCHW rows. NaNs in the
# input (max pools) at a corner, an edge and the interior must reach
# every window that holds them.
POOL_CASES = [
    ("max3x3_s2_stem", 1, 24, (17, 15), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, False, True),
    ("max2x2_s2_odd", 2, 11, (9, 13), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), True, False, True),
    ("max5x3_asym_pads", 1, 19, (12, 10), (5, 3), (1, 2), (2, 0, 1, 1), (1, 1), True, False, True),
    ("max_dilated_pads", 1, 33, (14, 11), (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), True, False, True),
    ("max_nchw_rows", 1, 3, (20, 21), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, False, False),
    ("max_1d", 2, 17, (41,), (4,), (3,), (2, 1), (1,), True, False, True),
    ("max_3d", 1, 9, (6, 7, 5), (3, 3, 2), (1, 2, 1), (1, 1, 0, 1, 1, 1), (1, 1, 1), True, False, True),
    ("avg3x3_excl_pad", 1, 20, (13, 11), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False, False, True),
    ("avg3x3_incl_pad", 1, 20, (13, 11), (3, 3), (2, 1), (1, 1, 1, 1), (1, 1), False, True, True),
    ("avg_big_window", 1, 7, (10, 12), (5, 4), (2, 3), (2, 1, 2, 3), (1, 1), False, False, True),
]


def pool_cases(out_dir, rng):
    for name, n, c, sp, k, s, pads, dil, is_max, incl, after_conv in POOL_CASES:
        x = rng.standard_normal((n, c) + sp).astype(np.float32)
        nsp = len(sp)
        if is_max:  # NaNs at a corner, on the first row's middle and inside
            for at in ((0,) * nsp, (0,) + tuple(d // 2 for d in sp[1:]), tuple(d // 2 for d in sp)):
                x[(0, c // 2) + at] = np.nan
        attrs = dict(kernel_shape=list(k), strides=list(s), pads=list(pads))
        if is_max:
            attrs["dilations"] = list(dil)
        else:
            attrs["count_include_pad"] = int(incl)
        op = "MaxPool" if is_max else "AveragePool"
        if not after_conv:
            y = pool_ref(x, k, s, pads, dil, is_max, incl)
            save_graph(out_dir, "pool_" + name, [helper.make_node(op, ["x"], ["y"], **attrs)], [], x, y)
            continue
        # y = pool(conv1x1(x)); NaNs in x reach every channel of their pixel
        w = (rng.standard_normal((c, c) + (1,) * nsp) / np.sqrt(c)).astype(np.float32)
        b = rng.standard_normal(c).astype(np.float32)
        h = conv_ref(x, w, b, (1,) * nsp, (0,) * (2 * nsp), (1,) * nsp, 1)
        y = pool_ref(h, k, s, pads, dil, is_max, incl)
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["h"], kernel_shape=[1] * nsp),
                 helper.make_node(op, ["h"], ["y"], **attrs)]
        inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
        save_graph(out_dir, "pool_" + name, nodes, inits, x, y)
    return len(POOL_CASES)


# Depthwise convolutions after the layer that writes their input, so that
# under --precision fp16 (passes/half_depthwise.cpp) the writer stores it
# as half and the depthwise multiplies in half: (name, N, C_in, C, spatial,
# kernel, strides, pads, dilations, writer, extra), writer "pw" a 1x1
# convolution + Relu (a GEMM), "mul" x * 0.5 (a loop kernel; C_in = C);
# extra "dw": a second depthwise 3x3 after the first (its input written by
# a half depthwise), "residual": the output plus the depthwise's input
# (the depthwise's epilogue reads it, as half), "pool": plus a max pool of
# it (another kernel reads it: it stays float, the depthwise too), "pw": a
# 1x1 convolution to 13 channels after it (a half GEMM over the half
# output of the depthwise; 37 input channels: 4 vectors of 8 and 5 more).
HALF_DEPTHWISE_CASES = [
    ("pw_3x3", 1, 5, 24, (13, 11), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), "pw", None),
    ("pw_odd_channels_s2", 2, 7, 37, (9, 7), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), "pw", None),
    ("mul_5x5_s2", 1, 20, 20, (15, 15), (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), "mul", None),
    ("pw_7x7_row_sums", 1, 6, 16, (12, 10), (7, 7), (1, 1), (3, 3, 3, 3), (1, 1), "pw", None),
    ("pw_dil2_three_channels", 1, 4, 3, (6, 5), (3, 3), (1, 1), (4, 3, 2, 4), (2, 2), "pw", None),
    ("pw_1d", 1, 9, 33, (41,), (7,), (1,), (3, 3), (1,), "pw", None),
    ("pw_stride3_nonsquare", 1, 8, 17, (19, 8), (3, 1), (3, 1), (1, 0, 1, 0), (1, 1), "pw", None),
    ("pw_two_depthwise", 1, 6, 40, (10, 9), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), "pw", "dw"),
    ("pw_residual", 1, 6, 24, (8, 9), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), "pw", "residual"),
    ("pw_second_reader", 1, 6, 24, (8, 9), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), "pw", "pool"),
    ("pw_dw_pw_odd", 1, 9, 37, (7, 6), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), "pw", "pw"),
]


def half_depthwise_cases(out_dir, rng):
    for name, n, cin, c, sp, k, s, pads, dil, writer, extra in HALF_DEPTHWISE_CASES:
        nsp = len(sp)
        x = rng.standard_normal((n, cin) + sp).astype(np.float32)
        if writer == "pw":
            wp = (rng.standard_normal((c, cin) + (1,) * nsp) / np.sqrt(cin)).astype(np.float32)
            bp = rng.standard_normal(c).astype(np.float32)
            h = np.maximum(conv_ref(x, wp, bp, (1,) * nsp, (0,) * (2 * nsp), (1,) * nsp, 1), 0).astype(np.float32)
            nodes = [helper.make_node("Conv", ["x", "wp", "bp"], ["p"], kernel_shape=[1] * nsp),
                     helper.make_node("Relu", ["p"], ["h"])]
            inits = [numpy_helper.from_array(wp, "wp"), numpy_helper.from_array(bp, "bp")]
        else:
            h = x * np.float32(0.5)
            nodes = [helper.make_node("Mul", ["x", "half"], ["h"])]
            inits = [numpy_helper.from_array(np.array(0.5, np.float32), "half")]
        w = (rng.standard_normal((c, 1) + k) / np.sqrt(np.prod(k))).astype(np.float32)
        b = rng.standard_normal(c).astype(np.float32)
        y = conv_ref(h, w, b, s, pads, dil, c).astype(np.float32)
        attrs = dict(kernel_shape=list(k), strides=list(s), pads=list(pads), dilations=list(dil), group=c)
        nodes.append(helper.make_node("Conv", ["h", "w", "b"], ["d"], **attrs))
        inits += [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
        if extra == "dw":
            w2 = (rng.standard_normal((c, 1, 3, 3)) / 3).astype(np.float32)
            y = conv_ref(y, w2, None, (1, 1), (1, 1, 1, 1), (1, 1), c).astype(np.float32)
            nodes.append(helper.make_node("Conv", ["d", "w2"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c))
            inits.append(numpy_helper.from_array(w2, "w2"))
        elif extra == "residual":
            y = (y + h).astype(np.float32)
            nodes.append(helper.make_node("Add", ["d", "h"], ["y"]))
        elif extra == "pw":
            w2 = (rng.standard_normal((13, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
            y = conv_ref(y, w2, None, (1, 1), (0, 0, 0, 0), (1, 1), 1).astype(np.float32)
            nodes.append(helper.make_node("Conv", ["d", "w2"], ["y"], kernel_shape=[1, 1]))
            inits.append(numpy_helper.from_array(w2, "w2"))
        elif extra == "pool":
            y = (y + pool_ref(h, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), True, False)).astype(np.float32)
            nodes += [helper.make_node("MaxPool", ["h"], ["m"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                      helper.make_node("Add", ["d", "m"], ["y"])]
        else:
            nodes[-1].output[0] = "y"
        save_graph(out_dir, "half_depthwise_" + name, nodes, inits, x, y)
    return len(HALF_DEPTHWISE_CASES)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    rng = np.random.default_rng(7)
    for name, n, c, sp, oc, k, s, pads, dil, group, bias in CASES:
        x = rng.standard_normal((n, c) + sp).astype(np.float32)
        w = (rng.standard_normal((oc, c // group) + k) / np.sqrt(c // group * np.prod(k))).astype(np.float32)
        b = rng.standard_normal(oc).astype(np.float32) if bias else None
        y = conv_ref(x, w, b, s, pads, dil, group)
        attrs = dict(kernel_shape=list(k), strides=list(s), pads=list(pads), dilations=list(dil), group=group)
        save(out_dir, "conv_" + name, attrs, x, w, b, y)
    for name, n, c, sp, ocg, k, s, pads, dil, opad, group, bias in TRANSPOSE_CASES:
        x = rng.standard_normal((n, c) + sp).astype(np.float32)
        w = (rng.standard_normal((c, ocg) + k) / np.sqrt(c * np.prod(k))).astype(np.float32)
        b = rng.standard_normal(ocg * group).astype(np.float32) if bias else None
        y = conv_transpose_ref(x, w, b, s, pads, dil, opad, group)
        attrs = dict(kernel_shape=list(k), strides=list(s), pads=list(pads), dilations=list(dil),
                     output_padding=list(opad), group=group)
        save(out_dir, "convtranspose_" + name, attrs, x, w, b, y, op="ConvTranspose")
    n = activation_cases(out_dir) + pool_cases(out_dir, rng)
    n += half_depthwise_cases(out_dir, np.random.default_rng(13))
    print(f"wrote {len(CASES) + len(TRANSPOSE_CASES) + n} cases to {out_dir}")
    if len(sys.argv) == 3:
        n = winograd_cases(sys.argv[2], np.random.default_rng(11))
        print(f"wrote {n} cases to {sys.argv[2]}")


if __name__ == "__main__":
    main()
