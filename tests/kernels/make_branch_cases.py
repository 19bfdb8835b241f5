#!/usr/bin/python3
"""If with a condition known only at run time: only the taken branch runs
(its steps are guarded by the condition's byte), against float64
references, with a data set for each way through the model:

  frontends_*      a sample-rate switch: two convolutional front ends, a
                   shared back end (odd signal lengths too)
  nested           an If inside a branch, with its own condition (4 sets)
  computed_cond    the condition computed from the data (ReduceSum > 0),
                   branches of elementwise chains that fusion must keep apart
  outer_value      a branch that returns a value from outside it
  two_outputs      an If with two outputs
  loop_if          an If in the body of a Loop (unrolled: one If a step)
  winograd_branch  a 3x3 convolution (Winograd where it pays) in one branch
  recurrent_branch an LSTM in one branch, a GRU in the other
  uncompilable_else a branch whose Reshape cannot fit the input's shape:
                   the model compiles, and taking that branch stops the run
                   (expected_error.txt)

Usage: make_branch_cases.py OUTDIR

Writes OUTDIR/<case>/model.onnx and test_data_set_K/{input_*,output_*}.pb
(the ONNX backend-test layout)."""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper as h, numpy_helper as nh, TensorProto as T

rng = np.random.default_rng(11)


def rand(*s, scale=1.0):
    return (rng.standard_normal(s) * scale).astype(np.float32)


def vi(name, arr_or_shape, t=T.FLOAT):
    shape = list(arr_or_shape.shape) if hasattr(arr_or_shape, "shape") else list(arr_or_shape)
    return h.make_tensor_value_info(name, t, shape)


def branch(name, nodes, outs, inits=()):
    return h.make_graph(nodes, name, [], [h.make_tensor_value_info(o, T.FLOAT, None) for o in outs],
                        [nh.from_array(a, n) for n, a in inits])


def save(out_dir, name, nodes, inputs, outputs, sets, inits=(), opset=13):
    """inputs: [(name, example array)]; outputs: [(name, shape)];
    sets: [(input arrays, output arrays or an expected error string)]."""
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    g = h.make_graph(nodes, name,
                     [vi(n, a, T.BOOL if a.dtype == np.bool_ else T.FLOAT) for n, a in inputs],
                     [vi(n, s) for n, s in outputs], [nh.from_array(a, n) for n, a in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (ins, outs) in enumerate(sets):
        ds = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(ds, exist_ok=True)
        for i, ((n, _), a) in enumerate(zip(inputs, ins)):
            with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
                f.write(nh.from_array(np.asarray(a), n).SerializeToString())
        if isinstance(outs, str):
            with open(os.path.join(ds, "expected_error.txt"), "w") as f:
                f.write(outs + "\n")
            continue
        for i, ((n, _), a) in enumerate(zip(outputs, outs)):
            with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
                f.write(nh.from_array(np.asarray(a, np.float32), n).SerializeToString())


def t64(a):
    return torch.from_numpy(np.asarray(a, np.float64))


def flag(v):
    return np.array(v, np.bool_)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def frontends(out, n):
    """Two front ends over raw audio (as a sample-rate switch picks one),
    then a shared back end."""
    x = rand(1, 1, n)
    w1, b1 = rand(32, 1, 64, scale=0.1), rand(32, scale=0.1)
    w2, b2 = rand(32, 1, 64, scale=0.1), rand(32, scale=0.1)
    wd, bd = rand(32, 1, 3, scale=0.3), rand(32, scale=0.1)
    w3, b3 = rand(16, 32, 3, scale=0.1), rand(16, scale=0.1)
    wg, bg = rand(10, 16, scale=0.3), rand(10, scale=0.1)
    then_g = branch("then", [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[16]),
                             h.make_node("Relu", ["c1"], ["t_out"])], ["t_out"], [("w1", w1), ("b1", b1)])
    else_g = branch("else", [h.make_node("Conv", ["x", "w2", "b2"], ["c2"], strides=[16]),
                             h.make_node("Tanh", ["c2"], ["a2"]),
                             h.make_node("Conv", ["a2", "wd", "bd"], ["d2"], group=32, pads=[1, 1]),
                             h.make_node("Relu", ["d2"], ["e_out"])], ["e_out"],
                    [("w2", w2), ("b2", b2), ("wd", wd), ("bd", bd)])
    nodes = [h.make_node("If", ["wide"], ["f"], then_branch=then_g, else_branch=else_g),
             h.make_node("Conv", ["f", "w3", "b3"], ["c3"], pads=[1, 1]),
             h.make_node("Relu", ["c3"], ["r3"]),
             h.make_node("ReduceMean", ["r3"], ["p"], axes=[2], keepdims=0),
             h.make_node("Gemm", ["p", "wg", "bg"], ["y"], transB=1)]

    def ref(x, wide):
        if wide:
            f = F.relu(F.conv1d(t64(x), t64(w1), t64(b1), stride=16))
        else:
            a = torch.tanh(F.conv1d(t64(x), t64(w2), t64(b2), stride=16))
            f = F.relu(F.conv1d(a, t64(wd), t64(bd), padding=1, groups=32))
        p = F.relu(F.conv1d(f, t64(w3), t64(b3), padding=1)).mean(2)
        return [(p @ t64(wg).T + t64(bg)).numpy()]

    x2 = rand(1, 1, n)
    save(out, f"frontends_{n}", nodes, [("x", x), ("wide", flag(True))], [("y", [1, 10])],
         [([x, flag(True)], ref(x, True)), ([x, flag(False)], ref(x, False)), ([x2, flag(False)], ref(x2, False))],
         [("w3", w3), ("b3", b3), ("wg", wg), ("bg", bg)])


def nested(out):
    x = rand(2, 3, 5)
    inner_then = branch("inner_then", [h.make_node("Mul", ["x", "two"], ["it"])], ["it"], [("two", np.float32([2]))])
    inner_else = branch("inner_else", [h.make_node("Exp", ["x"], ["ie"])], ["ie"])
    outer_then = branch("outer_then", [h.make_node("If", ["b"], ["i"], then_branch=inner_then, else_branch=inner_else),
                                       h.make_node("Add", ["i", "one"], ["ot"])], ["ot"], [("one", np.float32([1]))])
    outer_else = branch("outer_else", [h.make_node("Neg", ["x"], ["oe"])], ["oe"])
    nodes = [h.make_node("If", ["a"], ["y"], then_branch=outer_then, else_branch=outer_else)]
    sets = []
    for a in (True, False):
        for b in (True, False):
            xd = x.astype(np.float64)
            y = (xd * 2 if b else np.exp(xd)) + 1 if a else -xd
            sets.append(([x, flag(a), flag(b)], [y]))
    save(out, "nested", nodes, [("x", x), ("a", flag(True)), ("b", flag(True))], [("y", x.shape)], sets)


def computed_cond(out):
    x = rand(3, 7)
    then_g = branch("then", [h.make_node("Sigmoid", ["x"], ["sg"]), h.make_node("Mul", ["sg", "x"], ["t_out"])], ["t_out"])
    else_g = branch("else", [h.make_node("Tanh", ["x"], ["th"]), h.make_node("Sub", ["th", "x"], ["e_out"])], ["e_out"])
    nodes = [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["c"]),
             h.make_node("If", ["c"], ["f"], then_branch=then_g, else_branch=else_g),
             h.make_node("Abs", ["f"], ["a"]),
             h.make_node("Add", ["a", "x"], ["y"])]

    def ref(x):
        xd = x.astype(np.float64)
        f = sigmoid(xd) * xd if xd.sum() > 0 else np.tanh(xd) - xd
        return [np.abs(f) + xd]

    pos, neg = np.abs(x) + 0.1, -np.abs(x) - 0.1
    save(out, "computed_cond", nodes, [("x", x)], [("y", x.shape)], [([pos], ref(pos)), ([neg], ref(neg))],
         [("zero", np.float32(0))])


def outer_value(out):
    x = rand(5, 9)
    then_g = h.make_graph([], "then", [], [h.make_tensor_value_info("x", T.FLOAT, None)])
    else_g = branch("else", [h.make_node("Mul", ["x", "two"], ["m"]), h.make_node("Add", ["m", "one"], ["e_out"])],
                    ["e_out"], [("two", np.float32([2])), ("one", np.float32([1]))])
    nodes = [h.make_node("If", ["keep"], ["f"], then_branch=then_g, else_branch=else_g),
             h.make_node("Relu", ["f"], ["y"])]
    xd = x.astype(np.float64)
    save(out, "outer_value", nodes, [("x", x), ("keep", flag(True))], [("y", x.shape)],
         [([x, flag(True)], [np.maximum(xd, 0)]), ([x, flag(False)], [np.maximum(2 * xd + 1, 0)])])


def two_outputs(out):
    x = rand(4, 6)
    then_g = branch("then", [h.make_node("Relu", ["x"], ["t0"]), h.make_node("ReduceMax", ["x"], ["t1"], axes=[0], keepdims=0)],
                    ["t0", "t1"])
    else_g = branch("else", [h.make_node("Neg", ["x"], ["e0"]), h.make_node("ReduceMin", ["x"], ["e1"], axes=[0], keepdims=0)],
                    ["e0", "e1"])
    nodes = [h.make_node("If", ["c"], ["y0", "y1"], then_branch=then_g, else_branch=else_g)]
    xd = x.astype(np.float64)
    save(out, "two_outputs", nodes, [("x", x), ("c", flag(True))], [("y0", [4, 6]), ("y1", [6])],
         [([x, flag(True)], [np.maximum(xd, 0), xd.max(0)]), ([x, flag(False)], [-xd, xd.min(0)])])


def loop_if(out):
    """Loop(3): y = if c then y + 1 else y * 2 (the Loop unrolls, each step
    has its own If on the same runtime condition)."""
    x = rand(3, 4)
    then_g = branch("then", [h.make_node("Add", ["y_in", "one"], ["t_out"])], ["t_out"], [("one", np.float32([1]))])
    else_g = branch("else", [h.make_node("Mul", ["y_in", "two"], ["e_out"])], ["e_out"], [("two", np.float32([2]))])
    body = h.make_graph([h.make_node("Identity", ["cond_in"], ["cond_out"]),
                         h.make_node("If", ["c"], ["y_out"], then_branch=then_g, else_branch=else_g)], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
                         h.make_tensor_value_info("y_in", T.FLOAT, None)],
                        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("y_out", T.FLOAT, None)])
    nodes = [h.make_node("Loop", ["trips", "", "x"], ["y"], body=body)]
    xd = x.astype(np.float64)
    save(out, "loop_if", nodes, [("x", x), ("c", flag(True))], [("y", x.shape)],
         [([x, flag(True)], [xd + 3]), ([x, flag(False)], [xd * 8])], [("trips", np.int64(3))])


def winograd_branch(out):
    x = rand(1, 16, 20, 20)
    w1, w2 = rand(16, 16, 3, 3, scale=0.1), rand(16, 16, 1, 1, scale=0.2)
    then_g = branch("then", [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
                             h.make_node("Relu", ["c1"], ["t_out"])], ["t_out"], [("w1", w1)])
    else_g = branch("else", [h.make_node("Conv", ["x", "w2"], ["c2"]), h.make_node("Relu", ["c2"], ["e_out"])],
                    ["e_out"], [("w2", w2)])
    nodes = [h.make_node("If", ["c"], ["f"], then_branch=then_g, else_branch=else_g),
             h.make_node("GlobalAveragePool", ["f"], ["y"])]

    def ref(c):
        f = F.relu(F.conv2d(t64(x), t64(w1), padding=1)) if c else F.relu(F.conv2d(t64(x), t64(w2)))
        return [f.mean((2, 3), keepdim=True).numpy()]

    save(out, "winograd_branch", nodes, [("x", x), ("c", flag(True))], [("y", [1, 16, 1, 1])],
         [([x, flag(True)], ref(True)), ([x, flag(False)], ref(False))])


def lstm_ref(x, W, R, B, H):
    """ONNX LSTM (one direction, default activations, gates i o f c)."""
    Wd, Rd, Bd = (a.astype(np.float64) for a in (W[0], R[0], B[0]))
    h_t, c_t = np.zeros((x.shape[1], H)), np.zeros((x.shape[1], H))
    for t in range(x.shape[0]):
        g = x[t].astype(np.float64) @ Wd.T + h_t @ Rd.T + Bd[:4 * H] + Bd[4 * H:]
        i, o, f, c = (g[:, k * H:(k + 1) * H] for k in range(4))
        c_t = sigmoid(f) * c_t + sigmoid(i) * np.tanh(c)
        h_t = sigmoid(o) * np.tanh(c_t)
    return h_t


def gru_ref(x, W, R, B, H):
    """ONNX GRU (one direction, linear_before_reset 0, gates z r h)."""
    Wd, Rd, Bd = (a.astype(np.float64) for a in (W[0], R[0], B[0]))
    h_t = np.zeros((x.shape[1], H))
    for t in range(x.shape[0]):
        xw = x[t].astype(np.float64) @ Wd.T + Bd[:3 * H]
        z = sigmoid(xw[:, :H] + h_t @ Rd[:H].T + Bd[3 * H:4 * H])
        r = sigmoid(xw[:, H:2 * H] + h_t @ Rd[H:2 * H].T + Bd[4 * H:5 * H])
        hh = np.tanh(xw[:, 2 * H:] + (r * h_t) @ Rd[2 * H:].T + Bd[5 * H:])
        h_t = (1 - z) * hh + z * h_t
    return h_t


def recurrent_branch(out):
    Tn, I, H = 6, 8, 16
    x = rand(Tn, 1, I)
    Wl, Rl, Bl = rand(1, 4 * H, I, scale=0.3), rand(1, 4 * H, H, scale=0.3), rand(1, 8 * H, scale=0.1)
    Wg, Rg, Bg = rand(1, 3 * H, I, scale=0.3), rand(1, 3 * H, H, scale=0.3), rand(1, 6 * H, scale=0.1)
    then_g = branch("then", [h.make_node("LSTM", ["x", "Wl", "Rl", "Bl"], ["", "t_out"], hidden_size=H)], ["t_out"],
                    [("Wl", Wl), ("Rl", Rl), ("Bl", Bl)])
    else_g = branch("else", [h.make_node("GRU", ["x", "Wg", "Rg", "Bg"], ["", "e_out"], hidden_size=H)], ["e_out"],
                    [("Wg", Wg), ("Rg", Rg), ("Bg", Bg)])
    nodes = [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    save(out, "recurrent_branch", nodes, [("x", x), ("c", flag(True))], [("y", [1, 1, H])],
         [([x, flag(True)], [lstm_ref(x, Wl, Rl, Bl, H)[None]]), ([x, flag(False)], [gru_ref(x, Wg, Rg, Bg, H)[None]])])


def uncompilable_else(out):
    x = rand(1, 1, 100)
    then_g = branch("then", [h.make_node("Relu", ["x"], ["t_out"])], ["t_out"])
    # 100 elements do not reshape to rows of 7: only the then branch fits
    # this input shape (as a front end written for another signal length).
    else_g = branch("else", [h.make_node("Reshape", ["x", "rows"], ["r"]), h.make_node("Relu", ["r"], ["r2"]),
                             h.make_node("Reshape", ["r2", "back"], ["e_out"])], ["e_out"],
                    [("rows", np.int64([-1, 7])), ("back", np.int64([1, 1, 100]))])
    nodes = [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    save(out, "uncompilable_else", nodes, [("x", x), ("c", flag(True))], [("y", x.shape)],
         [([x, flag(True)], [np.maximum(x.astype(np.float64), 0)]),
          ([x, flag(False)], "else branch of node")])


def main():
    out = sys.argv[1]
    frontends(out, 16000)
    frontends(out, 4001)
    nested(out)
    computed_cond(out)
    outer_value(out)
    two_outputs(out)
    loop_if(out)
    winograd_branch(out)
    recurrent_branch(out)
    uncompilable_else(out)


if __name__ == "__main__":
    main()
