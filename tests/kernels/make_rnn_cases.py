#!/usr/bin/python3
"""Recurrent-layer cases for the recurrent kernel family (one loop over
time), which needs constant weights:

 * every RNN/GRU/LSTM case of ONNX's node tests, with W, R, B, P and
   sequence_lens turned into initializers (ONNX's own reference outputs,
   so every spec variant: peepholes, layout 1, initial bias, GRU with and
   without linear_before_reset, sequence lengths);
 * PyTorch layers with odd hidden sizes (not a multiple of any vector
   width), several layers, both directions, batch > 1, batch_first and
   initial states as inputs (PyTorch's outputs as reference);
 * an RNN for each activation the ONNX spec names, with alpha and beta,
   on pre-activations up to about 400 (Softplus must not overflow), against
   a float64 reference.

Usage: make_rnn_cases.py OUTDIR [NODE_TEST_DIR]"""
import glob
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

NODE_DIR = "/usr/share/libonnx-testdata/data/node"
CONST_INPUTS = {1, 2, 3, 4, 7}  # W, R, B, sequence_lens, P


def write_tensor(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(arr), name).SerializeToString())


def from_node_test(src, out_dir):
    m = onnx.load(os.path.join(src, "model.onnx"))
    node = m.graph.node[0]
    data = os.path.join(src, "test_data_set_0")
    names = [i.name for i in m.graph.input]
    arrays = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{k}.pb"))) for k in range(len(names))]
    keep_inputs, keep_arrays = [], []
    for vi, arr in zip(m.graph.input, arrays):
        pos = list(node.input).index(vi.name)
        if pos in CONST_INPUTS:
            m.graph.initializer.append(numpy_helper.from_array(arr, vi.name))
        else:
            keep_inputs.append(vi)
            keep_arrays.append(arr)
    del m.graph.input[:]
    m.graph.input.extend(keep_inputs)
    name = os.path.basename(src).replace("test_", "node_") + "_const_weights"
    d = os.path.join(out_dir, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(out_dir, name, "model.onnx"))
    for k, (vi, arr) in enumerate(zip(keep_inputs, keep_arrays)):
        write_tensor(os.path.join(d, f"input_{k}.pb"), arr, vi.name)
    for k in range(len(m.graph.output)):
        src_out = os.path.join(data, f"output_{k}.pb")
        with open(src_out, "rb") as f, open(os.path.join(d, f"output_{k}.pb"), "wb") as g:
            g.write(f.read())


class Net(torch.nn.Module):
    def __init__(self, kind, inp, hidden, layers, bidirectional, batch_first, with_state):
        super().__init__()
        cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[kind]
        self.kind, self.with_state = kind, with_state
        self.rnn = cls(inp, hidden, layers, bidirectional=bidirectional, batch_first=batch_first)

    def forward(self, x, *state):
        if not self.with_state:
            return self.rnn(x)[0]
        if self.kind == "lstm":
            y, (h, c) = self.rnn(x, (state[0], state[1]))
            return y, h, c
        y, h = self.rnn(x, state[0])
        return y, h


# (name, kind, input size, hidden, layers, bidirectional, batch_first, T, batch, initial state as input)
TORCH_CASES = [
    ("lstm_h37_bidir_batch3_state", "lstm", 7, 37, 1, True, False, 9, 3, True),
    ("lstm_h13_2layers_batch_first", "lstm", 5, 13, 2, False, True, 6, 2, False),
    ("gru_h13_2layers_batch2", "gru", 5, 13, 2, False, False, 8, 2, True),
    ("gru_h40_bidir", "gru", 3, 40, 1, True, False, 5, 1, False),
    ("rnn_h19_bidir_state", "rnn", 4, 19, 1, True, False, 7, 2, True),
    ("lstm_h1_t1", "lstm", 1, 1, 1, False, False, 1, 1, False),
    # Steps large enough to be split across threads (passes/split_recurrent.cpp:
    # 2 parts of whole groups, the last with the odd units after them).
    ("lstm_h100_split_2layers_batch2", "lstm", 6, 100, 2, False, True, 7, 2, True),
    ("gru_h150_split_state", "gru", 5, 150, 1, False, False, 6, 1, True),
    ("rnn_h300_split_bidir", "rnn", 5, 300, 1, True, False, 5, 1, False),
]


def from_torch(case, out_dir):
    name, kind, inp, hidden, layers, bidir, bf, T, B, with_state = case
    torch.manual_seed(3)
    net = Net(kind, inp, hidden, layers, bidir, bf, with_state).eval()
    x = torch.randn(B, T, inp) if bf else torch.randn(T, B, inp)
    dirs = 2 if bidir else 1
    args = [x]
    if with_state:
        args.append(torch.randn(layers * dirs, B, hidden))
        if kind == "lstm":
            args.append(torch.randn(layers * dirs, B, hidden))
    in_names = ["x", "h0", "c0"][:len(args)]
    with torch.no_grad():
        ys = net(*args)
    ys = ys if isinstance(ys, tuple) else (ys,)
    out_names = [f"y{k}" for k in range(len(ys))]
    d = os.path.join(out_dir, "torch_" + name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(out_dir, "torch_" + name, "model.onnx")
    torch.onnx.export(net, tuple(args), path, opset_version=13, input_names=in_names, output_names=out_names)
    for k, (a, n) in enumerate(zip(args, in_names)):
        write_tensor(os.path.join(d, f"input_{k}.pb"), a.numpy(), n)
    for k, (y, n) in enumerate(zip(ys, out_names)):
        write_tensor(os.path.join(d, f"output_{k}.pb"), y.numpy(), n)


def _softplus(v):
    return np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))


# name: (alpha, beta or None, float64 reference)
ACTIVATIONS = {
    "Softplus": (None, None, lambda v, a, b: _softplus(v)),
    "Softsign": (None, None, lambda v, a, b: v / (1 + np.abs(v))),
    "Elu": (0.7, None, lambda v, a, b: np.where(v < 0, a * (np.exp(v) - 1), v)),
    "LeakyRelu": (0.1, None, lambda v, a, b: np.where(v < 0, a * v, v)),
    "ThresholdedRelu": (0.5, None, lambda v, a, b: np.where(v > a, v, 0.0)),
    "HardSigmoid": (0.3, 0.4, lambda v, a, b: np.clip(a * v + b, 0, 1)),
    "ScaledTanh": (1.5, 0.7, lambda v, a, b: a * np.tanh(b * v)),
    "Affine": (0.5, 0.2, lambda v, a, b: a * v + b),
}


def activation_cases(out_dir):
    """RNN (T 5, batch 2, input 6, hidden 7) with each activation."""
    from onnx import helper, TensorProto
    rng = np.random.default_rng(5)
    T, B, I, H = 5, 2, 6, 7
    x = (rng.standard_normal((T, B, I)) * 40).astype(np.float32)
    W = rng.standard_normal((1, H, I)).astype(np.float32)
    R = (rng.standard_normal((1, H, H)) * 0.1).astype(np.float32)
    Bias = rng.standard_normal((1, 2 * H)).astype(np.float32)
    for name, (alpha, beta, ref) in ACTIVATIONS.items():
        attrs = {"hidden_size": H, "activations": [name]}
        if alpha is not None:
            attrs["activation_alpha"] = [alpha]
        if beta is not None:
            attrs["activation_beta"] = [beta]
        node = helper.make_node("RNN", ["x", "W", "R", "B"], ["", "y_h"], **attrs)
        g = helper.make_graph([node], f"rnn_{name}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, B, I])],
                              [helper.make_tensor_value_info("y_h", TensorProto.FLOAT, [1, B, H])],
                              [numpy_helper.from_array(a, n) for n, a in (("W", W), ("R", R), ("B", Bias))])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
        onnx.checker.check_model(m)
        d = os.path.join(out_dir, f"rnn_activation_{name.lower()}")
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        h = np.zeros((B, H))
        a, b = (alpha or 0.0), (beta or 0.0)
        for t in range(T):
            h = ref(x[t].astype(np.float64) @ W[0].T.astype(np.float64) + h @ R[0].T.astype(np.float64) +
                    Bias[0, :H] + Bias[0, H:], np.float32(a).astype(np.float64), np.float32(b).astype(np.float64))
        write_tensor(os.path.join(d, "test_data_set_0", "input_0.pb"), x, "x")
        write_tensor(os.path.join(d, "test_data_set_0", "output_0.pb"), h[None].astype(np.float32), "y_h")
    return len(ACTIVATIONS)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    node_dir = sys.argv[2] if len(sys.argv) == 3 else NODE_DIR
    torch.set_num_threads(1)
    n = 0
    for pat in ("test_lstm*", "test_gru*", "test_rnn*", "test_simple_rnn*"):
        for src in sorted(glob.glob(os.path.join(node_dir, pat))):
            from_node_test(src, out_dir)
            n += 1
    for case in TORCH_CASES:
        from_torch(case, out_dir)
        n += 1
    n += activation_cases(out_dir)
    print(f"wrote {n} recurrent cases to {out_dir}")


if __name__ == "__main__":
    main()
