#!/usr/bin/python3
"""Writes tinyrt's hostile-input cases into OUTDIR:

  OUTDIR/numeric/<case>/   ONNX backend-test layout (model.onnx,
                           test_data_set_0/{input,output}_K.pb) whose expected
                           outputs follow numpy: NaN ordering of TopK,
                           ArgMax/ArgMin, Hardmax; values read through several
                           slots (in-place planning); run with tinyrt-onnx-test.
  OUTDIR/corpus/<class>-<case>.onnx and OUTDIR/corpus/manifest.tsv
                           malformed or hostile models, each with the error its
                           compilation must end in (a substring of the message),
                           or "ok" when it must compile; run with run_corpus.py.

    tests/hostile/make_cases.py OUTDIR
"""
import os, sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

OUT = sys.argv[1]
NUM = os.path.join(OUT, "numeric")
COR = os.path.join(OUT, "corpus")
os.makedirs(NUM, exist_ok=True)
os.makedirs(COR, exist_ok=True)
manifest = []


def model(nodes, ins, outs, inits=(), opset=13, ir=8, name="g", domains=()):
    g = h.make_graph(nodes, name, ins, outs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in domains])
    m.ir_version = ir
    return m


def vi(name, shape, t=T.FLOAT):
    return h.make_tensor_value_info(name, t, shape)


def numeric(case, m, inputs, outputs):
    d = os.path.join(NUM, case)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, a in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(nh.from_array(a).SerializeToString())
    for k, a in enumerate(outputs):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(nh.from_array(a).SerializeToString())


def corpus(cls, case, m, expect):
    """expect: a substring of the error message, or 'ok'."""
    name = f"{cls}-{case}"
    data = m if isinstance(m, bytes) else m.SerializeToString()
    with open(os.path.join(COR, name + ".onnx"), "wb") as f:
        f.write(data)
    manifest.append((name, expect))


# ---------------------------------------------------------------- numeric --
nan = np.float32("nan")
rows = np.array([[3, nan, 1, 7, nan, 2], [nan, nan, nan, nan, nan, nan], [5, 4, 5, 1, 1, 5],
                 [-np.inf, np.inf, nan, 0, -0.0, 1]], np.float32)


def np_order(x, largest):
    # numpy's sort puts NaN last; "largest" reverses a stable order in which
    # NaN counts as the largest value, ties by index.
    idx = []
    for r in x:
        key = [(1 if np.isnan(v) else 0, 0 if np.isnan(v) else v) for v in r]
        order = sorted(range(len(r)), key=lambda i: (tuple(-k for k in key[i]) if largest else key[i], i))
        idx.append(order)
    return np.array(idx, np.int64)


for largest in (1, 0):
    for k in (1, 3, 6):
        idx = np_order(rows, largest)[:, :k]
        vals = np.take_along_axis(rows, idx, axis=1)
        m = model([h.make_node("TopK", ["x", "k"], ["v", "i"], largest=largest)], [vi("x", [4, 6])],
                  [vi("v", [4, k]), vi("i", [4, k], T.INT64)], [nh.from_array(np.array([k], np.int64), "k")])
        numeric(f"topk_nan_largest{largest}_k{k}", m, [rows], [vals, idx])

for op, fn in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
    for axis in (0, 1):
        for last in (0, 1):
            x = rows if axis == 1 else rows.T.copy()
            if last:
                flipped = np.flip(x, axis=1)
                ref = (x.shape[1] - 1 - fn(flipped, axis=1)).astype(np.int64)
            else:
                ref = fn(x, axis=1).astype(np.int64)
            ref = ref.reshape(-1, 1) if axis == 1 else ref.reshape(1, -1)
            m = model([h.make_node(op, ["x"], ["y"], axis=axis, keepdims=1, select_last_index=last)],
                      [vi("x", list(rows.shape) if axis == 1 else list(rows.T.shape))] if False else
                      [vi("x", [4, 6] if axis == 1 else [6, 4])],
                      [vi("y", [4, 1] if axis == 1 else [1, 4], T.INT64)])
            xin = rows if axis == 1 else rows.T.copy()
            if axis == 0:
                # the op reduces axis 0 of a [6, 4] input: numpy over its columns
                ref = (fn(xin, axis=0) if not last else xin.shape[0] - 1 - fn(np.flip(xin, 0), axis=0)).astype(np.int64).reshape(1, -1)
            numeric(f"{op.lower()}_nan_axis{axis}_last{last}", m, [xin], [ref])

hm = np.zeros_like(rows)
hm[np.arange(4), np.argmax(rows, axis=1)] = 1
numeric("hardmax_nan", model([h.make_node("Hardmax", ["x"], ["y"], axis=1)], [vi("x", [4, 6])], [vi("y", [4, 6])]),
        [rows], [hm])

# A value read through several slots must not be overwritten in place.
rng = np.random.default_rng(1)
x = rng.standard_normal((5, 5)).astype(np.float32)
y = np.maximum(x, 0)
numeric("gemm_same_value_three_slots",
        model([h.make_node("Relu", ["x"], ["y"]), h.make_node("Gemm", ["y", "y", "y"], ["z"])], [vi("x", [5, 5])],
              [vi("z", [5, 5])]), [x], [y @ y + y])
idx = np.array([[4, 3, 2, 1, 0]] * 5, np.int64)
ref = y.copy()
for i in range(5):
    for j in range(5):
        ref[i, idx[i, j]] = y[i, j]
numeric("scatter_elements_same_value_twice",
        model([h.make_node("Relu", ["x"], ["y"]), h.make_node("ScatterElements", ["y", "i", "y"], ["z"], axis=1)],
              [vi("x", [5, 5])], [vi("z", [5, 5])], [nh.from_array(idx, "i")]), [x], [ref])

# ----------------------------------------------------------------- corpus --
relu = lambda shape, out=None: model([h.make_node("Relu", ["x"], ["y"])], [vi("x", shape)], [vi("y", out or shape)])
BIG = 6148914691236517206

# sizes: overflowing and oversized dimensions
for i, shape in enumerate([[BIG, 3], [2**31, 1], [2**31 - 1, 2], [2**20, 2**20], [2**62, 2**62, 0], [3, 2**40, 2**40]]):
    corpus("size", f"input{i}", relu(shape, ["a"] * len(shape)), "graph input 'x' has")
for i, shape in enumerate([[BIG, 3], [2**31, 2], [65536, 65536], [2**16, 2**16, 4]]):
    corpus("size", f"expand{i}", model([h.make_node("Expand", ["x", "s"], ["y"])], [vi("x", [1])], [vi("y", ["a"] * len(shape))],
                                       [nh.from_array(np.array(shape, np.int64), "s")]), "element")
    corpus("size", f"constantofshape{i}", model([h.make_node("ConstantOfShape", ["s"], ["y"])], [], [vi("y", ["a"] * len(shape))],
                                                [nh.from_array(np.array(shape, np.int64), "s")]), "element")
    corpus("size", f"reshape{i}", model([h.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", [2, 3])], [vi("y", ["a"] * len(shape))],
                                        [nh.from_array(np.array(shape, np.int64), "s")]), "")
corpus("size", "tile", model([h.make_node("Tile", ["x", "r"], ["y"])], [vi("x", [1000, 1000])], [vi("y", ["a", "b"])],
                             [nh.from_array(np.array([100000, 100000], np.int64), "r")]), "elements")

# opsets and domains
for v in (18, 99, 200, 2**31 - 1):
    corpus("opset", f"ai_onnx_{v}", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=v),
           f"opset {v} of domain ai.onnx")
corpus("opset", "ml_99", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], domains=[("ai.onnx.ml", 99)]),
       "opset 99 of domain ai.onnx.ml")
corpus("opset", "unknown_domain_node", model([h.make_node("Relu", ["x"], ["y"], domain="evil.corp")], [vi("x", [2])], [vi("y", [2])],
                                             domains=[("evil.corp", 1)]), "domain 'evil.corp'")
corpus("opset", "zero", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=0), "opset 0")

# names: anything goes in names; the header, JSON and files stay valid
for i, nm in enumerate(['x"\n#error INJECTED\n//', "*/ #error X /*", "a\\", "??/", "\x01\x02\x7f", "caf\xe9", "\ud7ff"[:0] + "naïve",
                        "x" * 5000, "", " ", "#define", "a\rb", "tab\tbed"]):
    nm = nm or "empty"
    corpus("names", f"input{i}", model([h.make_node("Relu", [nm], ["y"])], [vi(nm, [2])], [vi("y", [2])]), "ok")
    corpus("names", f"output{i}", model([h.make_node("Relu", ["x"], [nm])], [vi("x", [2])], [vi(nm, [2])]), "ok")
bad_utf8 = model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])]).SerializeToString()
corpus("names", "graph_name_bytes", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], name="g\n*/\"\\"), "ok")

# attributes: zero divisors, negative and huge values
conv_in = [vi("x", [1, 2, 5, 5])]
w = nh.from_array(np.ones((3, 2, 3, 3), np.float32), "w")
for attr, vals in (("strides", [[0, 1], [1, 0], [-1, 1], [2**32, 1]]), ("dilations", [[0, 1], [1, -2], [2**40, 1]]),
                   ("kernel_shape", [[0, 3], [3, -3], [3, 3, 3], [3]]), ("pads", [[-1, 0, 0, 0], [2**40, 0, 0, 0], [1, 1]])):
    for i, v in enumerate(vals):
        corpus("attr", f"conv_{attr}{i}", model([h.make_node("Conv", ["x", "w"], ["y"], **{attr: v})], conv_in, [vi("y", ["a", "b", "c", "d"])], [w]), "")
        corpus("attr", f"maxpool_{attr}{i}", model([h.make_node("MaxPool", ["x"], ["y"], **({"kernel_shape": [2, 2]} | {attr: v}))], conv_in,
                                                   [vi("y", ["a", "b", "c", "d"])]), "")
        corpus("attr", f"avgpool_{attr}{i}", model([h.make_node("AveragePool", ["x"], ["y"], **({"kernel_shape": [2, 2]} | {attr: v}))], conv_in,
                                                   [vi("y", ["a", "b", "c", "d"])]), "")
for g in (0, -1, 3, 2**32):
    corpus("attr", f"conv_group{g}", model([h.make_node("Conv", ["x", "w"], ["y"], group=g)], conv_in, [vi("y", ["a", "b", "c", "d"])], [w]), "")
for b in (0, -1, 5, 2**32, 2**62):
    corpus("attr", f"depthtospace_blocksize{b}", model([h.make_node("DepthToSpace", ["x"], ["y"], blocksize=b)], [vi("x", [1, 8, 2, 2])],
                                                        [vi("y", ["a", "b", "c", "d"])]), "")
    corpus("attr", f"spacetodepth_blocksize{b}", model([h.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b)], [vi("x", [1, 2, 6, 6])],
                                                        [vi("y", ["a", "b", "c", "d"])]), "")
for ax in (3, -3, 2**31, -(2**40)):
    for op in ("Softmax", "LogSoftmax", "Hardmax", "ArgMax", "ArgMin", "Flatten", "Concat", "Gather", "CumSum_axis", "TopK"):
        if op == "Gather":
            m = model([h.make_node(op, ["x", "i"], ["y"], axis=ax)], [vi("x", [2, 3])], [vi("y", ["a", "b"])],
                      [nh.from_array(np.array([0], np.int64), "i")])
        elif op == "CumSum_axis":
            m = model([h.make_node("CumSum", ["x", "a"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])],
                      [nh.from_array(np.array(ax, np.int64), "a")])
        elif op == "TopK":
            m = model([h.make_node(op, ["x", "k"], ["y", "i"], axis=ax)], [vi("x", [2, 3])], [vi("y", ["a", "b"]), vi("i", ["a", "b"], T.INT64)],
                      [nh.from_array(np.array([1], np.int64), "k")])
        elif op == "Concat":
            m = model([h.make_node(op, ["x", "x"], ["y"], axis=ax)], [vi("x", [2, 3])], [vi("y", ["a", "b"])])
        else:
            m = model([h.make_node(op, ["x"], ["y"], axis=ax)], [vi("x", [2, 3])], [vi("y", ["a", "b"])])
        corpus("axis", f"{op.lower()}_{ax}", m, "")
# found by tests/hostile/mutate_models.py: libonnx's own inference crashed
for ax in (2**31, -(2**31) - 1, 2**40):
    corpus("axis", f"layernorm_{ax}", model([h.make_node("LayerNormalization", ["x"], ["y"], axis=ax)], [vi("x", [2, 8])],
                                          [vi("y", [2, 8])], opset=17), "not an axis")
for k in (-1, 4, 2**40):
    corpus("attr", f"topk_k{k}", model([h.make_node("TopK", ["x", "k"], ["y", "i"])], [vi("x", [2, 3])],
                                       [vi("y", ["a", "b"]), vi("i", ["a", "b"], T.INT64)],
                                       [nh.from_array(np.array([k], np.int64), "k")]), "")

# indices and secondary inputs the kernels would trust
corpus("index", "gathernd_batch_dims_negative", model([h.make_node("GatherND", ["x", "i"], ["y"], batch_dims=-1)],
                                                      [vi("x", [2, 2])], [vi("y", ["a"])], [nh.from_array(np.zeros((2, 1), np.int64), "i")]), "")
corpus("index", "gathernd_batch_dims_large", model([h.make_node("GatherND", ["x", "i"], ["y"], batch_dims=5)],
                                                   [vi("x", [2, 2])], [vi("y", ["a"])], [nh.from_array(np.zeros((2, 1), np.int64), "i")]), "")
corpus("index", "reversesequence_time_axis", model([h.make_node("ReverseSequence", ["x", "l"], ["y"], time_axis=7, batch_axis=1)],
                                                   [vi("x", [2, 2])], [vi("y", [2, 2])], [nh.from_array(np.array([1, 1], np.int64), "l")]), "")
corpus("index", "gather_zero_length_axis", model([h.make_node("Gather", ["x", "i"], ["y"], axis=0)], [vi("x", [0, 3])],
                                                 [vi("y", ["a", "b"])], [nh.from_array(np.array([0], np.int64), "i")]), "")
corpus("index", "pad_reflect_too_wide", model([h.make_node("Pad", ["x", "p"], ["y"], mode="reflect")], [vi("x", [2, 3])],
                                              [vi("y", ["a", "b"])], [nh.from_array(np.array([0, 5, 0, 5], np.int64), "p")]), "ok")
corpus("index", "layernorm_scale_shape", model([h.make_node("LayerNormalization", ["x", "s"], ["y"], axis=-1)], [vi("x", [2, 8])],
                                               [vi("y", [2, 8])], [nh.from_array(np.ones(3, np.float32), "s")], opset=17), "")
corpus("index", "conv_weight_kernel_mismatch", model([h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[5, 5])], conv_in,
                                                     [vi("y", ["a", "b", "c", "d"])], [w]), "")
corpus("index", "conv_bias_shape", model([h.make_node("Conv", ["x", "w", "b"], ["y"])], conv_in, [vi("y", ["a", "b", "c", "d"])],
                                         [w, nh.from_array(np.ones(7, np.float32), "b")]), "")
corpus("index", "batchnorm_scale_shape", model([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])], [vi("x", [1, 2, 3])],
                                               [vi("y", [1, 2, 3])], [nh.from_array(np.ones(k, np.float32), n) for k, n in ((5, "s"), (2, "b"), (2, "m"), (2, "v"))]), "")
for nm, shape in (("R", [1, 4, 3]), ("B", [1, 3]), ("h0", [1, 1, 2])):
    ins = {"R": np.ones((1, 4, 4), np.float32), "B": np.ones((1, 8), np.float32), "h0": np.zeros((1, 1, 4), np.float32)}
    ins[nm] = np.ones(shape, np.float32)
    corpus("index", f"rnn_{nm}_shape", model([h.make_node("RNN", ["x", "w", "R", "B", "", "h0"], ["y"], hidden_size=4)],
                                              [vi("x", [2, 1, 3])], [vi("y", ["a", "b", "c", "d"])],
                                              [nh.from_array(np.ones((1, 4, 3), np.float32), "w")] +
                                              [nh.from_array(v, k) for k, v in ins.items()]), "")
corpus("index", "scatternd_index_depth", model([h.make_node("ScatterND", ["x", "i", "u"], ["y"])], [vi("x", [4])], [vi("y", [4])],
                                               [nh.from_array(np.zeros((1, 3), np.int64), "i"), nh.from_array(np.ones(1, np.float32), "u")]), "")

# control flow: unroll sizes, malformed bodies
body = h.make_graph([h.make_node("Identity", ["c"], ["co"]), h.make_node("Add", ["s", "s"], ["so"])], "b",
                    [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("s", [2])], [vi("co", [], T.BOOL), vi("so", [2])])
for trips in (10**9, 2**40, -5):
    corpus("unroll", f"loop_trips{trips}", model([h.make_node("Loop", ["m", "", "x"], ["y"], body=body)], [vi("x", [2])], [vi("y", [2])],
                                                [nh.from_array(np.array(trips, np.int64), "m")]), "")
corpus("unroll", "loop_one_input", model([h.make_node("Loop", ["m"], [], body=body)], [], [],
                                         [nh.from_array(np.array(2, np.int64), "m")]), "")
# With constant weights a recurrent layer is one loop over time: a million
# steps compile to the same code as ten. Weights given at run time unroll,
# and that is capped.
corpus("unroll", "rnn_long_sequence_loop", model([h.make_node("RNN", ["x", "w", "r"], ["y"], hidden_size=1)], [vi("x", [10**6, 1, 1])],
                                                 [vi("y", ["a", "b", "c", "d"])], [nh.from_array(np.ones((1, 1, 1), np.float32), "w"),
                                                                                  nh.from_array(np.ones((1, 1, 1), np.float32), "r")]), "ok")
corpus("unroll", "rnn_long_sequence_runtime_weights",
       model([h.make_node("RNN", ["x", "w", "r"], ["y"], hidden_size=1)], [vi("x", [10**6, 1, 1]), vi("w", [1, 1, 1]), vi("r", [1, 1, 1])],
             [vi("y", ["a", "b", "c", "d"])]), "unrolling limit")

# malformed protobufs and graphs
good = relu([2]).SerializeToString()
for cut in (1, 3, 7, len(good) // 2, len(good) - 1):
    corpus("proto", f"truncated{cut}", good[:cut], "")
corpus("proto", "empty", b"", "")
corpus("proto", "garbage", bytes(range(256)) * 4, "")
corpus("proto", "flipped", bytes(b ^ 0x5A for b in good), "")
corpus("graph", "cycle", model([h.make_node("Relu", ["b"], ["a"]), h.make_node("Relu", ["a"], ["b"])], [], [vi("b", [2])]), "")
corpus("graph", "undefined_input", model([h.make_node("Relu", ["nope"], ["y"])], [vi("x", [2])], [vi("y", [2])]), "")
corpus("graph", "no_outputs", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], []), "")
corpus("graph", "dup_output", model([h.make_node("Relu", ["x"], ["y"]), h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])]), "")
ext = relu([2])
t = nh.from_array(np.ones(2, np.float32), "w")
t.data_location = T.EXTERNAL
t.ClearField("raw_data")
t.external_data.add(key="location", value="../../../../etc/passwd")
ext.graph.initializer.append(t)
corpus("proto", "external_data_path", ext, "")
neg = relu([2])
nt = nh.from_array(np.ones(1, np.float32), "w")
del nt.dims[:]
nt.dims.extend([-1, -1])
neg.graph.initializer.append(nt)
corpus("proto", "negative_initializer_dims", neg, "")
mix = model([h.make_node("Add", ["x", "z"], ["y"])], [vi("x", [2]), vi("z", [2], T.INT64)], [vi("y", [2])])
corpus("dtype", "add_float_int64", mix, "")
corpus("dtype", "relu_string", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2], T.STRING)], [vi("y", [2], T.STRING)]), "")
corpus("dtype", "conv_int", model([h.make_node("Conv", ["x", "w"], ["y"])], [vi("x", [1, 2, 5, 5], T.INT32)], [vi("y", ["a", "b", "c", "d"], T.INT32)],
                                  [nh.from_array(np.ones((3, 2, 3, 3), np.int32), "w")]), "")

# deep nesting and long chains
inner = relu([2])
g = inner.graph
for depth in range(80):
    g = h.make_graph([h.make_node("If", ["c"], ["y"], then_branch=g, else_branch=inner.graph)], f"d{depth}", [], [vi("y", [2])])
corpus("nesting", "if80", model([h.make_node("If", ["c"], ["y"], then_branch=g, else_branch=inner.graph)], [vi("c", [], T.BOOL), vi("x", [2])], [vi("y", [2])]), "")
prev = "x"
nodes = []
for i in range(20000):
    nodes.append(h.make_node(["Relu", "Neg", "Abs", "Sigmoid"][i % 4], [prev], [f"t{i}"]))
    prev = f"t{i}"
corpus("chain", "elementwise20000", model(nodes, [vi("x", [1, 16])], [vi(prev, [1, 16])]), "ok")

with open(os.path.join(COR, "manifest.tsv"), "w") as f:
    for name, expect in manifest:
        f.write(f"{name}\t{expect}\n")
print(f"{len(os.listdir(NUM))} numeric cases in {NUM}, {len(manifest)} corpus cases in {COR}")
