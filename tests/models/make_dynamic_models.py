#!/usr/bin/python3
"""Models with run-time dimensions (issue 26) in the ONNX backend-test layout,
each compiled once for a range and run at several shapes:
  OUT/<case>/model.onnx, OUT/<case>/tinyrt_dims.txt (the compile options:
  "--dim NAME=MIN:MAX" or "--input-shape NAME=D0,MIN:MAX,..." lines),
  OUT/<case>/test_data_set_K/{input_*,output_*}.pb at the K-th shape,
  the bounds and 1 among them; references computed with numpy.

Usage: make_dynamic_models.py OUTDIR

Nothing here is committed; the build runs it (tests/CMakeLists.txt)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(26)


def write_case(out, name, model, options, sets):
    """sets: [(inputs [np arrays in graph input order], outputs [np arrays])]."""
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "tinyrt_dims.txt"), "w") as f:
        f.write("".join(o + "\n" for o in options))
    for k, (ins, outs) in enumerate(sets):
        sd = os.path.join(d, "test_data_set_%d" % k)
        os.makedirs(sd, exist_ok=True)
        for i, (vi, x) in enumerate(zip(model.graph.input, ins)):
            t = numpy_helper.from_array(x, vi.name)
            open(os.path.join(sd, "input_%d.pb" % i), "wb").write(t.SerializeToString())
        for i, (vi, y) in enumerate(zip(model.graph.output, outs)):
            t = numpy_helper.from_array(y, vi.name)
            open(os.path.join(sd, "output_%d.pb" % i), "wb").write(t.SerializeToString())


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def make_model(nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def mlp(out):
    """A dense network over T frames: [T, 16] -> MatMul, Add, Relu -> Gemm -> Softmax."""
    w1, b1, w2, b2 = f32(16, 32, scale=0.3), f32(32), f32(8, 32, scale=0.3), f32(8)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Relu", ["hb"], ["r"]),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["z"], transB=1),
        helper.make_node("Softmax", ["z"], ["y"], axis=-1),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", 16])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["T", 8])],
                       {"w1": w1, "b1": b1, "w2": w2, "b2": b2})
    sets = []
    for t in (1, 7, 16, 64):
        x = f32(t, 16)
        sets.append(([x], [softmax(np.maximum(x @ w1 + b1, 0) @ w2.T + b2)]))
    write_case(out, "dyn_mlp", model, ["--dim T=1:64"], sets)


def masked_frames(out):
    """[1, T, 40] features times a [1, T, 1] mask, a per-feature bias, Sigmoid:
    a run-time axis that is not the outermost, two inputs sharing it."""
    bias = f32(40)
    nodes = [
        helper.make_node("Mul", ["x", "mask"], ["m"]),
        helper.make_node("Add", ["m", "bias"], ["a"]),
        helper.make_node("Sigmoid", ["a"], ["y"]),
    ]
    model = make_model(nodes, [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "T", 40]),
        helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, "T", 1])
    ], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "T", 40])], {"bias": bias})
    sets = []
    for t in (1, 5, 33, 48):
        x, mask = f32(1, t, 40), (RNG.random((1, t, 1)) > 0.3).astype(np.float32)
        sets.append(([x, mask], [1 / (1 + np.exp(-(x * mask + bias)))]))
    write_case(out, "dyn_masked_frames", model, ["--dim T=1:48"], sets)


def inner_axis(out):
    """[4, W] with W a run-time innermost axis (rows of any length, vector
    tails under a run-time mask), given as an --input-shape range."""
    nodes = [
        helper.make_node("Tanh", ["x"], ["t"]),
        helper.make_node("Mul", ["t", "two"], ["t2"]),
        helper.make_node("Add", ["t2", "x"], ["y"]),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, "W"])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, "W"])],
                       {"two": np.array(2, np.float32)})
    sets = []
    for w in (1, 3, 8, 19, 37):
        x = f32(4, w)
        sets.append(([x], [np.tanh(x) * 2 + x]))
    write_case(out, "dyn_inner_axis", model, ["--input-shape x=4,1:37"], sets)


def middle_axis(out):
    """[2, H, 8] + [2, H, 8] with H in the middle: the runtime moves the
    inputs into the layout of the bounds and the output back."""
    nodes = [helper.make_node("Sub", ["a", "b"], ["d"]), helper.make_node("Abs", ["d"], ["y"])]
    model = make_model(nodes, [
        helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, "H", 8]),
        helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, "H", 8])
    ], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "H", 8])], {})
    sets = []
    for h in (1, 3, 10):
        a, b = f32(2, h, 8), f32(2, h, 8)
        sets.append(([a, b], [np.abs(a - b)]))
    write_case(out, "dyn_middle_axis", model, ["--dim H=1:10"], sets)


def shape_ops(out):
    """Sizes computed from a run-time extent, as text models compute them:
    positions Range(0, T) gathering a position embedding, Range(T, 0, -1)
    counting down, Expand(w, Shape(x)), Tile(w, [T, 1]) and Tile(x, [2, 1])
    (2T rows, each of x's read at row % T)."""
    emb, w, w2 = f32(64, 8), f32(1, 8), f32(1, 8)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["t"], axis=0),
        helper.make_node("Range", ["zero", "t", "one"], ["pos"]),
        helper.make_node("Gather", ["emb", "pos"], ["pe"], axis=0),
        helper.make_node("Range", ["t", "zero", "minus_one"], ["down"]),
        helper.make_node("Cast", ["down"], ["downf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["downf", "axis1"], ["down1"]),
        helper.make_node("Expand", ["w", "s"], ["e"]),
        helper.make_node("Mul", ["e", "down1"], ["ed"]),
        helper.make_node("Unsqueeze", ["t", "axis0"], ["t1"]),
        helper.make_node("Concat", ["t1", "axis1"], ["reps"], axis=0),
        helper.make_node("Tile", ["w2", "reps"], ["tw"]),
        helper.make_node("Add", ["x", "pe"], ["a"]),
        helper.make_node("Add", ["a", "ed"], ["b"]),
        helper.make_node("Add", ["b", "tw"], ["y"]),
        helper.make_node("Tile", ["x", "two_one"], ["z"]),
    ]
    inits = {"emb": emb, "w": w, "w2": w2, "zero": np.array(0, np.int64), "one": np.array(1, np.int64),
             "minus_one": np.array(-1, np.int64), "axis0": np.array([0], np.int64),
             "axis1": np.array([1], np.int64), "two_one": np.array([2, 1], np.int64)}
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", 8])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["T", 8]),
                        helper.make_tensor_value_info("z", TensorProto.FLOAT, ["T2", 8])], inits)
    sets = []
    for t in (1, 2, 9, 64):
        x = f32(t, 8)
        down = np.arange(t, 0, -1, dtype=np.float32)[:, None]
        sets.append(([x], [x + emb[:t] + w * down + w2, np.concatenate([x, x])]))
    write_case(out, "dyn_shape_ops", model, ["--dim T=1:64"], sets)


def topk(out):
    """TopK over slices of every kind: float [3, T, 5] along its run-time
    middle axis (k = 4 past a shorter T returns the whole slice), int32
    [7, 6] smallest first with many ties (k = the whole axis), uint8 [2, 50]
    largest 10 with ties: ties go to the lower index."""
    nodes = [helper.make_node("TopK", ["x", "four"], ["xv", "xi"], axis=1),
             helper.make_node("TopK", ["y", "six"], ["yv", "yi"], axis=1, largest=0),
             helper.make_node("TopK", ["z", "ten"], ["zv", "zi"], axis=-1)]
    inits = {"four": np.array([4], np.int64), "six": np.array([6], np.int64), "ten": np.array([10], np.int64)}
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, "T", 5]),
                               helper.make_tensor_value_info("y", TensorProto.INT32, [7, 6]),
                               helper.make_tensor_value_info("z", TensorProto.UINT8, [2, 50])],
                       [helper.make_tensor_value_info("xv", TensorProto.FLOAT, [3, "K", 5]),
                        helper.make_tensor_value_info("xi", TensorProto.INT64, [3, "K", 5]),
                        helper.make_tensor_value_info("yv", TensorProto.INT32, [7, 6]),
                        helper.make_tensor_value_info("yi", TensorProto.INT64, [7, 6]),
                        helper.make_tensor_value_info("zv", TensorProto.UINT8, [2, 10]),
                        helper.make_tensor_value_info("zi", TensorProto.INT64, [2, 10])], inits)

    def top(a, k, axis, largest):
        order = np.argsort(-a.astype(np.float64) if largest else a, axis=axis, kind="stable")
        idx = np.take(order, np.arange(min(k, a.shape[axis])), axis=axis)
        return np.take_along_axis(a, idx, axis=axis), idx.astype(np.int64)

    sets = []
    for t in (1, 3, 4, 17, 40):
        x = np.round(f32(3, t, 5), 1)  # (ties)
        y = RNG.integers(-1, 2, (7, 6)).astype(np.int32)
        z = RNG.integers(0, 12, (2, 50)).astype(np.uint8)
        sets.append(([x, y, z], [*top(x, 4, 1, True), *top(y, 6, 1, False), *top(z, 10, 1, True)]))
    write_case(out, "dyn_topk", model, ["--dim T=1:40"], sets)


def loop(out):
    """A Loop whose trip count is a run-time extent (T = Shape(x)[0], as a
    scripted PyTorch loop over x.size(0) exports): a running sum of x's rows
    and a step counter carried, each step's sum (times 2) and its row's
    softmax stacked as scan outputs [T, 4]."""
    body = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
         helper.make_node("Add", ["s_in", "row"], ["s_out"]),
         helper.make_node("Add", ["n_in", "one"], ["n_out"]),
         helper.make_node("Mul", ["s_out", "two"], ["twice"]),
         helper.make_node("Softmax", ["row"], ["soft"], axis=-1),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("n_in", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("n_out", TensorProto.INT64, []),
         helper.make_tensor_value_info("twice", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("soft", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(1, np.int64), "one"), numpy_helper.from_array(np.float32(2), "two")])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["t"], axis=0),
        helper.make_node("Loop", ["t", "true", "s0", "n0"], ["s", "n", "sums", "softs"], body=body),
    ]
    inits = {"zero": np.array(0, np.int64), "true": np.array(True), "s0": f32(4), "n0": np.array(0, np.int64)}
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", 4])],
                       [helper.make_tensor_value_info("s", TensorProto.FLOAT, [4]),
                        helper.make_tensor_value_info("n", TensorProto.INT64, []),
                        helper.make_tensor_value_info("sums", TensorProto.FLOAT, ["T", 4]),
                        helper.make_tensor_value_info("softs", TensorProto.FLOAT, ["T", 4])], inits)
    sets = []
    for t in (1, 2, 7, 16):
        x = f32(t, 4)
        sums = inits["s0"] + np.cumsum(x, axis=0)
        sets.append(([x], [sums[-1], np.array(t, np.int64), 2 * sums, softmax(x)]))
    write_case(out, "dyn_loop", model, ["--dim T=1:16"], sets)


def function_module():
    """A torch module class running the function it is given."""
    from torch import nn

    class Fn(nn.Module):
        def __init__(self, f):
            super().__init__()
            self.f = f

        def forward(self, x):
            return self.f(x)

    return Fn


def torch_case(out, name, module, example, dynamic_axes, options, shapes, opset=14, failing=()):
    """Exports a PyTorch module with `dynamic_axes` and writes a test set per
    input shape in `shapes` (tuples, one per input), PyTorch's outputs as
    the references; then one per (shapes, text) of `failing`, a run that
    must stop with that text (expected_error.txt)."""
    import torch
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    names = ["in%d" % i for i in range(len(example))]
    torch.onnx.export(module, tuple(example), path, input_names=names, output_names=["out"],
                      dynamic_axes=dynamic_axes, opset_version=opset)
    model = onnx.load(path)
    sets = []
    with torch.no_grad():
        for shape in shapes:
            ins = [torch.randn(*s) for s in shape]
            y = module(*ins)
            sets.append(([x.numpy() for x in ins], [y.numpy()]))
    write_case(out, name, model, options, sets)
    for k, (shape, text) in enumerate(failing):
        sd = os.path.join(d, "test_data_set_%d" % (len(sets) + k))
        os.makedirs(sd, exist_ok=True)
        for i, (vi, s) in enumerate(zip(model.graph.input, shape)):
            t = numpy_helper.from_array(torch.randn(*s).numpy(), vi.name)
            open(os.path.join(sd, "input_%d.pb" % i), "wb").write(t.SerializeToString())
        with open(os.path.join(sd, "expected_error.txt"), "w") as f:
            f.write(text + "\n")


def transformer(out):
    """A transformer encoder over T frames, exported by PyTorch with a
    dynamic T: Shape/Gather/Concat feed its Reshapes, attention's softmax
    and P V run over T."""
    import torch
    from torch import nn
    torch.manual_seed(26)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(40, 64)
            layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.out = nn.Linear(64, 10)

        def forward(self, x):
            return self.out(self.enc(self.inp(x)))

    m = Encoder().eval()
    torch_case(out, "dyn_transformer", m, [torch.randn(1, 20, 40)], {"in0": {1: "T"}, "out": {1: "T"}},
               ["--dim T=1:64"], [[(1, t, 40)] for t in (1, 7, 16, 33, 64)])


def recurrent(out):
    """A GRU over T steps (2 layers, batch 1) and a bidirectional LSTM over
    T steps with 2 sequences (layout 0: T outermost), exported with a
    dynamic T: one loop over the actual steps, the final state from the
    last one."""
    import torch
    from torch import nn
    torch.manual_seed(27)

    class Gru(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(20, 32, num_layers=2)
            self.fc = nn.Linear(32, 5)

        def forward(self, x):
            y, h = self.gru(x)
            return self.fc(y + h[-1].unsqueeze(0))

    class BiLstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(12, 16, bidirectional=True)

        def forward(self, x):
            y, (h, c) = self.lstm(x)
            return y * 0.5 + (h[0] + c[1]).unsqueeze(0).repeat(1, 1, 2)

    torch_case(out, "dyn_gru", Gru().eval(), [torch.randn(10, 1, 20)], {"in0": {0: "T"}, "out": {0: "T"}},
               ["--dim T=1:200"], [[(t, 1, 20)] for t in (1, 13, 50, 123, 200)])
    torch_case(out, "dyn_bilstm", BiLstm().eval(), [torch.randn(10, 2, 12)], {"in0": {0: "T"}, "out": {0: "T"}},
               ["--dim T=1:40"], [[(t, 2, 12)] for t in (1, 2, 17, 40)])


def segmenter(out):
    """A fully convolutional segmenter over images of any size in 16:96 x
    16:96, exported by PyTorch with dynamic H and W: conv + batch norm +
    ReLU, max pooling, a strided conv, a depthwise conv, channel attention
    (global average pooling), nearest upsampling by 2, bilinear resizing
    back to the input's size (sizes computed from its Shape), a skip
    connection at full resolution, per-pixel class scores."""
    import torch
    from torch import nn
    torch.manual_seed(29)

    class Fcn(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
            self.pool = nn.MaxPool2d(2)
            self.mid = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU(),
                                     nn.Conv2d(32, 32, 3, padding=1, groups=32), nn.ReLU())
            self.att = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(32, 32, 1), nn.Sigmoid())
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.reduce = nn.Conv2d(32, 8, 1)
            self.skip = nn.Conv2d(16, 8, 1)
            self.head = nn.Conv2d(8, 4, 1)

        def forward(self, x):
            f1 = self.stem(x)
            f = self.mid(self.pool(f1))
            f = self.reduce(self.up(f * self.att(f)))
            f = nn.functional.interpolate(f, size=x.shape[-2:], mode="bilinear", align_corners=False)
            return self.head(torch.relu(f + self.skip(f1)))

    m = Fcn().eval()
    with torch.no_grad():  # batch-norm statistics that are not the identity
        m.stem[1].running_mean.uniform_(-0.5, 0.5)
        m.stem[1].running_var.uniform_(0.5, 2.0)
    torch_case(out, "dyn_segmenter", m, [torch.randn(1, 3, 32, 32)], {"in0": {2: "H", 3: "W"}, "out": {2: "H", 3: "W"}},
               ["--dim H=16:96", "--dim W=16:96"], [[(1, 3, h, w)] for h, w in ((16, 16), (24, 40), (37, 29), (64, 48),
                                                                                   (96, 96))])


def unet(out):
    """A small U-Net over images whose sides are multiples of 4 in 16:96:
    two max-pooling encoder stages, a bottleneck with instance
    normalization, 2x2 stride-2 transposed convolutions back up, each
    concatenated with its encoder's skip (the skip's H against the
    decoder's 2 * (H / 2): equal for the sizes the network takes, tested
    by the run; an odd size stops the run with TINYRT_ERR_SHAPE, as it
    fails in PyTorch), per-pixel class scores."""
    import torch
    from torch import nn
    torch.manual_seed(41)

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2 = block(3, 8), block(8, 16)
            self.mid = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.InstanceNorm2d(16, affine=True), nn.ReLU())
            self.u2, self.d2 = nn.ConvTranspose2d(16, 16, 2, stride=2), block(32, 8)
            self.u1, self.d1 = nn.ConvTranspose2d(8, 8, 2, stride=2), block(16, 8)
            self.head = nn.Conv2d(8, 3, 1)

        def forward(self, x):
            f1 = self.e1(x)
            f2 = self.e2(nn.functional.max_pool2d(f1, 2))
            m = self.mid(nn.functional.max_pool2d(f2, 2))
            y = self.d2(torch.cat([self.u2(m), f2], 1))
            y = self.d1(torch.cat([self.u1(y), f1], 1))
            return self.head(y) + x

    m = UNet().eval()
    with torch.no_grad():
        for b in (m.e1[1], m.e2[1], m.d2[1], m.d1[1]):
            b.running_mean.uniform_(-0.5, 0.5)
            b.running_var.uniform_(0.5, 2.0)
    torch_case(out, "dyn_unet", m, [torch.randn(1, 3, 32, 32)], {"in0": {2: "H", 3: "W"}, "out": {2: "H", 3: "W"}},
               ["--dim H=16:96", "--dim W=16:96"], [[(1, 3, h, w)] for h, w in ((16, 16), (24, 40), (64, 48),
                                                                                   (96, 96))],
               failing=[([(1, 3, 18, 16)], "extents differ in this run"),
                        ([(1, 3, 16, 17)], "extents differ in this run")])


def conv_ops(out):
    """Each op of a fully convolutional network alone over run-time image
    sizes (8:40 x 8:40; test sets at 8x8, 9x17, 16x16 and 33x40: odd widths
    leave partial tiles): 3x3 convolutions (stride 1 and 2), a 1x1 one,
    depthwise ones (stride 1 and 2), max pooling, nearest upsampling,
    bilinear resizing to the input's size and global average pooling."""
    import torch
    from torch import nn
    torch.manual_seed(3)
    fn = nn.functional
    Fn = function_module()

    ops = {"conv": nn.Conv2d(4, 8, 3, padding=1), "conv_s2": nn.Conv2d(4, 8, 3, stride=2, padding=1),
           "conv1x1": nn.Conv2d(4, 8, 1), "dw": nn.Conv2d(4, 4, 3, padding=1, groups=4),
           "dw_s2": nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4), "maxpool": nn.MaxPool2d(2),
           "upsample": nn.Upsample(scale_factor=2),
           "bilinear": Fn(lambda x: fn.interpolate(x[:, :, ::2, ::2] * 1.0, size=x.shape[-2:], mode="bilinear",
                                                    align_corners=False)),
           "gap": nn.AdaptiveAvgPool2d(1)}
    for name, op in ops.items():
        torch_case(out, "dyn_image_" + name, op.eval(), [torch.randn(1, 4, 20, 20)],
                   {"in0": {2: "H", 3: "W"}, "out": {2: "h", 3: "w"}}, ["--dim H=8:40", "--dim W=8:40"],
                   [[(1, 4, h, w)] for h, w in ((8, 8), (9, 17), (16, 16), (33, 40))])


def decoder_ops(out):
    """The ops of decoders, normalizing and super-resolution networks over
    run-time image sizes (8:40 x 8:40, the sets of conv_ops; 2 in 8:40 and
    even sizes where the op needs them): transposed convolutions (a U-Net's
    2x2 stride 2, a 3x3 stride 2 with output padding, 3x3 stride 1, a 1-D
    one over a run-time length), constant/reflect/edge padding, instance
    and group normalization (statistics over the run's pixels), layer
    normalization over channels (opset 17's LayerNormalization), pixel
    shuffle and unshuffle, and flattening the image to a sequence of
    pixels (H and W merged: a copy, as the bounds' layout differs)."""
    import torch
    from torch import nn
    torch.manual_seed(5)
    fn = nn.functional
    Fn = function_module()

    class ChannelsLast(nn.Module):
        def __init__(self, f):
            super().__init__()
            self.f = f

        def forward(self, x):
            return self.f(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    odd = ((8, 8), (9, 17), (16, 16), (33, 40))
    even = ((8, 8), (10, 18), (16, 16), (32, 40))
    inorm = nn.InstanceNorm2d(4, affine=True)
    gnorm = nn.GroupNorm(2, 4)
    lnorm = nn.LayerNorm(4)
    with torch.no_grad():
        for m in (inorm, gnorm, lnorm):
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.5, 0.5)
    ops = {"convT_2s2": (nn.ConvTranspose2d(4, 6, 2, stride=2), odd, 14),
           "convT_3s2": (nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1), odd, 14),
           "convT_3s1": (nn.ConvTranspose2d(4, 5, 3, padding=1), odd, 14),
           "pad": (Fn(lambda x: fn.pad(x, (1, 2, 3, 0), value=0.5)), odd, 14),
           "reflect": (nn.ReflectionPad2d((2, 1, 1, 2)), odd, 14),
           "edge": (nn.ReplicationPad2d(1), odd, 14),
           "instnorm": (inorm, odd, 14),
           "groupnorm": (gnorm, odd, 14),
           "layernorm": (ChannelsLast(lnorm), odd, 17),
           "shuffle": (nn.Sequential(nn.Conv2d(4, 8, 1), nn.PixelShuffle(2)), odd, 14),
           "unshuffle": (nn.PixelUnshuffle(2), even, 14),
           "tokens": (Fn(lambda x: torch.softmax(x.flatten(2).transpose(1, 2), -1)), odd, 14)}
    for name, (op, sizes, opset) in ops.items():
        # An odd size does not unshuffle (PyTorch refuses it too): the run stops.
        failing = [([(1, 4, 9, 8)], "extents differ in this run")] if sizes is even else []
        torch_case(out, "dyn_image_" + name, op.eval(), [torch.randn(1, 4, 20, 20)],
                   {"in0": {2: "H", 3: "W"}, "out": {}}, ["--dim H=8:40", "--dim W=8:40"],
                   [[(1, 4, h, w)] for h, w in sizes], opset=opset, failing=failing)
    torch_case(out, "dyn_seq_convT", nn.ConvTranspose1d(6, 3, 4, stride=2, padding=1).eval(),
               [torch.randn(2, 6, 16)], {"in0": {2: "T"}, "out": {}}, ["--dim T=1:50"],
               [[(2, 6, t)] for t in (1, 13, 50)])


def sequence_lengths(out):
    """A bidirectional LSTM and a GRU over T steps (T in 1:30) of 3
    sequences of their own lengths (sequence_lens, a graph input): Y is 0
    past each sequence's end, the final states are those of its last step
    (the reverse direction starts at each sequence's own end). References:
    PyTorch over packed sequences."""
    import torch
    from torch import nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    torch.manual_seed(28)

    class Layers(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(12, 16, bidirectional=True)
            self.gru = nn.GRU(12, 8)

        def forward(self, x):
            y, (h, c) = self.lstm(x)
            z, hg = self.gru(x)
            return y, h, c, z, hg

    m = Layers().eval()
    d = os.path.join(out, "dyn_sequence_lens")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    names = ["y", "h", "c", "z", "hg"]
    torch.onnx.export(m, (torch.randn(10, 3, 12),), path, input_names=["x"], output_names=names,
                      dynamic_axes={"x": {0: "T"}, "y": {0: "T"}, "z": {0: "T"}}, opset_version=14)
    model = onnx.load(path)
    model.graph.input.append(helper.make_tensor_value_info("lens", TensorProto.INT32, [3]))
    for node in model.graph.node:
        if node.op_type in ("LSTM", "GRU"):
            while len(node.input) < 5:
                node.input.append("")
            node.input[4] = "lens"
    sets = []
    for t, lens in ((1, (1, 1, 1)), (7, (7, 3, 1)), (19, (5, 19, 12)), (30, (30, 30, 30)), (30, (2, 29, 16))):
        x = torch.randn(t, 3, 12)
        n = torch.tensor(lens)
        with torch.no_grad():
            yp, (h, c) = m.lstm(pack_padded_sequence(x, n, enforce_sorted=False))
            zp, hg = m.gru(pack_padded_sequence(x, n, enforce_sorted=False))
        y = pad_packed_sequence(yp, total_length=t)[0]
        z = pad_packed_sequence(zp, total_length=t)[0]
        sets.append(([x.numpy(), np.array(lens, np.int32)], [v.numpy() for v in (y, h, c, z, hg)]))
    write_case(out, "dyn_sequence_lens", model, ["--dim T=1:30"], sets)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for make in (mlp, masked_frames, inner_axis, middle_axis, shape_ops, topk, loop, transformer, recurrent,
                 sequence_lengths, conv_ops, decoder_ops, segmenter, unet):
        make(out)


if __name__ == "__main__":
    main()
