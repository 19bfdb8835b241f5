#!/usr/bin/python3
"""Dynamic int8 cases (issue 7; docs/QUANTIZATION.md), run with
`tinyrt-onnx-test --quantize dynamic --atol 0.02` on every target:

 * float/: float models whose MatMul, Gemm, LSTM, GRU (both reset forms)
   and RNN `--quantize dynamic` turns into int8 (odd sizes, rank-3
   products, both directions, batch > 1, initial states, several layers);
   PyTorch's outputs (numpy's for ONNX's default GRU) as reference;
 * onnxruntime/: ONNX Runtime's contrib ops com.microsoft.DynamicQuantizeLSTM
   and DynamicQuantizeMatMul as its quantizer writes them and as other
   tools might (int8 and uint8 weights, per-tensor and per-column scales,
   zero points that fit int8 after subtraction and ones that do not, which
   tinyrt quantizes again); the reference is the float op over the
   dequantized weights (numpy), so the only error is the activations'
   quantization;
 * emulated/: the same ONNX Runtime cases against tinyrt's own scheme
   computed in numpy (run with a float-rounding tolerance).

Usage: make_dynamic_cases.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


def write_case(out_dir, name, model, inputs, outputs):
    d = os.path.join(out_dir, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(out_dir, name, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(a), n).SerializeToString())
    for k, (n, a) in enumerate(outputs):
        with open(os.path.join(d, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(a), n).SerializeToString())


# ---- float models for --quantize dynamic ----

class Lstm(torch.nn.Module):
    def __init__(self, inp, hidden, layers, bidir, with_state):
        super().__init__()
        self.with_state = with_state
        self.rnn = torch.nn.LSTM(inp, hidden, layers, bidirectional=bidir)

    def forward(self, x, *s):
        return self.rnn(x, (s[0], s[1]))[0] if self.with_state else self.rnn(x)[0]


class Mlp(torch.nn.Module):
    """Linear layers over a rank-3 input (MatMul + Add) and a rank-2 one (Gemm)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(37, 19)
        self.b = torch.nn.Linear(19, 64)
        self.c = torch.nn.Linear(64 * 5, 3)

    def forward(self, x):
        y = torch.relu(self.b(torch.relu(self.a(x))))
        return self.c(y.reshape(y.shape[0], -1))


def torch_case(out_dir, name, net, args):
    torch.manual_seed(7)
    net.eval()
    with torch.no_grad():
        y = net(*args)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    names = [f"x{k}" for k in range(len(args))]
    torch.onnx.export(net, tuple(args), os.path.join(d, "model.onnx"), opset_version=13, input_names=names,
                      output_names=["y"])
    write_case(out_dir, name, onnx.load(os.path.join(d, "model.onnx")),
               [(n, a.numpy()) for n, a in zip(names, args)], [("y", y.numpy())])


class Rnn(torch.nn.Module):
    """GRU (exported with linear_before_reset = 1) or tanh RNN."""

    def __init__(self, cell, inp, hidden, layers, bidir):
        super().__init__()
        self.rnn = cell(inp, hidden, layers, bidirectional=bidir)

    def forward(self, x, h0):
        return self.rnn(x, h0)[0]


def gru_reference(x, w, r, b, h0):
    """ONNX GRU, linear_before_reset = 0 (gates z r h, default
    activations), one direction, float64. w [1, 3H, I], r [1, 3H, H],
    b [1, 6H]; returns Y [T, 1, B, H]."""
    H = r.shape[2]
    h = h0[0].astype(np.float64)
    wb, rb = b[0, :3 * H], b[0, 3 * H:]
    ys = []
    for t in range(x.shape[0]):
        xw = x[t] @ w[0].T + wb
        z = sigmoid(xw[:, :H] + h @ r[0, :H].T + rb[:H])
        rr = sigmoid(xw[:, H:2 * H] + h @ r[0, H:2 * H].T + rb[H:2 * H])
        hh = np.tanh(xw[:, 2 * H:] + (rr * h) @ r[0, 2 * H:].T + rb[2 * H:])
        h = (1 - z) * hh + z * h
        ys.append(h)
    return np.stack(ys)[:, None].astype(np.float32)


def gru_reset_before_case(out_dir, name, T, B, I, H, seed):
    """ONNX's default GRU (linear_before_reset = 0: the reset gate scales
    the state before its product, which the int8 loop quantizes again)."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((1, 3 * H, I)) / np.sqrt(I)).astype(np.float32)
    r = (rng.standard_normal((1, 3 * H, H)) / np.sqrt(H)).astype(np.float32)
    b = (rng.standard_normal((1, 6 * H)) * 0.1).astype(np.float32)
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    h0 = (rng.standard_normal((1, B, H)) * 0.5).astype(np.float32)
    node = helper.make_node("GRU", ["x", "W", "R", "B", "", "h0"], ["y"], hidden_size=H)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, B, I]),
                                             helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, B, H])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [T, 1, B, H])],
                              [numpy_helper.from_array(a, n) for a, n in ((w, "W"), (r, "R"), (b, "B"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    write_case(out_dir, name, model, [("x", x), ("h0", h0)], [("y", gru_reference(x, w, r, b, h0))])


def float_cases(out_dir):
    torch.manual_seed(5)
    torch_case(out_dir, "gru_h13_2layers_batch2", Rnn(torch.nn.GRU, 5, 13, 2, False),
               [torch.randn(8, 2, 5), torch.randn(2, 2, 13)])
    torch_case(out_dir, "rnn_h19_bidir", Rnn(torch.nn.RNN, 4, 19, 1, True), [torch.randn(7, 2, 4), torch.randn(2, 2, 19)])
    gru_reset_before_case(out_dir, "gru_reset_before_h24", 9, 2, 6, 24, 40)
    torch_case(out_dir, "lstm_h37_bidir_batch3_state", Lstm(7, 37, 1, True, True),
               [torch.randn(9, 3, 7), torch.randn(2, 3, 37), torch.randn(2, 3, 37)])
    torch_case(out_dir, "lstm_h64_2layers", Lstm(20, 64, 2, False, False), [torch.randn(12, 1, 20)])
    torch_case(out_dir, "lstm_h5_t1", Lstm(3, 5, 1, False, False), [torch.randn(1, 2, 3)])
    torch_case(out_dir, "mlp_rank3", Mlp(), [torch.randn(2, 5, 37)])


# ---- ONNX Runtime's contrib ops ----

def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm_reference(x, w, r, b, h0, c0):
    """ONNX LSTM (layout 0, gates i o f c, default activations) in float64.
    w [D, 4H, I], r [D, 4H, H], b [D, 8H]; returns Y [T, D, B, H]."""
    T, B, _ = x.shape
    D, G4, H = r.shape
    y = np.zeros((T, D, B, H))
    for d in range(D):
        h, c = h0[d].astype(np.float64), c0[d].astype(np.float64)
        for s in range(T):
            t = s if d == 0 else T - 1 - s
            g = x[t] @ w[d].T + h @ r[d].T + b[d, :G4] + b[d, G4:]
            i, o, f, cc = (g[:, k * H:(k + 1) * H] for k in range(4))
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(cc)
            h = sigmoid(o) * np.tanh(c)
            y[t, d] = h
    return y.astype(np.float32)


def quantize(w, axis_cols, unsigned, zero, per_tensor, rng, qmax=None):
    """w [D, K, N] (columns N): 8-bit values, scales and zero points of
    the given kind, and the dequantized float weights. qmax: at most this
    far from the zero point (63: 7-bit weights, ONNX Runtime's
    reduce_range, which x86 without VNNI multiplies as bytes)."""
    D, K, N = w.shape
    lo, hi = (0, 255) if unsigned else (-128, 127)
    if per_tensor:
        span = np.abs(w).reshape(D, -1).max(axis=1)[:, None] * np.ones((1, N))
    else:
        span = np.abs(w).max(axis=1)
    room = min(zero - lo, hi - zero, qmax or 255)  # symmetric around the zero point
    scale = (np.where(span > 0, span, 1.0) / room).astype(np.float32)
    zp = np.full(scale.shape, zero)
    q = np.clip(np.rint(w / scale[:, None, :]) + zp[:, None, :], lo, hi)
    deq = ((q - zp[:, None, :]) * scale[:, None, :]).astype(np.float32)
    if per_tensor:
        scale, zp = scale[:, 0], zp[:, 0]
    t = np.uint8 if unsigned else np.int8
    return q.astype(t), scale, zp.astype(t), deq


def dq_lstm_case(out_dir, name, T, B, I, H, D, unsigned, zero, per_tensor, seed, qmax=None):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((D, I, 4 * H)).astype(np.float32) / np.sqrt(I)
    r = rng.standard_normal((D, H, 4 * H)).astype(np.float32) / np.sqrt(H)
    b = (rng.standard_normal((D, 8 * H)) * 0.1).astype(np.float32)
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    h0 = (rng.standard_normal((D, B, H)) * 0.5).astype(np.float32)
    c0 = (rng.standard_normal((D, B, H)) * 0.5).astype(np.float32)
    wq, ws, wz, wd = quantize(w, 2, unsigned, zero, per_tensor, rng, qmax)
    rq, rs, rz, rd = quantize(r, 2, unsigned, zero, per_tensor, rng, qmax)
    y = lstm_reference(x, np.transpose(wd, (0, 2, 1)), np.transpose(rd, (0, 2, 1)), b, h0, c0)
    inits = [numpy_helper.from_array(a, n) for a, n in
             ((wq, "W"), (rq, "R"), (b, "B"), (ws, "W_scale"), (wz, "W_zero_point"), (rs, "R_scale"), (rz, "R_zero_point"))]
    node = helper.make_node("DynamicQuantizeLSTM", ["x", "W", "R", "B", "", "h0", "c0", "", "W_scale", "W_zero_point",
                                                    "R_scale", "R_zero_point"], ["y"], domain="com.microsoft",
                            hidden_size=H, direction="bidirectional" if D == 2 else "forward")
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, B, I]),
                                             helper.make_tensor_value_info("h0", TensorProto.FLOAT, [D, B, H]),
                                             helper.make_tensor_value_info("c0", TensorProto.FLOAT, [D, B, H])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [T, D, B, H])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    write_case(out_dir, name, model, [("x", x), ("h0", h0), ("c0", c0)], [("y", y)])
    ww = [tinyrt_weights(wq[d], ws[d] if ws.ndim == 2 else ws[d], wz[d] if wz.ndim == 2 else wz[d]) for d in range(D)]
    rw = [tinyrt_weights(rq[d], rs[d] if rs.ndim == 2 else rs[d], rz[d] if rz.ndim == 2 else rz[d]) for d in range(D)]
    emulated = tinyrt_dynamic_lstm(x, np.stack([w for w, _ in ww]), np.stack([s for _, s in ww]),
                                   np.stack([w for w, _ in rw]), np.stack([s for _, s in rw]), b, h0, c0)
    write_case(os.path.join(out_dir, "..", "emulated"), name, model, [("x", x), ("h0", h0), ("c0", c0)], [("y", emulated)])


def tinyrt_weights(q, scale, zp):
    """tinyrt's int8 form of 8-bit weights [K, N] (ops/dynamic_quant.cpp,
    int8_rows): per column, q - zp where it fits int8, else the column
    dequantized and quantized again symmetrically; and the column scales."""
    K, N = q.shape
    scale = np.broadcast_to(np.asarray(scale, np.float64).reshape(-1), (N,))
    zp = np.broadcast_to(np.asarray(zp, np.int64).reshape(-1), (N,))
    v = q.astype(np.int64) - zp
    w, s = np.zeros((K, N), np.int64), np.zeros(N, np.float32)
    for j in range(N):
        if v[:, j].min() >= -128 and v[:, j].max() <= 127:
            w[:, j], s[j] = v[:, j], np.float32(scale[j])
            continue
        f = v[:, j] * scale[j]
        m = np.abs(f).max()
        s[j] = np.float32(m / 127) if m > 0 else np.float32(1)
        w[:, j] = np.clip(np.rint(f / np.float64(s[j])), -127, 127)
    return w, s


def tinyrt_dynamic_matmul(a, w, s, bias):
    """tinyrt's dynamic int8 product in float32, as the generated code
    computes it: rows of a quantized by 127 / max|row|, exact int32 sums,
    scaled by (max|row| * (1/127)) * column scale, plus the bias."""
    f = np.float32
    amax = np.abs(a).max(axis=-1, keepdims=True).astype(f)
    inv = f(127) / np.maximum(amax, f(1e-30))
    q = np.clip(np.rint((a * inv).astype(f)), -127, 127).astype(np.int64)
    acc = q @ w
    y = acc.astype(f) * ((amax * f(1 / 127)).astype(f) * s).astype(f)
    return (y + bias).astype(f) if bias is not None else y


def tinyrt_dynamic_lstm(x, wq, ws, rq, rs, b, h0, c0):
    """tinyrt's dynamic int8 LSTM (forward or bidirectional, layout 0) in
    float32, as the generated code computes it: the projection as
    tinyrt_dynamic_matmul; at every step the state quantized by
    127 / max|h| per batch entry, exact int32 sums with R, scaled by
    (max|h| * (1/127)) * R's row scale. wq [D, I, 4H], rq [D, H, 4H] int8
    values, ws / rs [D, 4H]."""
    f = np.float32
    T, B, _ = x.shape
    D, H = rq.shape[0], rq.shape[1]
    bias = (b[:, :4 * H].astype(np.float64) + b[:, 4 * H:]).astype(f)
    sig = lambda v: (f(1) / (f(1) + np.exp(-v))).astype(f)
    y = np.zeros((T, D, B, H), f)
    for d in range(D):
        xw = tinyrt_dynamic_matmul(x, wq[d], ws[d], bias[d])
        h, c = h0[d].astype(f), c0[d].astype(f)
        for s in range(T):
            t = s if d == 0 else T - 1 - s
            amax = np.abs(h).max(axis=1, keepdims=True).astype(f)
            inv = np.where(amax > f(1e-30), f(127) / np.where(amax > 0, amax, f(1)), f(0)).astype(f)
            q = np.clip(np.rint((h * inv).astype(f)), -127, 127).astype(np.int64)
            a = (q @ rq[d].astype(np.int64)).astype(f) * ((amax * f(1 / 127)).astype(f) * rs[d]).astype(f)
            g = (xw[t] + a).astype(f)
            i, o, fg, cc = (g[:, k * H:(k + 1) * H] for k in range(4))
            c = (sig(fg) * c + sig(i) * np.tanh(cc)).astype(f)
            h = (sig(o) * np.tanh(c)).astype(f)
            y[t, d] = h
    return y


def dq_matmul_case(out_dir, name, a_shape, N, unsigned, zero, per_tensor, bias, seed):
    rng = np.random.default_rng(seed)
    K = a_shape[-1]
    bf = rng.standard_normal((1, K, N)).astype(np.float32) / np.sqrt(K)
    bq, bs, bz, bd = quantize(bf, 2, unsigned, zero, per_tensor, rng)
    a = rng.standard_normal(a_shape).astype(np.float32)
    y = a.astype(np.float64) @ bd[0].astype(np.float64)
    scale, zp = (bs[0], bz[0]) if not per_tensor else (bs.reshape([]), bz.reshape([]))
    inits = [numpy_helper.from_array(bq[0], "B"), numpy_helper.from_array(scale, "b_scale"),
             numpy_helper.from_array(zp, "b_zero_point")]
    ins = ["a", "B", "b_scale", "b_zero_point"]
    bv = None
    if bias:
        bv = (rng.standard_normal(N) * 0.1).astype(np.float32)
        y = y + bv
        inits.append(numpy_helper.from_array(bv, "bias"))
        ins.append("bias")
    emulated = tinyrt_dynamic_matmul(a, *tinyrt_weights(bq[0], scale, zp), bv)
    node = helper.make_node("DynamicQuantizeMatMul", ins, ["y"], domain="com.microsoft")
    out_shape = list(a_shape[:-1]) + [N]
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    write_case(out_dir, name, model, [("a", a)], [("y", y.astype(np.float32))])
    # The same model against tinyrt's scheme computed in numpy: exact but
    # for float rounding (a wrong scale, rounding or layout fails it).
    write_case(os.path.join(out_dir, "..", "emulated"), name, model, [("a", a)], [("y", emulated)])


def onnxruntime_cases(out_dir):
    # (name, T, B, I, H, D, unsigned, zero point, per tensor)
    for k, c in enumerate([("dqlstm_int8_columns", 7, 2, 9, 21, 1, False, 0, False),
                           ("dqlstm_uint8_zp128_tensor_bidir", 5, 1, 4, 16, 2, True, 128, True),
                           ("dqlstm_uint8_zp100_columns", 6, 3, 5, 11, 1, True, 100, False)]):
        dq_lstm_case(out_dir, *c, seed=20 + k)
    # 7-bit weights: their input projection and recurrent products multiply
    # as bytes on x86 without VNNI (exact, so the emulation holds).
    dq_lstm_case(out_dir, "dqlstm_int8_7bit_columns_bidir", 8, 2, 13, 24, 2, False, 0, False, seed=25, qmax=63)
    for k, c in enumerate([("dqmatmul_int8_columns_bias", (3, 37), 19, False, 0, False, True),
                           ("dqmatmul_uint8_zp128_tensor_rank3", (2, 4, 16), 33, True, 128, True, False),
                           ("dqmatmul_uint8_zp90_columns_rank4", (1, 2, 3, 9), 5, True, 90, False, True)]):
        dq_matmul_case(out_dir, *c, seed=30 + k)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    torch.set_num_threads(1)
    float_cases(os.path.join(sys.argv[1], "float"))
    onnxruntime_cases(os.path.join(sys.argv[1], "onnxruntime"))
    print(f"wrote dynamic int8 cases to {sys.argv[1]}")


if __name__ == "__main__":
    main()
