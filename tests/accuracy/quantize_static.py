"""Static int8 quantization for the accuracy test, without ONNX Runtime:
min/max calibration runs the float ONNX model here (each node in PyTorch,
float32), the QDQ model is written by python_helpers/quantize/qdq.py (ORT's QDQ
format: uint8 asymmetric activations per tensor, int8 symmetric weights per
output channel in [-127, 127], int32 biases).

quantize_static() is the whole step: float model and calibration inputs in,
QDQ model out. It is kept apart from the test so that a compiler-side
`tinyrt-compile --quantize static` can replace it.

run_graph() also runs QDQ models (QuantizeLinear/DequantizeLinear as the
ONNX definition: round half to even, saturate), which gives the test a
reference for the int8 model that is independent of tinyrt."""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python_helpers", "quantize"))
import qdq  # noqa: E402

Q_RANGE = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127), np.dtype(np.int32): (-2 ** 31, 2 ** 31 - 1)}


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _per_axis(v, x, axis):
    """A 1-D scale or zero point shaped to broadcast along x's axis."""
    if v.ndim == 0:
        return v
    return v.reshape([-1 if i == axis % x.ndim else 1 for i in range(x.ndim)])


def _conv(x, w, b, a):
    t = lambda v: torch.from_numpy(np.array(v))  # a writable copy: initializers are read-only views
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("Conv auto_pad")
    pads = a.get("pads", [0] * 4)
    if pads[:2] != pads[2:]:
        raise NotImplementedError("asymmetric Conv pads")
    y = torch.nn.functional.conv2d(t(x), t(w), None if b is None else t(b), a.get("strides", [1, 1]), pads[:2],
                                   a.get("dilations", [1, 1]), a.get("group", 1))
    return y.numpy()


def _pool(x, a, kind):
    pads = a.get("pads", [0] * 4)
    if pads[:2] != pads[2:] or a.get("ceil_mode", 0) or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError(kind + " pads/ceil_mode/auto_pad")
    k = a["kernel_shape"]
    f = torch.nn.functional.max_pool2d if kind == "MaxPool" else torch.nn.functional.avg_pool2d
    kw = {} if kind == "MaxPool" else {"count_include_pad": bool(a.get("count_include_pad", 0))}
    return f(torch.from_numpy(x), k, a.get("strides", k), pads[:2], **kw).numpy()


def _gemm(x, w, c, a):
    if a.get("transA", 0):
        x = x.T
    if a.get("transB", 0):
        w = w.T
    y = np.float32(a.get("alpha", 1.0)) * (torch.from_numpy(np.array(x)) @ torch.from_numpy(np.array(w))).numpy()
    return y if c is None else y + np.float32(a.get("beta", 1.0)) * c


def _quantize(x, scale, zp, a):
    axis = a.get("axis", 1)
    lo, hi = Q_RANGE[zp.dtype]
    q = np.rint(x / _per_axis(scale, x, axis)) + _per_axis(zp, x, axis).astype(np.float64)
    return np.clip(q, lo, hi).astype(zp.dtype)


def _dequantize(x, scale, zp, a):
    axis = a.get("axis", 1)
    zp = np.zeros((), x.dtype) if zp is None else zp
    d = x.astype(np.int64) - _per_axis(zp, x, axis).astype(np.int64)
    return (d.astype(np.float32) * _per_axis(scale, x, axis)).astype(np.float32)


def run_graph(model, feeds):
    """Every tensor of the graph ({name: numpy array}) for the inputs feeds.
    Only the ops small CNNs and their QDQ forms use."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update(feeds)
    for n in model.graph.node:
        a = _attrs(n)
        x = [env[t] if t else None for t in n.input] + [None] * 3
        op = n.op_type
        if op == "Conv":
            y = _conv(x[0], x[1], x[2], a)
        elif op == "Relu":
            y = np.maximum(x[0], 0).astype(x[0].dtype)
        elif op in ("MaxPool", "AveragePool"):
            y = _pool(x[0], a, op)
        elif op == "GlobalAveragePool":
            y = x[0].mean(axis=(2, 3), keepdims=True, dtype=np.float32)
        elif op == "Flatten":
            axis = a.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:axis])), -1)
        elif op == "Reshape":
            y = x[0].reshape([d if d != 0 else x[0].shape[i] for i, d in enumerate(x[1])])
        elif op == "Gemm":
            y = _gemm(x[0], x[1], x[2], a)
        elif op == "Add":
            y = x[0] + x[1]
        elif op == "QuantizeLinear":
            y = _quantize(x[0], x[1], x[2], a)
        elif op == "DequantizeLinear":
            y = _dequantize(x[0], x[1], x[2], a)
        else:
            raise NotImplementedError(f"run_graph: op {op}")
        env[n.output[0]] = y
    return env


def calibrate_minmax(model, floats, inputs, batch=256):
    """{tensor: (min, max)} over inputs ({graph input: array [N, ...]}, run
    in batches) of every float tensor that is a graph input or node output."""
    names = [i.name for i in qdq.graph_inputs(model.graph)] + [t for n in model.graph.node for t in n.output]
    names = [t for t in names if t in floats]
    count = len(next(iter(inputs.values())))
    lo, hi = {}, {}
    for s in range(0, count, batch):
        env = run_graph(model, {k: v[s:s + batch] for k, v in inputs.items()})
        for t in names:
            lo[t] = min(lo.get(t, np.inf), float(env[t].min()))
            hi[t] = max(hi.get(t, -np.inf), float(env[t].max()))
    return {t: (lo[t], hi[t]) for t in names}


def quantize_static(float_model, inputs, out_path):
    """The quantization step: the float ONNX model (a path) calibrated with
    min/max over inputs ({graph input name: float32 array [N, ...]}),
    written to out_path in QDQ form. Returns a one-line summary."""
    model = onnx.load(float_model)
    floats = qdq.prepare(model)
    ranges = calibrate_minmax(model, floats, inputs)
    n_act, n_w, removed = qdq.quantize(model, ranges, floats, per_channel=True)
    onnx.save(model, out_path)
    return (f"{n_act} quantized activations, {n_w} per-channel int8 weights, {removed} Relu folded; "
            f"{qdq.summary(model)}")
