#!/usr/bin/python3
"""Recurrent-layer cases for the recurrent kernel family (one loop over
time), which needs constant weights:

 * every RNN/GRU/LSTM case of ONNX's node tests, with W, R, B, P and
   sequence_lens turned into initializers (ONNX's own reference outputs,
   so every spec variant: peepholes, layout 1, initial bias, GRU with and
   without linear_before_reset, sequence lengths);
 * PyTorch layers with odd hidden sizes (not a multiple of any vector
   width), several layers, both directions, batch > 1, batch_first and
   initial states as inputs (PyTorch's outputs as reference).

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
    print(f"wrote {n} recurrent cases to {out_dir}")


if __name__ == "__main__":
    main()
