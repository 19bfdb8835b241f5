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
from onnx import AttributeProto as AP, TensorProto as T, helper as h, numpy_helper as nh

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


def corpus(cls, case, m, expect, bounded=False):
    """expect: a substring of the error message, or 'ok'. bounded: the
    compilation must also end within the time and memory docs/SECURITY.md
    promises for small hostile files (run_corpus.py --bounds)."""
    name = f"{cls}-{case}"
    data = m if isinstance(m, bytes) else m.SerializeToString()
    with open(os.path.join(COR, name + ".onnx"), "wb") as f:
        f.write(data)
    manifest.append((name, expect, "bounded" if bounded else ""))


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

# Min and max reductions of 64-bit integers start from the type's extreme
# exactly (INT64_MAX and UINT64_MAX are no doubles: ReduceMin over int64
# returned INT64_MIN; found by fuzz_compile_run), in generated code and in
# constant folding.
for t, npt in ((T.INT64, np.int64), (T.UINT64, np.uint64)):
    info = np.iinfo(npt)
    x = np.array([[5, 7, info.max - 1], [info.min + 1, 3, 4]], npt)
    for op, fn in (("ReduceMin", np.min), ("ReduceMax", np.max)):
        name = f"{op.lower()}_{np.dtype(npt).name}"
        numeric(name, model([h.make_node(op, ["x"], ["y"], axes=[1], keepdims=0)], [vi("x", [2, 3], t)], [vi("y", [2], t)]),
                [x], [fn(x, axis=1)])
        one_ = np.array([0, 1], npt)
        numeric(name + "_folded",
                model([h.make_node(op, ["c"], ["m"], axes=[1], keepdims=0), h.make_node("Add", ["m", "x"], ["y"])],
                      [vi("x", [2], t)], [vi("y", [2], t)], [nh.from_array(x, "c")]), [one_], [fn(x, axis=1) + one_])

# Mod with fmod=1 by an infinite divisor is the dividend (C's fmod); the
# generated x - trunc(x / y) * y made it NaN, and fmod(-0, y) +0 (found by
# fuzz_compile_run). The reciprocal shows the sign of a zero.
x = np.array([1.5, -0.0, 3, np.inf, np.nan, -2.25, -0.0, -4.5, 4.5], np.float32)
y = np.array([np.inf, -np.inf, -np.inf, np.inf, np.inf, 0.5, -1.125, 1.5, -1.5], np.float32)
with np.errstate(invalid="ignore", divide="ignore"):
    fmod_xy = np.fmod(x, y)
    numeric("mod_fmod_infinite_divisor",
            model([h.make_node("Mod", ["x", "y"], ["m"], fmod=1), h.make_node("Reciprocal", ["m"], ["z"])],
                  [vi("x", [9]), vi("y", [9])], [vi("z", [9])]),
            [x, y], [np.reciprocal(fmod_xy)])

# fmod by divisors with long mantissas (a quotient of two floats) is exact,
# as C's: x - trunc(x / y) * y in float was an ulp off (found by
# fuzz_compile_run: Mod(2.75, w / x)).
rng = np.random.default_rng(11)
xs = (rng.standard_normal(64) * 8).astype(np.float32)
ys = (rng.standard_normal(64).astype(np.float32) / rng.uniform(0.1, 3, 64).astype(np.float32)).astype(np.float32)
numeric("exact_mod_fmod_long_mantissa", model([h.make_node("Mod", ["x", "y"], ["m"], fmod=1)], [vi("x", [64]), vi("y", [64])],
                                        [vi("m", [64])]), [xs, ys], [np.fmod(xs, ys)])

# Casts from float to integers saturate (NaN is 0), in generated code and in
# constant folding alike; folding wrapped (-1.625 to uint8 was 255 folded,
# 0 at run time; found by fuzz_compile_run).
x = np.array([-1.625, 300, np.nan, np.inf, -np.inf, 1e10, 2.75], np.float32)
for t, npt in ((T.UINT8, np.uint8), (T.INT8, np.int8), (T.INT32, np.int32), (T.UINT32, np.uint32), (T.INT64, np.int64)):
    info = np.iinfo(npt)
    sat = lambda v: 0 if np.isnan(v) else info.max if v >= info.max else info.min if v <= info.min else int(v)
    ref = np.array([sat(float(v)) for v in x], npt)
    name = f"cast_saturates_{np.dtype(npt).name}"
    numeric(name, model([h.make_node("Cast", ["x"], ["y"], to=t)], [vi("x", [7])], [vi("y", [7], t)]), [x], [ref])
    numeric(name + "_folded",
            model([h.make_node("Cast", ["c"], ["m"], to=t), h.make_node("Add", ["m", "z"], ["y"])], [vi("z", [7], t)],
                  [vi("y", [7], t)], [nh.from_array(x, "c")]), [np.zeros(7, npt)], [ref])

# Products over an empty batch have no task: the artifact still loads (a
# step of no tasks was refused at session init; found by fuzz_compile_run).
w = np.full((1, 2, 3), 0.5, np.float32)
for op, wt, out in (("ConvTranspose", w.transpose(1, 0, 2).copy()[:1], [0, 1, 6]), ("Conv", w, [0, 1, 2])):
    numeric(f"{op.lower()}_empty_batch",
            model([h.make_node(op, ["x", "w"], ["t"]), h.make_node("Exp", ["t"], ["y"])], [vi("x", [0, 2 if op == "Conv" else 1, 4])],
                  [vi("y", out)], [nh.from_array(wt, "w")]),
            [np.zeros((0, 2 if op == "Conv" else 1, 4), np.float32)], [np.zeros(out, np.float32)])
numeric("matmul_empty_rows", model([h.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [0, 3])], [vi("y", [0, 2])],
                                   [nh.from_array(np.ones((3, 2), np.float32), "w")]),
        [np.zeros((0, 3), np.float32)], [np.zeros((0, 2), np.float32)])
# An empty constant weight (its bytes were copied from a null pointer:
# UBSan in tests/fuzz's asan/hostile/numeric).
numeric("matmul_empty_k", model([h.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [2, 0])], [vi("y", [2, 3])],
                                [nh.from_array(np.ones((0, 3), np.float32), "w")]),
        [np.zeros((2, 0), np.float32)], [np.zeros((2, 3), np.float32)])

# Gemm with alpha = 0 does not compute the product (BLAS's convention, as
# beta = 0 drops C): the result is beta * C, +0 without C. It was 0 * sum
# through the loop kernel (-0 for a negative sum) but sum(a * 0w) = +0 in
# the GEMM, which folds alpha into its weights: the sign of a following
# division's infinity depended on the path (found by fuzz_compile_run).
gx = np.array([[-2.625, -3.75, -3.875, -3.75], [1.5, -2.0, 0.25, 3.0]], np.float32)
gw = np.array([[-2.125, 3.75, 0.25, -0.875], [1.0, 2.0, -3.0, 0.5], [0.0, -1.0, 1.0, 2.0]], np.float32)
for beta, c in ((0.0, np.array([0.375, -1.0, 2.0], np.float32)), (2.0, np.array([-1.0, 0.0, 0.5], np.float32))):
    gy = np.broadcast_to(np.float32(beta) * c if beta else np.zeros(3, np.float32), (2, 3)).astype(np.float32)
    for w_input in (False, True):  # constant weights (the GEMM) or a graph input (the loop kernel)
        numeric(f"gemm_alpha0_beta{int(beta)}" + ("_runtime_b" if w_input else ""),
                model([h.make_node("Gemm", ["x", "w", "c"], ["g"], alpha=0.0, beta=beta, transB=1),
                       h.make_node("Div", ["q", "g"], ["y"])],
                      [vi("x", [2, 4]), vi("q", [])] + ([vi("w", [3, 4])] if w_input else []), [vi("y", [2, 3])],
                      ([] if w_input else [nh.from_array(gw, "w")]) + [nh.from_array(c, "c")]),
                [gx, np.array(-3.5, np.float32)] + ([gw] if w_input else []), [(np.float32(-3.5) / gy).astype(np.float32)])

# Pow's special cases as C and numpy define them ((-inf)^2.5 = inf,
# 1^nan = 1, (-1)^inf = 1; the generated pow gave NaN; found by
# fuzz_compile_run), with the ones it had right; 0^nan and (-inf)^nan are
# NaN (the generated pow gave inf and 0; found by fuzz_compile_run).
inf, nan = np.inf, np.nan
pairs = [(-inf, 2.5), (-inf, -2.5), (-inf, 3), (-inf, -3), (-inf, 2), (1, nan), (1, inf), (1, -inf), (-1, inf), (-1, -inf),
         (-1, 3), (nan, 0), (0, -1), (-0.0, -3), (0, 2.5), (-2, 0.5), (-2, 3), (2, 10), (0.5, inf), (2, -inf), (inf, -1), (nan, 1),
         (0, nan), (-0.0, nan), (-inf, nan), (inf, nan), (-2, nan), (3, nan)]
x = np.array([p[0] for p in pairs], np.float32)
y = np.array([p[1] for p in pairs], np.float32)
with np.errstate(all="ignore"):
    numeric("pow_special_values", model([h.make_node("Pow", ["x", "y"], ["z"])], [vi("x", [len(pairs)]), vi("y", [len(pairs)])],
                                        [vi("z", [len(pairs)])]), [x, y], [np.power(x, y)])

# Concats of many inputs (lowered in groups of 16, then the groups): along
# the inner axis and an outer one, unequal lengths, a zero-length input,
# 16k + 1 inputs and one input repeated.
rng = np.random.default_rng(7)
for axis, n in ((1, 37), (0, 17), (1, 16), (0, 300)):
    lens = [(k * 7) % 5 for k in range(n)]  # 0 .. 4, a zero-length input among them
    xs = [rng.standard_normal((lens[k], 3) if axis == 0 else (2, lens[k])).astype(np.float32) for k in range(n)]
    names = [f"x{k}" for k in range(n)]
    out = np.concatenate(xs, axis=axis)
    numeric(f"concat_{n}_inputs_axis{axis}",
            model([h.make_node("Concat", names, ["y"], axis=axis)], [vi(nm, list(x.shape)) for nm, x in zip(names, xs)],
                  [vi("y", list(out.shape))]), xs, [out])
x = rng.standard_normal((2, 3)).astype(np.float32)
numeric("concat_one_input_40_times",
        model([h.make_node("Neg", ["x"], ["t"]), h.make_node("Concat", ["t"] * 40, ["y"], axis=1)], [vi("x", [2, 3])],
              [vi("y", [2, 120])]), [x], [np.concatenate([-x] * 40, axis=1)])

# ----------------------------------------------------------------- corpus --
relu = lambda shape, out=None: model([h.make_node("Relu", ["x"], ["y"])], [vi("x", shape)], [vi("y", out or shape)])
BIG = 6148914691236517206

# Shared by the attribute and index cases.
conv_in = [vi("x", [1, 2, 5, 5])]
w = nh.from_array(np.ones((3, 2, 3, 3), np.float32), "w")


def oversized_dimensions():
    """Overflowing and oversized dimensions of inputs, Expand, ConstantOfShape, Reshape, Tile."""
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


def opsets_and_domains():
    """Opsets from the future, below 1, of other domains."""
    for v in (18, 99, 200, 2**31 - 1):
        corpus("opset", f"ai_onnx_{v}", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=v),
               f"opset {v} of domain ai.onnx")
    corpus("opset", "ml_99", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], domains=[("ai.onnx.ml", 99)]),
           "opset 99 of domain ai.onnx.ml")
    corpus("opset", "unknown_domain_node", model([h.make_node("Relu", ["x"], ["y"], domain="evil.corp")], [vi("x", [2])], [vi("y", [2])],
                                                 domains=[("evil.corp", 1)]), "domain 'evil.corp'")
    corpus("opset", "zero", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=0), "opset 0")


def names_of_any_bytes():
    """Anything goes in names; the header, JSON and files stay valid."""
    for i, nm in enumerate(['x"\n#error INJECTED\n//', "*/ #error X /*", "a\\", "??/", "\x01\x02\x7f", "caf\xe9", "\ud7ff"[:0] + "naïve",
                            "x" * 5000, "", " ", "#define", "a\rb", "tab\tbed"]):
        nm = nm or "empty"
        corpus("names", f"input{i}", model([h.make_node("Relu", [nm], ["y"])], [vi(nm, [2])], [vi("y", [2])]), "ok")
        corpus("names", f"output{i}", model([h.make_node("Relu", ["x"], [nm])], [vi("x", [2])], [vi(nm, [2])]), "ok")
    bad_utf8 = model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])]).SerializeToString()
    corpus("names", "graph_name_bytes", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], name="g\n*/\"\\"), "ok")


def attribute_values():
    """Zero divisors, negative and huge values of attributes; axes."""
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


def indices_and_secondary_inputs():
    """Indices and secondary inputs the kernels would trust."""
    corpus("index", "gathernd_batch_dims_negative", model([h.make_node("GatherND", ["x", "i"], ["y"], batch_dims=-1)],
                                                          [vi("x", [2, 2])], [vi("y", ["a"])], [nh.from_array(np.zeros((2, 1), np.int64), "i")]),
           "batch_dims = -1 must not be negative")
    # Found by fuzz_import: the onnx library's inference read far outside a shape.
    corpus("index", "gathernd_batch_dims_very_negative", model([h.make_node("GatherND", ["x", "i"], ["y"], batch_dims=-33)],
                                                               [vi("x", [2, 2])], [vi("y", ["a"])], [nh.from_array(np.zeros((2, 1), np.int64), "i")]),
           "batch_dims = -33 must not be negative")
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


def control_flow_unrolls():
    """Control flow: unroll sizes, malformed bodies."""
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


def malformed_protobufs_and_graphs():
    """Malformed protobufs and graphs; mixed and unsupported types."""
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


def deep_nesting_and_chains():
    """Deep nesting and long chains."""
    inner = relu([2])
    g = inner.graph
    for depth in range(80):
        g = h.make_graph([h.make_node("If", ["c"], ["y"], then_branch=g, else_branch=inner.graph)], f"d{depth}", [], [vi("y", [2])])
    corpus("nesting", "if80", model([h.make_node("If", ["c"], ["y"], then_branch=g, else_branch=inner.graph)], [vi("c", [], T.BOOL), vi("x", [2])], [vi("y", [2])]), "")
    prev = "x"
    nodes = []
    # Cheap ops: the case is about the chain's length (linear compile time,
    # no recursion as deep as the chain); 5000 sigmoids would spend 20 s in
    # LLVM alone.
    for i in range(20000):
        nodes.append(h.make_node(["Relu", "Neg", "Abs", "Floor"][i % 4], [prev], [f"t{i}"]))
        prev = f"t{i}"
    corpus("chain", "elementwise20000", model(nodes, [vi("x", [1, 16])], [vi(prev, [1, 16])]), "ok")


# ------------------------------------------------------ corpus by class --
# Each function below attacks one class of weakness that model parsers have
# had CVEs for. Every case names the error it must end in (a substring of
# the message that names the problem), or "ok" for a model that is valid.
NOPARSE = "not an ONNX model: the protobuf does not parse"
EXTERNAL = "stores its data in an external file"


def node(op, ins, outs, **attrs):
    return h.make_node(op, ins, outs, **attrs)


def const(name, a, dtype=None):
    return nh.from_array(np.asarray(a, dtype), name)


def one(op, ins, inputs, outputs, inits=(), opset=13, outs=("y",), **attrs):
    """A model of a single node."""
    return model([node(op, list(ins), list(outs), **attrs)], inputs, outputs, inits, opset=opset)


def dyn(rank, t=T.FLOAT, name="y"):
    """An output of a given rank and unknown dimensions."""
    return vi(name, [f"d{i}" for i in range(rank)], t)


def pb_varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def pb_tag(num, wire):
    return pb_varint(num << 3 | wire)


def pb_len(num, payload):
    return pb_tag(num, 2) + pb_varint(len(payload)) + payload


def protobuf_cases():
    """The wire format itself: varints, lengths, wire types, groups, field
    numbers and truncation inside each kind of field. ModelProto.graph is
    field 7, GraphProto.node 1, NodeProto.name 3, TensorProto.dims 1."""
    m = model([node("Add", ["x", "w"], ["s"]), node("Softmax", ["s"], ["y"], axis=0)], [vi("x", [4])], [vi("y", [4])],
              [const("w", np.arange(4, dtype=np.float32) + 0.5)])
    good = m.SerializeToString()
    graph = m.graph.SerializeToString()
    corpus("proto", "varint_eleven_bytes", pb_tag(1, 0) + b"\xff" * 10 + b"\x01" + good, NOPARSE)
    corpus("proto", "varint_unterminated_at_end", good + pb_tag(1, 0) + b"\xff\xff\xff", NOPARSE)
    corpus("proto", "length_past_end", good + pb_tag(7, 2) + pb_varint(1 << 20) + graph, NOPARSE)
    corpus("proto", "length_negative", good + pb_tag(7, 2) + pb_varint(-1) + graph, NOPARSE)
    corpus("proto", "length_2gib", good + pb_tag(7, 2) + pb_varint(1 << 31) + graph, NOPARSE)
    nd = m.graph.node[0].SerializeToString()
    corpus("proto", "nested_length_past_parent", good + pb_len(7, pb_tag(1, 2) + pb_varint(len(nd) + 3) + nd), NOPARSE)
    corpus("proto", "string_length_past_parent", good + pb_len(7, pb_tag(2, 2) + pb_varint(1 << 30) + b"g"), NOPARSE)
    t = pb_tag(1, 2) + b"\x01\xff" + pb_tag(2, 0) + b"\x01"  # packed dims: a varint cut by its own length
    corpus("proto", "packed_varint_cut", good + pb_len(7, pb_len(5, t)), NOPARSE)
    t = pb_len(4, b"\0\0\x80\x3f\0") + pb_tag(2, 0) + b"\x01"  # packed float_data: 5 bytes
    corpus("proto", "packed_fixed32_ragged", good + pb_len(7, pb_len(5, t)), NOPARSE)
    corpus("proto", "wire_type_6", good + pb_tag(15, 6), NOPARSE)
    corpus("proto", "wire_type_7", good + pb_tag(15, 7) + b"\0" * 8, NOPARSE)
    corpus("proto", "field_number_zero", good + b"\x02\x00", NOPARSE)
    corpus("proto", "end_group_unopened", good + pb_tag(20, 4), NOPARSE)
    corpus("proto", "group_unclosed", good + pb_tag(20, 3), NOPARSE)
    corpus("proto", "group_mismatched_end", good + pb_tag(20, 3) + pb_tag(21, 4), NOPARSE)
    # protobuf's recursion limit stops these; no stack overflow
    corpus("proto", "groups_nested_100000", good + pb_tag(20, 3) * 100000 + pb_tag(20, 4) * 100000, NOPARSE)
    deep = b""
    for _ in range(2000):  # AttributeProto.g -> GraphProto.node -> NodeProto.attribute -> ...
        deep = pb_len(5, pb_len(6, pb_len(1, deep)) + pb_tag(20, 0) + b"\x05")
    corpus("proto", "messages_nested_6000", good + pb_len(7, pb_len(1, deep)), NOPARSE)
    # cut inside each kind of field: a string, a tensor's raw bytes, a packed
    # repeated field, a nested message's length, the opset import
    for what, marker, extra in (("op_type", b"Softmax", 3), ("raw_data", np.float32(2.5).tobytes(), 2),
                                ("initializer_name", b"\x42\x01w", 1), ("graph_output", b"b\x0f\n\x01y", 4),
                                ("opset_import", b"B\x04\n\x00\x10\r", 3)):
        at = good.rfind(marker)
        assert at > 0, what
        corpus("proto", f"truncated_in_{what}", good[:at + extra], NOPARSE)
    # Valid wire format, hostile content
    corpus("proto", "graph_twice_merges", good + pb_len(7, graph), "'x' has been used as graph input names multiple times")
    corpus("proto", "unknown_fields", good + pb_len(999, b"hello") + pb_tag(998, 0) + pb_varint(-1) +
           pb_tag(997, 5) + b"abcd" + pb_tag(996, 1) + b"12345678" + pb_tag(995, 3) + pb_tag(994, 0) + b"\x01" + pb_tag(995, 4), "ok")
    corpus("proto", "known_field_wrong_wire_type", good + pb_tag(7, 0) + pb_varint(1), "ok")
    corpus("proto", "only_unknown_fields", pb_len(999, good), "does not have an ir_version set properly")
    corpus("proto", "ir_version_negative", good + pb_tag(1, 0) + pb_varint(-1), "IR version < 3 cannot have opset_import specified")
    corpus("proto", "ir_version_future", good + pb_tag(1, 0) + pb_varint(99), "ir_version is higher than the checker's")


def tensor_cases():
    """Initializer and attribute tensors whose data does not match their
    header: byte counts, value counts, element types, and dimensions whose
    byte size wraps 64 bits (so a 4-byte raw_data "matches" 2^62+1 floats)."""
    x = [vi("x", [4])]
    add = lambda t: model([node("Add", ["x", "w"], ["y"])], x, [vi("y", [4])], [t])
    t = const("w", np.ones(4, np.float32))
    t.raw_data = b"\0" * 15
    corpus("tensor", "raw_data_short", add(t), "raw_data has 15 bytes, expected 16")
    t.raw_data = b"\0" * 17
    corpus("tensor", "raw_data_long", add(t), "raw_data has 17 bytes, expected 16")
    # Found by fuzz_import under ASan: the onnx library's shape inference
    # reads a Resize's constant scales and copied 15 bytes of raw_data into
    # a 12-byte buffer; tensors are now checked before it runs.
    x4 = [vi("x", [1, 1, 2, 2])]
    s = const("s", np.ones(4, np.float32))
    s.raw_data = b"\0" * 15
    corpus("tensor", "resize_scales_raw_data_short",
           model([node("Resize", ["x", "", "s"], ["y"])], x4, [dyn(4)], [s]), "tensor 's': raw_data has 15 bytes, expected 16")
    corpus("tensor", "resize_scales_constant_raw_data_short",
           model([node("Constant", [], ["s"], value=s), node("Resize", ["x", "", "s"], ["y"])], x4, [dyn(4)]),
           "tensor 's': raw_data has 15 bytes, expected 16")
    t = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[4], float_data=[1.0, 2.0, 3.0])
    corpus("tensor", "float_data_count", add(t), "has 3 values for shape [4]")
    t = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[4], int64_data=[1, 2, 3, 4])
    corpus("tensor", "int64_data_in_float_tensor", add(t), "should be stored in field 'float_data' instead of 'int64_data'")
    t = const("w", np.ones(4, np.float32))
    t.data_type = 0
    corpus("tensor", "data_type_undefined", add(t), "to UNDEFINED is not allowed")
    t.data_type = 9999
    corpus("tensor", "data_type_9999", add(t), "tensor 'w' has unsupported type")
    for dt in (T.COMPLEX64, T.COMPLEX128, T.STRING):
        t = h.make_tensor("w", dt, [4], [b"a"] * 4 if dt == T.STRING else [1 + 0j] * 4)
        corpus("tensor", f"{T.DataType.Name(dt).lower()}_initializer", add(t),
               "tensor 'w' holds strings: out of scope (strings)" if dt == T.STRING else "tensor 'w' has unsupported type")
    # byte sizes that wrap: 8 bytes of raw_data "match" 2^61+1 int64 (the
    # graph's initializers are size-checked first; these are not)
    for where in ("constant", "subgraph_initializer", "loop_body_initializer"):
        t = onnx.TensorProto(name="s", data_type=T.INT64, dims=[2**61 + 1], raw_data=np.array([2], np.int64).tobytes())
        if where == "constant":
            m = model([node("Constant", [], ["s"], value=t), node("ReduceSum", ["s"], ["y"], keepdims=0)], [], [vi("y", [], T.INT64)])
        elif where == "subgraph_initializer":
            br = h.make_graph([node("ReduceSum", ["s"], ["z"], keepdims=0)], "t", [], [vi("z", [], T.INT64)], [t])
            m = model([node("If", ["b"], ["y"], then_branch=br, else_branch=br)], [vi("b", [], T.BOOL)], [vi("y", [], T.INT64)])
        else:
            body = h.make_graph([node("Identity", ["c"], ["co"]), node("Reshape", ["v", "s"], ["vo"])], "b",
                                [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("v", [2])], [vi("co", [], T.BOOL), vi("vo", [2])], [t])
            m = model([node("Loop", ["m", "", "x"], ["y"], body=body)], [vi("x", [2])], [vi("y", [2])], [const("m", 2, np.int64)])
        corpus("tensor", f"byte_size_wraps_{where}", m, "tensor 's' has shape [2305843009213693953]: its size in bytes overflows 64 bits")
    t = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[2**62 + 1], raw_data=b"\0" * 4)
    corpus("tensor", "byte_size_wraps_initializer", add(t), "initializer 'w' has dimension 4611686018427387905")
    t = onnx.TensorProto(name="v", data_type=T.FLOAT, dims=[2**31, 2**31 + 1], raw_data=b"\0" * 4)
    corpus("tensor", "constant_huge_dims", model([node("Constant", [], ["v"], value=t), node("Add", ["x", "v"], ["y"])], x, [dyn(2)]),
           "tensor 'v' has shape [2147483648,2147483649]: its size in bytes overflows 64 bits")
    t = onnx.TensorProto(name="v", data_type=T.FLOAT, dims=[-1, 4], float_data=[1.0] * 4)
    corpus("tensor", "constant_negative_dims", model([node("Constant", [], ["v"], value=t), node("Add", ["x", "v"], ["y"])], x, [dyn(2)]),
           "tensor 'v' has a negative dimension in [-1,4]")
    t = onnx.TensorProto(name="s", data_type=T.INT64, dims=[2], int64_data=[2, 2])
    corpus("tensor", "constantofshape_value_two_elements",
           model([node("ConstantOfShape", ["s"], ["y"], value=const("v", [1.0, 2.0], np.float32))], [], [vi("y", [2, 2])], [t]),
           "value must be a tensor of one element, it has shape [2]")
    corpus("tensor", "constantofshape_value_empty",
           model([node("ConstantOfShape", ["s"], ["y"], value=const("v", np.zeros(0), np.float32))], [], [vi("y", [2, 2])], [t]),
           "value must be a tensor of one element, it has shape [0]")
    corpus("tensor", "sparse_initializer", _with_sparse(), "sparse initializers")


def _with_sparse():
    m = model([node("Relu", ["x"], ["y"])], [vi("x", [4])], [vi("y", [4])])
    sp = m.graph.sparse_initializer.add()
    sp.values.CopyFrom(const("sv", np.ones(1, np.float32)))
    sp.indices.CopyFrom(const("si", np.array([1], np.int64)))
    sp.dims.extend([4])
    return m


def external_data_cases():
    """Tensors whose bytes live in another file: tinyrt reads no file a model
    names, whatever the path (absolute, ../, missing, past its end)."""
    def ext(entries, where="initializer"):
        t = const("w", np.ones(4, np.float32))
        t.ClearField("raw_data")
        t.data_location = T.EXTERNAL
        for k, v in entries:
            t.external_data.add(key=k, value=v)
        if where == "initializer":
            return model([node("Add", ["x", "w"], ["y"])], [vi("x", [4])], [vi("y", [4])], [t])
        if where == "constant":
            return model([node("Constant", [], ["w"], value=t), node("Add", ["x", "w"], ["y"])], [vi("x", [4])], [vi("y", [4])])
        br = h.make_graph([node("Add", ["x", "w"], ["z"])], "t", [], [vi("z", [4])], [t])
        return model([node("If", ["b"], ["y"], then_branch=br, else_branch=br)], [vi("b", [], T.BOOL), vi("x", [4])], [vi("y", [4])])
    corpus("external", "absolute_path", ext([("location", "/etc/passwd")]), EXTERNAL)
    corpus("external", "dotdot_traversal", ext([("location", "../" * 12 + "etc/hostname")]), EXTERNAL)
    corpus("external", "proc_self_mem", ext([("location", "/proc/self/mem"), ("offset", "4096"), ("length", "16")]), EXTERNAL)
    corpus("external", "device_file", ext([("location", "/dev/zero")]), EXTERNAL)
    corpus("external", "missing_file", ext([("location", "tinyrt-no-such-weights.bin")]), "tinyrt-no-such-weights.bin")
    corpus("external", "length_past_end", ext([("location", "/etc/hostname"), ("length", str(2**40))]), EXTERNAL)
    corpus("external", "offset_negative", ext([("location", "/etc/hostname"), ("offset", "-4096")]), EXTERNAL)
    corpus("external", "no_location", ext([("length", "16")]), "is stored externally but doesn't have a location")
    corpus("external", "constant_attribute", ext([("location", "/etc/passwd")], "constant"), EXTERNAL)
    corpus("external", "subgraph_initializer", ext([("location", "/etc/passwd")], "subgraph"), EXTERNAL)


def shape_target_cases():
    """Shapes that come from data: Reshape, Expand, Tile, ConstantOfShape,
    Range, Resize, Pad, OneHot, Upsample targets that are negative,
    overflowing, inconsistent or absurdly large."""
    x23 = [vi("x", [2, 3])]
    i64 = lambda name, v: const(name, v, np.int64)
    for nm, s, expect in (("two_minus_one", [-1, -1], "more than one -1 in the shape"),
                          ("minus_two", [-2, 3], "invalid dimension -2"),
                          ("zero_past_rank", [2, 3, 0], "0 refers to a missing input dimension"),
                          ("huge_negative", [-(2**62), 1], "invalid dimension -4611686018427387904"),
                          ("product_wraps", [2**32, 2**32, -1], "shape [4294967296,4294967296,-1] has more elements than a 64-bit count holds")):
        corpus("size", f"reshape_{nm}", one("Reshape", ["x", "s"], x23, [dyn(len(s))], [i64("s", s)]), expect)
    corpus("size", "reshape_allowzero_zero_and_minus_one", one("Reshape", ["x", "s"], x23, [dyn(2)], [i64("s", [0, -1])], opset=14, allowzero=1),
           "cannot infer -1 reshaping [2,3]")
    corpus("size", "expand_negative", one("Expand", ["x", "s"], x23, [dyn(2)], [i64("s", [-2, 3])]),
           "shapes [2,3] and [-2,3] cannot be broadcast")
    corpus("size", "expand_incompatible", one("Expand", ["x", "s"], x23, [dyn(2)], [i64("s", [2, 4])]),
           "shapes [2,3] and [2,4] cannot be broadcast")
    corpus("size", "expand_rank_1000", one("Expand", ["x", "s"], x23, [dyn(1000)], [i64("s", [1] * 998 + [2, 3])]), "ok")
    corpus("size", "tile_negative", one("Tile", ["x", "r"], x23, [dyn(2)], [i64("r", [-1, 2])]), "computed a negative dimension [-2,6]")
    corpus("size", "tile_wrong_length", one("Tile", ["x", "r"], x23, [dyn(2)], [i64("r", [2, 2, 2])]),
           "repeats must have one entry per axis")
    corpus("size", "tile_product_wraps", one("Tile", ["x", "r"], x23, [dyn(2)], [i64("r", [2**62, 2**62])]),
           "axis 0 of [2,3] repeated 4611686018427387904 times has more elements than a 64-bit count holds")
    corpus("size", "constantofshape_negative", one("ConstantOfShape", ["s"], [], [dyn(2)], [i64("s", [4, -4])]),
           "negative dimension in [4,-4]")
    # 2^28 x 2 float32 is 2 GiB: below the element cap, above the folded-bytes cap
    corpus("size", "constantofshape_fold_bomb", model([node("ConstantOfShape", ["s"], ["c"], value=const("v", [1.0], np.float32)),
                                                       node("ReduceSum", ["c"], ["y"], keepdims=0)], [], [vi("y", [])], [i64("s", [2**28, 2])]),
           "a constant of 2147483648 bytes exceeds --max-folded-bytes 268435456")
    f32 = lambda name, v: const(name, v, np.float32)
    corpus("size", "range_delta_zero", one("Range", ["a", "b", "d"], [], [dyn(1, T.INT64)], [i64("a", 0), i64("b", 10), i64("d", 0)], opset=11),
           "delta is 0")
    corpus("size", "range_huge", one("Range", ["a", "b", "d"], [], [dyn(1, T.INT64)], [i64("a", 0), i64("b", 2**62), i64("d", 1)], opset=11),
           "(limit - start) / delta is 4611686018427387904.000000, not an element count")
    corpus("size", "range_wraps", one("Range", ["a", "b", "d"], [], [dyn(1, T.INT64)], [i64("a", -(2**63)), i64("b", 2**63 - 1), i64("d", 2**62)], opset=11),
           "ok")
    corpus("size", "range_nan_delta", one("Range", ["a", "b", "d"], [], [dyn(1)], [f32("a", 0), f32("b", 10), f32("d", np.nan)], opset=11),
           "(limit - start) / delta is nan, not an element count")
    corpus("size", "range_inf_limit", one("Range", ["a", "b", "d"], [], [dyn(1)], [f32("a", 0), f32("b", np.inf), f32("d", 1)], opset=11),
           "(limit - start) / delta is inf, not an element count")
    corpus("size", "range_start_empty", one("Range", ["a", "b", "d"], [], [dyn(1, T.INT64)], [i64("a", np.zeros(0)), i64("b", 4), i64("d", 1)],
                                            opset=11), "start, limit and delta must be scalars; input 0 has shape [0]")
    corpus("size", "range_not_scalar", one("Range", ["a", "b", "d"], [], [dyn(1, T.INT64)], [i64("a", [0, 1]), i64("b", 4), i64("d", 1)], opset=11),
           "start, limit and delta must be scalars; input 0 has shape [2]")
    x4 = [vi("x", [1, 1, 2, 2])]
    for nm, sc, expect in (("huge", [1, 1, 1e10, 1e10], "[1,1,20000000000,20000000000]: its element count overflows 64 bits"),
                           ("negative", [1, 1, -2, 2], "scale -2.000000 of axis 2 is not positive"),
                           ("nan", [1, 1, np.nan, 2], "scale nan of axis 2 is not positive"),
                           ("wrong_length", [2, 2], "scales must have one entry per axis")):
        corpus("size", f"resize_scales_{nm}", one("Resize", ["x", "", "s"], x4, [dyn(4)], [f32("s", sc)]), expect)
    for nm, sz, expect in (("negative", [1, 1, -4, 4], "computed a negative dimension [1,1,-4,4]"),
                           ("huge", [1, 1, 2**40, 2**40], "[1,1,1099511627776,1099511627776]: its element count overflows 64 bits"),
                           ("wrong_length", [4, 4, 4], "sizes must have one entry per axis")):
        corpus("size", f"resize_sizes_{nm}", one("Resize", ["x", "", "", "s"], x4, [dyn(4)], [i64("s", sz)]), expect)
    corpus("size", "resize_scales_1e30", one("Resize", ["x", "", "s"], x4, [dyn(4)], [f32("s", [1, 1, 1e30, 1])]),
           "gives no output dimension")
    corpus("size", "resize_scales_minus_inf", one("Resize", ["x", "", "s"], x4, [dyn(4)], [f32("s", [1, 1, -np.inf, 1])]),
           "scale -inf of axis 2 is not positive")
    corpus("size", "upsample_attribute_scales_nan", one("Upsample", ["x"], x4, [dyn(4)], opset=7, scales=[1.0, 1.0, float("nan"), 1.0]),
           "scale nan of axis 2 is not positive")
    corpus("size", "upsample_scales_huge", one("Upsample", ["x", "s"], x4, [dyn(4)], [f32("s", [1, 1, 1e9, 1e9])], opset=9),
           "output 0 has shape [1,1,2000000000,2000000000]: 4000000000000000000 elements, more than the 2147483647")
    corpus("size", "pad_huge", one("Pad", ["x", "p"], x23, [dyn(2)], [i64("p", [0, 2**40, 0, 0])]), "pads holds 1099511627776")
    corpus("size", "pad_begin_end_cancel", one("Pad", ["x", "p"], x23, [dyn(2)], [i64("p", [0, 2**63 - 1, 0, -(2**63 - 2)])]),
           "pads holds 9223372036854775807")
    corpus("size", "pad_negative_past_dim", one("Pad", ["x", "p"], x23, [dyn(2)], [i64("p", [0, -5, 0, 0])]),
           "computed a negative dimension [2,-2]")
    corpus("size", "pad_wrong_length", one("Pad", ["x", "p"], x23, [dyn(2)], [i64("p", [1, 1, 1])]), "pads must have 2*rank entries")
    corpus("size", "onehot_depth_huge", one("OneHot", ["i", "d", "v"], [vi("i", [3], T.INT64)], [dyn(2)],
                                            [i64("d", 2**40), f32("v", [0, 1])]),
           "output 0 has shape [3,1099511627776]: 3298534883328 elements, more than the 2147483647")
    corpus("size", "onehot_depth_nan", one("OneHot", ["i", "d", "v"], [vi("i", [3], T.INT64)], [dyn(2)],
                                           [f32("d", np.nan), f32("v", [0, 1])]), "depth nan is not a size")
    corpus("size", "onehot_depth_negative", one("OneHot", ["i", "d", "v"], [vi("i", [3], T.INT64)], [dyn(2)],
                                                [i64("d", -3), f32("v", [0, 1])]), "computed a negative dimension [3,-3]")
    corpus("size", "eyelike_rank3", one("EyeLike", ["x"], [vi("x", [2, 2, 2])], [dyn(3)]), "input must be 2-D")
    corpus("size", "input_negative_dim", one("Relu", ["x"], [vi("x", [-4, 2])], [dyn(2)]), "graph input 'x' has a negative dimension -4")
    corpus("size", "input_rank_2000", one("Relu", ["x"], [vi("x", [1] * 2000)], [dyn(2000)]), "ok")
    corpus("size", "initializer_wraps", model([node("Add", ["x", "w"], ["y"])], x23, [dyn(2)],
                                              [onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[2**32, 2**32, 2**32])]),
           "initializer 'w' has dimension 4294967296")
    corpus("size", "matmul_inner_mismatch", one("MatMul", ["x", "w"], x23, [dyn(2)], [f32("w", np.ones((4, 5)))]),
           "inner dimensions differ: [2,3] x [4,5]")
    corpus("size", "gemm_inner_mismatch", one("Gemm", ["x", "w"], x23, [dyn(2)], [f32("w", np.ones((4, 5)))]),
           "inner dimensions differ: [2,3] x [4,5]")
    corpus("size", "add_broadcast_mismatch", one("Add", ["x", "w"], x23, [dyn(2)], [f32("w", np.ones(4))]),
           "shapes [2,3] and [4] cannot be broadcast")
    corpus("size", "concat_dim_mismatch", one("Concat", ["x", "w"], x23, [dyn(2)], [f32("w", np.ones((2, 4)))], axis=0),
           "input shapes [2,3] and [2,4] differ off the axis")
    corpus("size", "concat_rank_mismatch", one("Concat", ["x", "w"], x23, [dyn(2)], [f32("w", np.ones(3))], axis=0),
           "inputs differ in rank or type")
    corpus("size", "split_sizes_sum", one("Split", ["x", "s"], x23, [dyn(2, name="a"), dyn(2, name="b")], [i64("s", [1, 1])],
                                          outs=("a", "b"), axis=1), "split sizes do not add up to the axis")
    corpus("size", "split_sizes_negative", one("Split", ["x", "s"], x23, [dyn(2, name="a"), dyn(2, name="b")], [i64("s", [-1, 4])],
                                               outs=("a", "b"), axis=1), "split size -1 outside [0, 3]")
    # Found by fuzz_import: the sum of the sizes overflowed int64.
    corpus("size", "split_sizes_overflow", one("Split", ["x", "s"], x23, [dyn(2, name="a"), dyn(2, name="b")],
                                               [i64("s", [1, 2**63 - 1])], outs=("a", "b"), axis=1),
           "split size 9223372036854775807 outside [0, 3]")
    corpus("size", "det_not_square", one("Det", ["x"], x23, [dyn(0)]), "input must be [..., M, M]")
    corpus("size", "slice_steps_zero", one("Slice", ["x", "s", "e", "a", "st"], x23, [dyn(2)],
                                           [i64("s", [0]), i64("e", [3]), i64("a", [1]), i64("st", [0])]), "step 0")
    corpus("size", "slice_steps_min_int", one("Slice", ["x", "s", "e", "a", "st"], x23, [vi("y", [2, 1])],
                                              [i64("s", [-1]), i64("e", [-(2**63)]), i64("a", [1]), i64("st", [-(2**63)])]), "ok")
    corpus("size", "slice_starts_huge_valid", one("Slice", ["x", "s", "e", "a"], x23, [vi("y", [2, 1])],
                                                  [i64("s", [-(2**62)]), i64("e", [-2]), i64("a", [1])]), "ok")
    corpus("size", "slice_lengths_differ", one("Slice", ["x", "s", "e"], x23, [dyn(2)], [i64("s", [0, 0]), i64("e", [1])]),
           "starts, ends, axes and steps differ in length")


def axis_cases():
    """Axes out of range, negative beyond the rank, duplicated, in
    attributes and in constant inputs, across the ops that take them."""
    x = [vi("x", [2, 3])]
    i64 = lambda name, v: const(name, v, np.int64)
    corpus("axis", "split_axis", one("Split", ["x"], x, [dyn(2, name="a"), dyn(2, name="b")], outs=("a", "b"), axis=2),
           "axis 2 out of range for rank 2")
    corpus("axis", "reducesum_axes_input", one("ReduceSum", ["x", "a"], x, [dyn(2)], [i64("a", [2])]), "axis 2 out of range for rank 2")
    corpus("axis", "reducemean_axes_beyond_negative", one("ReduceMean", ["x"], x, [dyn(2)], axes=[-3]), "axis -3 out of range for rank 2")
    corpus("axis", "reducel2_axes_out_of_range", one("ReduceL2", ["x"], x, [dyn(2)], axes=[7]), "axis 7 out of range for rank 2")
    corpus("axis", "reducelogsumexp_axes_int32", one("ReduceSum", ["x", "a"], x, [dyn(2)], [const("a", [9], np.int32)]),
           "axis 9 out of range for rank 2")
    for nm, perm, expect in (("duplicated", [0, 0], "perm is not a permutation"), ("out_of_range", [0, 5], "axis 5 out of range for rank 2"),
                             ("short", [0], "perm has the wrong length"), ("long", [1, 0, 2], "perm has the wrong length")):
        corpus("axis", f"transpose_perm_{nm}", one("Transpose", ["x"], x, [dyn(len(perm))], perm=perm), expect)
    corpus("axis", "squeeze_non_one", one("Squeeze", ["x", "a"], x, [dyn(1)], [i64("a", [0])]), "cannot squeeze axis 0 of size 2")
    corpus("axis", "squeeze_out_of_range", one("Squeeze", ["x", "a"], [vi("x", [1, 3])], [dyn(2)], [i64("a", [4])]),
           "axis 4 out of range for rank 2")
    corpus("axis", "unsqueeze_out_of_range", one("Unsqueeze", ["x", "a"], x, [dyn(3)], [i64("a", [3])]), "axis 3 out of range for rank 3")
    corpus("axis", "unsqueeze_duplicated", one("Unsqueeze", ["x", "a"], x, [dyn(4)], [i64("a", [0, 0])]), "repeated axis")
    corpus("axis", "unsqueeze_v11_attribute", one("Unsqueeze", ["x"], x, [dyn(3)], opset=11, axes=[-4]), "axis -4 out of range for rank 3")
    corpus("axis", "onehot_axis", one("OneHot", ["i", "d", "v"], [vi("i", [3], T.INT64)], [dyn(2)],
                                      [i64("d", 4), const("v", [0, 1], np.float32)], axis=3), "axis 3 out of range for rank 2")
    corpus("axis", "slice_axes_out_of_range", one("Slice", ["x", "s", "e", "a"], x, [dyn(2)],
                                                  [i64("s", [0]), i64("e", [1]), i64("a", [2])]), "axis 2 out of range for rank 2")
    corpus("axis", "gatherelements_axis", one("GatherElements", ["x", "i"], x, [dyn(2)], [i64("i", [[0]])], axis=2),
           "axis 2 out of range for rank 2")
    corpus("axis", "scatterelements_axis", one("ScatterElements", ["x", "i", "u"], x, [dyn(2)],
                                               [i64("i", [[0]]), const("u", [[1.0]], np.float32)], axis=-3),
           "axis -3 out of range for rank 2")
    corpus("axis", "compress_axis", one("Compress", ["x", "c"], x, [dyn(2)], [const("c", [True], np.bool_)], axis=2),
           "axis 2 out of range for rank 2")
    corpus("axis", "lpnormalization_axis", one("LpNormalization", ["x"], x, [dyn(2)], axis=2), "axis 2 out of range for rank 2")
    corpus("axis", "reversesequence_same_axes", one("ReverseSequence", ["x", "l"], x, [dyn(2)], [i64("l", [1, 1, 1])],
                                                    batch_axis=1, time_axis=1),
           "batch_axis and time_axis must be 0 and 1 (in either order) of an input of rank >= 2")
    corpus("axis", "softmax_v11_axis", one("Softmax", ["x"], x, [dyn(2)], opset=11, axis=2), "(Softmax): axis 2 out of range for rank 2")
    corpus("axis", "depthtospace_rank3", one("DepthToSpace", ["x"], [vi("x", [4, 2, 2])], [dyn(3)], blocksize=2),
           "needs a 4-D input and blocksize >= 1")
    corpus("axis", "concat_scalars", one("Concat", ["x", "x"], [vi("x", [])], [dyn(1)], axis=0), "axis 0 out of range for rank 0")
    corpus("axis", "gather_scalar_data", one("Gather", ["x", "i"], [vi("x", [])], [dyn(0)], [i64("i", 0)]),
           "axis 0 out of range for rank 0")
    corpus("axis", "argmax_scalar", one("ArgMax", ["x"], [vi("x", [])], [dyn(0, T.INT64)]), "axis 0 out of range for rank 0")
    # a scalar has no axis 0 (these read past an empty shape before)
    corpus("axis", "cumsum_scalar", one("CumSum", ["x", "a"], [vi("x", [])], [dyn(0)], [i64("a", 0)]), "axis 0 out of range for rank 0")
    corpus("axis", "split_scalar", one("Split", ["x"], [vi("x", [])], [dyn(0, name="a")], outs=("a",)), "axis 0 out of range for rank 0")
    corpus("axis", "softmax_scalar", one("Softmax", ["x"], [vi("x", [])], [dyn(0)]), "axis -1 out of range for rank 0")
    corpus("axis", "compress_scalar", one("Compress", ["x", "c"], [vi("x", [])], [dyn(1)], [const("c", [True], np.bool_)], axis=0),
           "axis 0 out of range for rank 0")
    corpus("axis", "scatterelements_scalar", one("ScatterElements", ["x", "i", "u"], [vi("x", [])], [dyn(0)],
                                                 [i64("i", 0), const("u", 1.0, np.float32)]), "axis 0 out of range for rank 0")
    corpus("axis", "slice_scalar", one("Slice", ["x", "s", "e"], [vi("x", [])], [dyn(0)], [i64("s", [0]), i64("e", [1])]),
           "axis 0 out of range for rank 0")
    corpus("axis", "lrn_rank1", one("LRN", ["x"], [vi("x", [3])], [dyn(1)], size=1), "input rank must be >= 2")
    corpus("axis", "flatten_axis_rank_plus_one", one("Flatten", ["x"], x, [dyn(2)], axis=3), "(Flatten): axis out of range")
    corpus("axis", "meanvariance_axes", one("MeanVarianceNormalization", ["x"], x, [dyn(2)], axes=[0, 5]), "axis 5 out of range for rank 2")
    corpus("axis", "dft_axis", one("DFT", ["x"], [vi("x", [1, 8, 1])], [dyn(3)], opset=17, axis=3), "axis 3 out of range for rank 2")
    corpus("axis", "trilu_rank1", one("Trilu", ["x"], [vi("x", [3])], [dyn(1)], opset=14), "input rank must be >= 2")
    corpus("axis", "instancenorm_rank1", one("InstanceNormalization", ["x", "s", "b"], [vi("x", [3])], [dyn(1)],
                                             [const("s", [1.0], np.float32), const("b", [0.0], np.float32)]), "input rank must be >= 3")
    # The spec's rules some invalid models used to slip through (each
    # compiled to a defined result; now refused, naming the problem).
    corpus("axis", "reducesum_axes_duplicated", one("ReduceSum", ["x", "a"], x, [dyn(2)], [i64("a", [1, -1])]),
           "axis -1 is named twice in axes")
    corpus("axis", "reducemax_axes_attribute_duplicated", one("ReduceMax", ["x"], x, [dyn(2)], axes=[0, 0]),
           "axis 0 is named twice in axes")
    corpus("axis", "squeeze_axes_duplicated", one("Squeeze", ["x", "a"], [vi("x", [1, 3])], [dyn(1)], [i64("a", [0, -2])]),
           "axis -2 is named twice in axes")
    corpus("axis", "slice_axes_duplicated", one("Slice", ["x", "s", "e", "a"], x, [dyn(2)],
                                                [i64("s", [0, 1]), i64("e", [1, 2]), i64("a", [1, 1])]), "axis 1 is named twice in axes")
    corpus("axis", "transpose_perm_negative", one("Transpose", ["x"], x, [dyn(2)], perm=[-1, 0]), "perm entry -1 is negative")
    corpus("axis", "reshape_shape_int32", one("Reshape", ["x", "s"], x, [dyn(2)], [const("s", [3, 2], np.int32)]),
           "shape must be a 1-D int64 tensor, not int32[2]")
    corpus("axis", "reshape_shape_2d", one("Reshape", ["x", "s"], x, [dyn(2)], [i64("s", [[3, 2]])]),
           "shape must be a 1-D int64 tensor, not int64[1,2]")
    corpus("axis", "resize_zero_scale", one("Resize", ["x", "", "s"], [vi("x", [1, 1, 2, 2])], [dyn(4)],
                                            [const("s", [1, 1, 0, 2], np.float32)]), "scale 0.000000 of axis 2 is not positive")


def index_cases():
    """Constant index tensors that point outside their data: a constant
    index is checked at compile time (the runtime clamps only
    data-dependent ones), also when both data and indices are constant and
    the node is folded."""
    x = [vi("x", [2, 3])]
    i64 = lambda name, v: const(name, v, np.int64)
    data = const("d", np.arange(6, dtype=np.float32).reshape(2, 3))
    for nm, idx in (("past_end", [3]), ("before_start", [-4]), ("huge", [2**40])):
        expect = f"index {idx[0]} of 'i' is out of range for an axis of 3"
        corpus("index", f"gather_const_{nm}", one("Gather", ["x", "i"], x, [dyn(2)], [i64("i", idx)], axis=1), expect)
        corpus("index", f"gather_folded_{nm}", one("Gather", ["d", "i"], [], [dyn(2)], [data, i64("i", idx)], axis=1), expect)
    corpus("index", "gatherelements_const_past_end", one("GatherElements", ["x", "i"], x, [dyn(2)], [i64("i", [[0, 5]])], axis=1),
           "index 5 of 'i' is out of range for an axis of 3")
    corpus("index", "gatherelements_folded_past_end", one("GatherElements", ["d", "i"], [], [dyn(2)], [data, i64("i", [[0, -9]])], axis=1),
           "index -9 of 'i' is out of range for an axis of 3")
    corpus("index", "gathernd_const_past_end", one("GatherND", ["x", "i"], x, [dyn(1)], [i64("i", [[1, 3]])]),
           "index 3 of 'i' is out of range for an axis of 3")
    corpus("index", "gathernd_folded_past_end", one("GatherND", ["d", "i"], [], [dyn(1)], [data, i64("i", [[2, 0]])]),
           "index 2 of 'i' is out of range for an axis of 2")
    corpus("index", "scatternd_const_past_end", one("ScatterND", ["x", "i", "u"], x, [dyn(2)],
                                                    [i64("i", [[5, 0]]), const("u", [1.0], np.float32)]),
           "index 5 of 'i' is out of range for an axis of 2")
    corpus("index", "scatternd_folded_past_end", one("ScatterND", ["d", "i", "u"], [], [dyn(2)],
                                                     [data, i64("i", [[0, -4]]), const("u", [1.0], np.float32)]),
           "index -4 of 'i' is out of range for an axis of 3")
    corpus("index", "scatterelements_const_past_end", one("ScatterElements", ["x", "i", "u"], x, [dyn(2)],
                                                          [i64("i", [[7]]), const("u", [[1.0]], np.float32)], axis=1),
           "index 7 of 'i' is out of range for an axis of 3")
    corpus("index", "scatterelements_folded_past_end", one("ScatterElements", ["d", "i", "u"], [], [dyn(2)],
                                                           [data, i64("i", [[0], [-3]]), const("u", [[1.0], [2.0]], np.float32)]),
           "index -3 of 'i' is out of range for an axis of 2")
    corpus("index", "scatternd_updates_shape", one("ScatterND", ["x", "i", "u"], x, [dyn(2)],
                                                   [i64("i", [[0]]), const("u", np.ones((1, 5)), np.float32)]),
           "updates have shape [1,5], expected [1,3]")
    corpus("index", "scatterelements_updates_shape", one("ScatterElements", ["x", "i", "u"], x, [dyn(2)],
                                                         [i64("i", [[0, 1]]), const("u", [[1.0]], np.float32)]),
           "indices and updates must match")
    corpus("index", "gatherelements_index_rank", one("GatherElements", ["x", "i"], x, [dyn(1)], [i64("i", [0])]),
           "indices must have the data's rank")
    corpus("index", "compress_condition_too_long", one("Compress", ["x", "c"], x, [dyn(2)], [const("c", [1, 0, 1, 1, 1], np.bool_)], axis=1),
           "condition longer than the axis")
    corpus("index", "compress_runtime_condition", one("Compress", ["x", "c"], x + [vi("c", [3], T.BOOL)], [dyn(2)], axis=1),
           "ok")
    corpus("index", "compress_condition_2d", one("Compress", ["x", "c"], x + [vi("c", [3, 1], T.BOOL)], [dyn(2)], axis=1),
           "the condition must be 1-D")
    # data-dependent sizes: malformed NonMaxSuppression, a bound past the limits
    bx, sc = vi("b", [1, 5, 4]), vi("s", [1, 2, 5])
    nms = lambda ins, inputs, inits=(), **a: one("NonMaxSuppression", ins, inputs, [dyn(2, T.INT64)], inits, **a)
    corpus("ddep", "nms_boxes_not_4", nms(["b", "s"], [vi("b", [1, 5, 3]), sc]), "boxes must be [batches, boxes, 4]")
    corpus("ddep", "nms_scores_other_boxes", nms(["b", "s"], [bx, vi("s", [1, 2, 6])]),
           "scores must be [batches, classes, boxes]")
    corpus("ddep", "nms_center_point_box_2", nms(["b", "s"], [bx, sc], center_point_box=2), "center_point_box is 2")
    corpus("ddep", "nms_iou_above_1", nms(["b", "s", "m", "t"], [bx, sc], [i64("m", [3]), const("t", [1.5], np.float32)]),
           "iou_threshold is 1.5")
    corpus("ddep", "nms_max_two_values", nms(["b", "s", "m"], [bx, sc], [i64("m", [3, 4])]), "max_output_boxes_per_class")
    corpus("ddep", "nms_bound_past_limit", nms(["b", "s"], [vi("b", [64, 60000, 4]), vi("s", [64, 1000, 60000])]),
           "elements, more than the")
    corpus("ddep", "unique_pairs_past_limit", one("Unique", ["x"], [vi("x", [200000])], [dyn(1)]),
           "the pairwise comparison of its 200000 slices", bounded=True)
    corpus("ddep", "nonzero_scalar_ok", one("NonZero", ["x"], [vi("x", [])], [dyn(2, T.INT64)]), "ok")
    # a data-dependent size nothing reads (its op dropped as dead): compiles
    corpus("ddep", "nonzero_unused_ok", model([node("NonZero", ["x"], ["nz"]), node("Relu", ["x"], ["y"])], [vi("x", [4])],
                                              [vi("y", [4])], []), "ok")
    corpus("index", "gathernd_scalar_indices", one("GatherND", ["x", "i"], x, [dyn(2)], [i64("i", 0)]), "indices must have rank >= 1")
    corpus("index", "gathernd_batch_longer_than_data", one("GatherND", ["x", "i"], x, [dyn(1)], [i64("i", [[0], [1], [2], [0]])], batch_dims=1),
           "batch axis 0 of data [2,3] and indices [4,1] differ")
    corpus("index", "instancenorm_scale_short", one("InstanceNormalization", ["x", "s", "b"], [vi("x", [1, 4, 3])], [dyn(3)],
                                                    [const("s", [1.0, 1.0], np.float32), const("b", np.zeros(4), np.float32)]),
           "scale is float32 [2], expected float32 [4]")
    corpus("index", "instancenorm_scale_scalar", one("InstanceNormalization", ["x", "s", "b"], [vi("x", [1, 4, 3])], [dyn(3)],
                                                     [const("s", 1.0, np.float32), const("b", np.zeros(4), np.float32)]),
           "scale is float32 [], expected float32 [4]")
    # constant inputs read as one number: empty or longer ones were read past their end
    corpus("index", "cumsum_axis_two_elements", one("CumSum", ["x", "a"], x, [vi("y", [2, 3])], [i64("a", [0, 1])]),
           "axis has shape [2]; it must hold one element")
    corpus("index", "cumsum_axis_empty", one("CumSum", ["x", "a"], x, [vi("y", [2, 3])], [i64("a", np.zeros(0))]),
           "axis has shape [0]; it must hold one element")
    corpus("index", "topk_k_empty", one("TopK", ["x", "k"], x, [dyn(2), dyn(2, T.INT64, "i")], [i64("k", np.zeros(0))], outs=("y", "i")),
           "k has shape [0]; it must hold one element")
    corpus("index", "trilu_k_empty", one("Trilu", ["x", "k"], x, [dyn(2)], [i64("k", np.zeros(0))], opset=14), "k has shape [0]")
    corpus("index", "onehot_depth_empty", one("OneHot", ["i", "d", "v"], [vi("i", [3], T.INT64)], [dyn(2)],
                                              [i64("d", np.zeros(0)), const("v", [0, 1], np.float32)]), "depth has shape [0]")
    corpus("index", "pad_value_empty", one("Pad", ["x", "p", "v"], x, [dyn(2)], [i64("p", [1, 1, 1, 1]), const("v", np.zeros(0), np.float32)]),
           "constant_value has shape [0]")
    corpus("index", "dropout_training_mode_empty", one("Dropout", ["x", "r", "t"], x, [dyn(2)],
                                                       [const("r", 0.5, np.float32), const("t", np.zeros(0), np.bool_)]),
           "training_mode has shape [0]")
    corpus("index", "maxunpool_output_shape_short", one("MaxUnpool", ["x", "i", "s"], [vi("x", [1, 1, 2, 2])], [dyn(4)],
                                                        [i64("i", np.zeros((1, 1, 2, 2))), i64("s", [4, 4])], kernel_shape=[2, 2], strides=[2, 2]),
           "output_shape [4,4] is not the unpooled shape [1,1,4,4] or larger")
    corpus("index", "stft_window_short", one("STFT", ["s", "f", "w", "l"], [vi("s", [1, 16, 1])], [dyn(4)],
                                             [i64("f", 2), const("w", np.ones(3), np.float32), i64("l", 8)], opset=17),
           "window has shape [3], expected [8]")
    corpus("index", "stft_window_scalar", one("STFT", ["s", "f", "w"], [vi("s", [1, 16, 1])], [dyn(4)],
                                              [i64("f", 2), const("w", 1.0, np.float32)], opset=17), "needs a 1-D window or a frame_length")
    # TfIdfVectorizer reads its pool at the positions ngram_counts gives
    tfidf = lambda **kw: one("TfIdfVectorizer", ["x"], [vi("x", [4], T.INT64)], [dyn(1)], opset=9, mode="TF", **(
        dict(min_gram_length=1, max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0], pool_int64s=[1]) | kw))
    corpus("index", "tfidf_counts_past_pool", tfidf(ngram_counts=[0, 100000], ngram_indexes=[0, 1]), "ngram_counts must rise from 0 to at most the pool's 1 entries; entry 1 is 100000")
    corpus("index", "tfidf_counts_negative", tfidf(ngram_counts=[-100000]), "ngram_counts must rise from 0 to at most the pool's 1 entries; entry 0 is -100000")
    corpus("index", "tfidf_counts_descending", tfidf(ngram_counts=[1, 0], pool_int64s=[1, 2, 3], max_gram_length=2),
           "ngram_counts must rise from 0 to at most the pool's 3 entries; entry 1 is 0")
    corpus("index", "tfidf_ngram_index_negative", tfidf(ngram_indexes=[-5]), "ngram_indexes holds -5")
    corpus("index", "tfidf_skip_negative", tfidf(max_skip_count=-(2**40)), "max_skip_count -1099511627776 must be")
    corpus("index", "tfidf_skip_huge", tfidf(ngram_counts=[0, 1], ngram_indexes=[0, 1], pool_int64s=[1, 2, 3], max_gram_length=2,
                                             max_skip_count=2**40), "ok")
    corpus("index", "onehot_out_of_range_is_zero_row", one("OneHot", ["i", "d", "v"], [], [vi("y", [3, 4])],
                                                           [i64("i", [0, 9, -9]), i64("d", 4), const("v", [0, 1], np.float32)]), "ok")
    corpus("index", "topk_runtime_k", one("TopK", ["x", "k"], x + [vi("k", [1], T.INT64)], [dyn(2), dyn(2, T.INT64, "i")], outs=("y", "i")),
           "input 'k' must be a compile-time constant")
    corpus("index", "gather_float_indices", one("Gather", ["x", "i"], x, [dyn(2)], [const("i", [0.0], np.float32)]),
           "input 1 of type float32 is not supported")


def zero_divisor_cases():
    """Attributes that divide or count: zero, negative, not dividing what
    they must divide."""
    x = [vi("x", [1, 3, 6, 6])]
    w = lambda oc, ic, k=3: const("w", np.ones((oc, ic, k, k)), np.float32)
    corpus("attr", "conv_group_not_dividing_channels", one("Conv", ["x", "w"], x, [dyn(4)], [w(2, 1)], group=2),
           "weight [2,1,3,3] does not match input [1,3,6,6] with group=2")
    corpus("attr", "conv_group_not_dividing_filters", one("Conv", ["x", "w"], x, [dyn(4)], [w(4, 1)], group=3),
           "weight [4,1,3,3] does not match input [1,3,6,6] with group=3")
    corpus("attr", "conv_kernel_larger_than_input", one("Conv", ["x", "w"], x, [dyn(4)], [w(2, 3, 9)]),
           "kernel larger than the padded input")
    corpus("attr", "conv_rank2_input", one("Conv", ["x", "w"], [vi("x", [3, 6])], [dyn(2)], [const("w", np.ones((2, 3)), np.float32)]),
           "the weight must have rank >= 3, got [2,3]")
    corpus("attr", "conv_auto_pad_bogus", one("Conv", ["x", "w"], x, [dyn(4)], [w(2, 3)], auto_pad="EVIL"), "unknown auto_pad 'EVIL'")
    corpus("attr", "convtranspose_group_not_dividing", one("ConvTranspose", ["x", "w"], x, [dyn(4)], [w(3, 2)], group=2),
           "weight [3,2,3,3] does not match input [1,3,6,6]")
    corpus("attr", "convtranspose_group_zero", one("ConvTranspose", ["x", "w"], x, [dyn(4)], [w(3, 2)], group=0), "attribute group = 0 must be in [1, 2^31)")
    corpus("attr", "convtranspose_strides_zero", one("ConvTranspose", ["x", "w"], x, [dyn(4)], [w(3, 2)], strides=[0, 1]),
           "attribute strides holds 0; each entry must be in [1, 2^31)")
    corpus("attr", "convtranspose_output_shape_huge", one("ConvTranspose", ["x", "w"], x, [dyn(4)], [w(3, 2)],
                                                          output_shape=[2**40, 2**40]),
           "output 0 has shape [1,2,1099511627776,1099511627776]: its element count overflows 64 bits")
    corpus("attr", "convtranspose_output_shape_negative", one("ConvTranspose", ["x", "w"], x, [dyn(2)], [w(3, 2)],
                                                              output_shape=[-4, 4]), "(ConvTranspose): empty output")
    corpus("attr", "maxpool_kernel_larger_than_input", one("MaxPool", ["x"], x, [dyn(4)], kernel_shape=[9, 9]),
           "kernel larger than the padded input")
    corpus("attr", "averagepool_no_kernel_shape", one("AveragePool", ["x"], x, [dyn(4)]), "Required attribute 'kernel_shape' is missing")
    corpus("attr", "lrn_size_zero", one("LRN", ["x"], x, [dyn(4)], size=0), "attribute size = 0 must be in [1, 2^31)")
    corpus("attr", "lrn_size_huge", one("LRN", ["x"], x, [dyn(4)], size=2**40), "attribute size = 1099511627776 must be in [1, 2^31)")
    corpus("attr", "roialign_output_huge", one("RoiAlign", ["x", "r", "b"], x, [dyn(4)],
                                               [const("r", [[0, 0, 2, 2]], np.float32), const("b", [0], np.int64)],
                                               output_height=2**40, output_width=2**40),
           "output 0 has shape [1,3,1099511627776,1099511627776]: its element count overflows 64 bits")
    roi = lambda rois, **kw: one("RoiAlign", ["x", "r", "b"], x, [dyn(4)], [const("r", rois, np.float32), const("b", [0] * len(rois), np.int64)],
                                 **({"output_height": 2, "output_width": 2} | kw))
    corpus("attr", "roialign_adaptive_grid_huge", roi([[0, 0, 1e15, 1e15]]), "samples per bin (give sampling_ratio)")
    corpus("attr", "roialign_roi_nan", roi([[0, 0, np.nan, 1]]), "a roi of size nan")
    corpus("attr", "roialign_output_height_zero", roi([[0, 0, 2, 2]], output_height=0), "output_height and output_width must be >= 1")
    corpus("attr", "resize_mode_bogus", one("Resize", ["x", "", "s"], x, [dyn(4)], [const("s", [1, 1, 2, 2], np.float32)], mode="evil"),
           "(Resize): mode 'evil'")
    corpus("attr", "resize_coordinate_mode_bogus", one("Resize", ["x", "", "s"], x, [dyn(4)], [const("s", [1, 1, 2, 2], np.float32)],
                                                       coordinate_transformation_mode="evil"), "coordinate_transformation_mode 'evil'")
    corpus("attr", "pad_mode_bogus", one("Pad", ["x", "p"], x, [dyn(4)], [const("p", [0] * 8, np.int64)], mode="evil"), "(Pad): mode 'evil'")
    corpus("attr", "cast_to_9999", one("Cast", ["x"], x, [dyn(4)], to=9999), "cast from float32 to undefined")
    corpus("attr", "cast_to_string", one("Cast", ["x"], x, [dyn(4, T.STRING)], to=T.STRING),
           "casts to or from string are out of scope (strings)")
    corpus("attr", "einsum_garbage", one("Einsum", ["x"], x, [dyn(1)], opset=12, equation="ab)(->z"), "is not in any input")
    corpus("attr", "einsum_label_mismatch", one("Einsum", ["x", "x"], x, [dyn(2)], opset=12, equation="abcd,abc->ab"),
           "operand 1 rank does not match 'abc'")
    corpus("attr", "mod_fmod0_float", one("Mod", ["x", "x"], x, [dyn(4)], fmod=0), "fmod=0 is not defined for floating-point inputs")
    corpus("attr", "gridsample_mode_bogus", one("GridSample", ["x", "g"], x, [dyn(4)], [const("g", np.zeros((1, 2, 2, 2)), np.float32)],
                                                opset=16, mode="evil"), "(GridSample): mode 'evil'")
    corpus("attr", "stft_frame_step_zero", one("STFT", ["s", "f", "", "l"], [vi("s", [1, 16, 1])], [dyn(4)],
                                               [const("f", 0, np.int64), const("l", 4, np.int64)], opset=17),
           "bad frame_step or frame_length")
    corpus("attr", "stft_frame_length_past_signal", one("STFT", ["s", "f", "", "l"], [vi("s", [1, 16, 1])], [dyn(4)],
                                                        [const("f", 1, np.int64), const("l", 99, np.int64)], opset=17),
           "bad frame_step or frame_length")
    corpus("attr", "hannwindow_huge", one("HannWindow", ["n"], [], [dyn(1)], [const("n", 2**40, np.int64)], opset=17),
           "output 0 has shape [1099511627776]: 1099511627776 elements, more than the 2147483647")
    corpus("attr", "hannwindow_negative", one("HannWindow", ["n"], [], [dyn(1)], [const("n", -8, np.int64)], opset=17), "(HannWindow): negative size")
    corpus("attr", "melweightmatrix_huge", one("MelWeightMatrix", ["a", "b", "c", "d", "e"], [], [dyn(2)],
                                               [const("a", 2**20, np.int64), const("b", 2**30, np.int64), const("c", 16000, np.int64),
                                                const("d", 20.0, np.float32), const("e", 8000.0, np.float32)], opset=17),
           "output 0 has shape [536870913,1048576]: 562949954469888 elements, more than the 2147483647")
    corpus("attr", "hannwindow_fold_cap", one("HannWindow", ["n"], [], [dyn(1)], [const("n", 2**30, np.int64)], opset=17),
           "a constant of 8589934592 bytes exceeds --max-folded-bytes 268435456")
    mel = lambda bins, dft, rate, lo=20.0, hi=8000.0: one("MelWeightMatrix", ["a", "b", "c", "d", "e"], [], [dyn(2)],
                                                          [const("a", bins, np.int64), const("b", dft, np.int64), const("c", rate, np.int64),
                                                           const("d", lo, np.float32), const("e", hi, np.float32)], opset=17)
    corpus("attr", "melweightmatrix_negative_bins", mel(-5, 16, 16000), "num_mel_bins -5, dft_length 16")
    corpus("attr", "melweightmatrix_rate_zero", mel(4, 16, 0), "sample_rate 0, edges")
    corpus("attr", "melweightmatrix_edge_nan", mel(4, 16, 16000, hi=float("nan")),
           "edges 20.000000 and nan: counts must be >= 0, the rate >= 1, the edges finite")
    corpus("attr", "melweightmatrix_edge_huge", mel(4, 16, 16000, hi=3e38), "a filter falls outside the spectrum")
    corpus("attr", "melweightmatrix_edge_empty", one("MelWeightMatrix", ["a", "b", "c", "d", "e"], [], [dyn(2)],
                                                     [const("a", 4, np.int64), const("b", 16, np.int64), const("c", 16000, np.int64),
                                                      const("d", np.zeros(0), np.float32), const("e", 8000.0, np.float32)], opset=17),
           "lower_edge_hertz has shape [0]; it must hold one element")
    corpus("attr", "einsum_two_ellipses", one("Einsum", ["x"], [vi("x", [2, 3])], [dyn(1)], opset=12, equation="......a->a"),
           "outside its one ellipsis")
    corpus("attr", "einsum_lone_dot", one("Einsum", ["x"], [vi("x", [2, 3])], [dyn(1)], opset=12, equation="a.->a"),
           "outside its one ellipsis")
    corpus("attr", "einsum_ellipsis_per_letter", one("Einsum", ["x"], [vi("x", [2, 3, 4])], [dyn(2)], opset=12, equation="...a...b...->ab"),
           "outside its one ellipsis")
    corpus("attr", "eyelike_k_huge", one("EyeLike", ["x"], [vi("x", [3, 3])], [dyn(2)], k=2**40), "ok")
    corpus("attr", "trilu_k_huge", one("Trilu", ["x", "k"], [vi("x", [3, 3])], [dyn(2)], [const("k", -(2**63), np.int64)], opset=14), "ok")
    corpus("attr", "shape_start_end_huge", one("Shape", ["x"], x, [dyn(1, T.INT64)], opset=15, start=-(2**62), end=2**62), "ok")
    corpus("attr", "celu_alpha_zero", one("Celu", ["x"], x, [vi("y", [1, 3, 6, 6])], opset=12, alpha=0.0), "ok")
    corpus("attr", "leakyrelu_alpha_nan", one("LeakyRelu", ["x"], x, [vi("y", [1, 3, 6, 6])], alpha=float("nan")), "ok")


def graph_cases():
    """Graph structure: cycles, dangling and duplicate names, missing or
    surplus inputs, nodes out of order, outputs that alias inputs."""
    x = [vi("x", [2])]
    corpus("graph", "cycle_three_nodes", model([node("Relu", ["c"], ["a"]), node("Neg", ["a"], ["b"]), node("Abs", ["b"], ["c"])],
                                               x, [vi("c", [2])]), "topologically sorted, however input 'c'")
    corpus("graph", "self_loop", model([node("Relu", ["a"], ["a"])], [], [vi("a", [2])]), "topologically sorted, however input 'a'")
    corpus("graph", "reverse_order", model([node("Neg", ["a"], ["y"]), node("Relu", ["x"], ["a"])], x, [vi("y", [2])]),
           "topologically sorted, however input 'a'")
    corpus("graph", "output_never_produced", model([node("Relu", ["x"], ["y"])], x, [vi("z", [2])]), "'z' is never produced")
    corpus("graph", "output_is_input", model([], x, [vi("x", [2])]), "ok")
    corpus("graph", "output_is_initializer", model([], [], [vi("w", [2])], [const("w", [1, 2], np.float32)]), "ok")
    corpus("graph", "output_listed_twice", model([node("Relu", ["x"], ["y"])], x, [vi("y", [2]), vi("y", [2])]), "ok")
    corpus("graph", "duplicate_input", model([node("Relu", ["x"], ["y"])], x + x, [vi("y", [2])]),
           "'x' has been used as graph input names multiple times")
    corpus("graph", "duplicate_initializer", model([node("Add", ["x", "w"], ["y"])], x, [vi("y", [2])],
                                                   [const("w", [1, 1], np.float32), const("w", [2, 2], np.float32)]),
           "the ONNX checker rejects the model: w initializer name is not unique")
    corpus("graph", "node_overwrites_input", model([node("Relu", ["x"], ["x"])], x, [vi("x", [2])]),
           "'x' has been used as output names multiple times")
    corpus("graph", "node_overwrites_initializer", model([node("Relu", ["x"], ["w"])], x, [vi("w", [2])], [const("w", [1, 1], np.float32)]),
           "'w' has been used as output names multiple times")
    corpus("graph", "initializer_overrides_input", model([node("Add", ["x", "w"], ["y"])], x + [vi("w", [2])], [vi("y", [2])],
                                                         [const("w", [1, 1], np.float32)]), "ok")
    corpus("graph", "empty_op_type", model([node("", ["x"], ["y"])], x, [vi("y", [2])]),
           "Field 'op_type' of 'node' is required to be non-empty")
    corpus("graph", "unknown_op", model([node("NoSuchOp", ["x"], ["y"])], x, [vi("y", [2])]), "No Op registered for NoSuchOp")
    corpus("graph", "missing_required_input", model([node("Add", ["x"], ["y"])], x, [vi("y", [2])]),
           "has input size 1 not in range [min=2, max=2]")
    corpus("graph", "surplus_input", model([node("Relu", ["x", "x"], ["y"])], x, [vi("y", [2])]),
           "has input size 2 not in range [min=1, max=1]")
    corpus("graph", "required_input_empty_name", model([node("Add", ["x", ""], ["y"])], x, [vi("y", [2])]),
           "input 1 is marked single but has an empty string")
    corpus("graph", "unknown_attribute", model([node("Relu", ["x"], ["y"], evil=1)], x, [vi("y", [2])]),
           "Unrecognized attribute: evil for operator Relu")
    corpus("graph", "attribute_wrong_type", model([node("Softmax", ["x"], ["y"], axis=1.5)], x, [vi("y", [2])]),
           "Mismatched attribute type in ' : axis'")
    a = model([node("Softmax", ["x"], ["y"], axis=0)], x, [vi("y", [2])])
    a.graph.node[0].attribute.extend([h.make_attribute("axis", 0)])
    corpus("graph", "attribute_twice", a, "Attribute 'axis' appeared multiple times")
    a = model([node("Softmax", ["x"], ["y"])], x, [vi("y", [2])])
    a.graph.node[0].attribute.add(name="axis")
    corpus("graph", "attribute_no_type", a, "Field 'type' of 'attr' is required but missing")
    corpus("graph", "unused_node", model([node("Relu", ["x"], ["y"]), node("Neg", ["x"], ["unused"])], x, [vi("y", [2])]), "ok")
    corpus("graph", "no_nodes_no_inputs", model([], [], [vi("y", [2])]), "graph output 'y' is never produced")
    corpus("graph", "subgraph_value_leaks_out", model([node("If", ["c"], ["y"], then_branch=_branch("t", "inner"), else_branch=_branch("e", "inner2")),
                                                       node("Relu", ["inner"], ["z"])], [vi("c", [], T.BOOL), vi("x", [2])], [vi("z", [2])]),
           "input 'inner' of node")
    corpus("graph", "subgraph_uses_later_value", model([node("If", ["c"], ["y"], then_branch=_branch("t", "o", src="later"),
                                                             else_branch=_branch("e", "o")),
                                                        node("Relu", ["x"], ["later"])], [vi("c", [], T.BOOL), vi("x", [2])], [vi("y", [2])]),
           "input 'later' of node")
    corpus("graph", "subgraph_undefined_name", model([node("If", ["c"], ["y"], then_branch=_branch("t", "o", src="nowhere"),
                                                            else_branch=_branch("e", "o"))], [vi("c", [], T.BOOL), vi("x", [2])], [vi("y", [2])]),
           "input 'nowhere' of node")
    corpus("graph", "graph_input_not_tensor", model([node("Relu", ["x"], ["y"])], [h.make_tensor_sequence_value_info("x", T.FLOAT, [2])],
                                                    [vi("y", [2])]), "graph input 'x' is not a tensor: out of scope (sequences, maps, optionals)")
    corpus("graph", "input_without_shape", model([node("Relu", ["x"], ["y"])], [vi("x", None)], [vi("y", [2])]),
           "Field 'shape' of 'type' is required but missing")
    corpus("graph", "input_dynamic_dim", model([node("Relu", ["x"], ["y"])], [vi("x", ["batch", 2])], [dyn(2)]),
           "dynamic dimension 'batch'; pass --input-shape x=")


def _branch(name, out, src="x"):
    return h.make_graph([node("Relu", [src], [out])], name, [], [vi(out, [2])])


def name_cases():
    """Names of any bytes: the header, JSON and identifiers stay valid.
    Names that are invalid UTF-8 are written into the serialized bytes
    (onnx's Python API only takes str)."""
    def relu_named(i, o, nodename="n"):
        return model([node("Relu", [i], [o], name=nodename)], [vi(i, [2])], [vi(o, [2])])
    def patch(m, placeholder, raw):
        b = m.SerializeToString()
        assert len(placeholder) == len(raw) and placeholder.encode() in b
        return b.replace(placeholder.encode(), raw)
    corpus("names", "input_invalid_utf8", patch(relu_named("QQQQ", "y"), "QQQQ", b"\xff\xfe\xc0\x80"), "ok")
    corpus("names", "output_invalid_utf8", patch(relu_named("x", "QQQQ"), "QQQQ", b"a\xed\xa0\x80"[:4]), "ok")
    corpus("names", "output_lone_continuation", patch(relu_named("x", "QQQ"), "QQQ", b"\x80\x80\x80"), "ok")
    corpus("names", "node_name_invalid_utf8", patch(relu_named("x", "y", "QQQQ"), "QQQQ", b"\xf8\x88\x80\x80"), "ok")
    corpus("names", "output_nul_byte", relu_named("x", "a\x00b"), "ok")
    corpus("names", "input_all_control_bytes", relu_named("".join(map(chr, range(1, 32))), "y"), "ok")
    corpus("names", "format_string", relu_named("%s%s%n%x%p", "%n%n%n"), "ok")
    corpus("names", "shell_metacharacters", relu_named("$(touch /tmp/pwned);`id`", "'|&;<>"), "ok")
    corpus("names", "path_like", relu_named("../../../etc/passwd", "/dev/null"), "ok")
    corpus("names", "c_keywords", relu_named("int", "return"), "ok")
    corpus("names", "leading_digit", relu_named("0x", "9"), "ok")
    corpus("names", "unicode_bidi", relu_named("a\u202eb", "\ufeff\u200b"), "ok")
    corpus("names", "node_name_injection", relu_named("x", "y", "*/ #error X /* \n\"\\"), "ok")
    corpus("names", "long_1mb", relu_named("i" * (1 << 20), "y"), "ok")
    corpus("names", "node_name_long_1mb", relu_named("x", "y", "n" * (1 << 20)), "ok")
    # distinct names that sanitize to the same identifier
    corpus("names", "collide_after_sanitizing", model([node("Add", ["a.b", "a-b"], ["a b"]), node("Neg", ["a b"], ["a_b"])],
                                                      [vi("a.b", [2]), vi("a-b", [2])], [vi("a b", [2]), vi("a_b", [2])]), "ok")
    corpus("names", "collide_with_generated_names", model([node("Relu", ["x"], ["Relu_0"]), node("Relu", ["Relu_0"], ["y"], name="Relu_0")],
                                                          [vi("x", [2])], [vi("Relu_0", [2]), vi("y", [2])]), "ok")
    corpus("names", "node_names_duplicated", model([node("Relu", ["x"], ["a"], name="n"), node("Neg", ["a"], ["y"], name="n")],
                                                   [vi("x", [2])], [vi("y", [2])]), "ok")
    corpus("names", "initializer_hostile_name", model([node("Add", ["x", "w\"\n#error"], ["y"])], [vi("x", [2])], [vi("y", [2])],
                                                      [const("w\"\n#error", [1, 2], np.float32)]), "ok")
    m = relu_named("x", "y")
    m.producer_name, m.producer_version, m.doc_string = "*/\n#error P", "\"\\", "x" * 100000
    m.graph.doc_string = "\x00\x01"
    m.metadata_props.add(key="k\"\n", value="v*/")
    corpus("names", "metadata_injection", m, "ok")
    # names in error messages: a hostile node name in a failing model
    corpus("names", "error_message_node_name", model([node("Softmax", ["x"], ["y"], name="\x1b[2J\x1b[31mEVIL", axis=5)],
                                                     [vi("x", [2])], [vi("y", [2])]), "(Softmax): axis 5 out of range for rank 1")


def dtype_cases():
    """Element types an op does not take, operands that disagree, and types
    out of scope (strings, complex, unknown numbers)."""
    def un(op, t, opset=13, **kw):
        return one(op, ["x"], [vi("x", [2, 3], t)], [dyn(2, t)], opset=opset, **kw)
    for op, t in (("Sigmoid", T.INT32), ("Exp", T.INT64), ("Softmax", T.INT32), ("Sqrt", T.UINT8), ("Log", T.BOOL),
                  ("Relu", T.BOOL), ("Abs", T.BOOL), ("LRN", T.INT64), ("Floor", T.INT16), ("Erf", T.INT8)):
        name = T.DataType.Name(t).lower()
        corpus("dtype", f"{op.lower()}_{name}", un(op, t, size=1) if op == "LRN" else un(op, t),
               f"({op}): input 0 of type {name} is not supported")
    bi = lambda op, ta, tb, out=T.FLOAT, **kw: one(op, ["a", "b"], [vi("a", [2, 3], ta), vi("b", [2, 3], tb)], [dyn(2, out)], **kw)
    corpus("dtype", "matmul_bool", one("MatMul", ["a", "b"], [vi("a", [2, 3], T.BOOL), vi("b", [3, 2], T.BOOL)], [dyn(2, T.BOOL)]),
           "input 0 of type bool is not supported")
    corpus("dtype", "concat_float_int64", one("Concat", ["a", "b"], [vi("a", [2, 3]), vi("b", [2, 3], T.INT64)], [dyn(2)], axis=0),
           "inputs differ in rank or type")
    corpus("dtype", "sub_float_float16", bi("Sub", T.FLOAT, T.FLOAT16), "input types differ (float32 vs float16)")
    corpus("dtype", "where_float_condition", one("Where", ["c", "a", "a"], [vi("c", [2, 3]), vi("a", [2, 3])], [dyn(2)]),
           "input 0 of type float32 is not supported")
    corpus("dtype", "where_branches_differ", one("Where", ["c", "a", "b"], [vi("c", [2, 3], T.BOOL), vi("a", [2, 3]), vi("b", [2, 3], T.INT32)],
                                                 [dyn(2)]), "x and y types differ")
    corpus("dtype", "less_float_int64", bi("Less", T.FLOAT, T.INT64, out=T.BOOL), "input types differ (float32 vs int64)")
    corpus("dtype", "and_float", bi("And", T.FLOAT, T.FLOAT, out=T.BOOL), "input 0 of type float32 is not supported")
    corpus("dtype", "bitshift_float", bi("BitShift", T.FLOAT, T.FLOAT, direction="LEFT"), "input 0 of type float32 is not supported")
    corpus("dtype", "pow_float_int64_valid", one("Pow", ["a", "b"], [vi("a", [2, 3]), vi("b", [2, 3], T.INT64)], [vi("y", [2, 3])]), "ok")
    corpus("dtype", "reshape_shape_float", one("Reshape", ["x", "s"], [vi("x", [2, 3])], [dyn(2)], [const("s", [3, 2], np.float32)]),
           "shape must be a 1-D int64 tensor, not float32[2]")
    corpus("dtype", "expand_shape_float", one("Expand", ["x", "s"], [vi("x", [2, 3])], [dyn(2)], [const("s", [2, 3], np.float32)]),
           "input 's' must be int64 or int32")
    corpus("dtype", "clip_min_other_type", one("Clip", ["x", "lo"], [vi("x", [2, 3])], [dyn(2)], [const("lo", 0, np.int64)]),
           "min/max must be scalars of the input's type")
    for t in (T.COMPLEX64, T.COMPLEX128, 17, 99):  # 17: float8e4m3fn in newer onnx; 99: no type
        corpus("dtype", f"input_type_{t}", one("Identity", ["x"], [vi("x", [2], t)], [vi("y", [2], t)]),
               "graph input 'x' has unsupported type")
    corpus("dtype", "input_type_undefined", one("Identity", ["x"], [vi("x", [2], 0)], [vi("y", [2], 0)]),
           "graph input 'x' has unsupported type undefined")
    corpus("dtype", "bfloat16_relu", one("Relu", ["x"], [vi("x", [2], T.BFLOAT16)], [vi("y", [2], T.BFLOAT16)], opset=14), "ok")
    corpus("dtype", "float16_softmax", one("Softmax", ["x"], [vi("x", [2], T.FLOAT16)], [vi("y", [2], T.FLOAT16)]),
           "input 0 of type float16 is not supported")
    corpus("dtype", "output_declared_int64", one("Relu", ["x"], [vi("x", [2])], [vi("y", [2], T.INT64)]),
           "value 'y' is declared int64[2] in the model, but its producer computes float32[2]")
    corpus("dtype", "output_declared_wrong_shape", one("Relu", ["x"], [vi("x", [2])], [vi("y", [5, 5])]),
           "value 'y' is declared float32[5,5] in the model, but its producer computes float32[2]")
    corpus("dtype", "cast_to_complex", one("Cast", ["x"], [vi("x", [2])], [vi("y", [2], T.COMPLEX64)], to=T.COMPLEX64),
           "cast from float32 to undefined")
    corpus("dtype", "string_constant", model([node("Constant", [], ["s"], value=h.make_tensor("s", T.STRING, [1], [b"x"])),
                                              node("Identity", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])]),
           "tensor 's' holds strings: out of scope (strings)")


def _loop_body(extra_nodes=(), extra_inits=()):
    return h.make_graph([node("Identity", ["c"], ["co"]), node("Add", ["s", "s"], ["so"])] + list(extra_nodes), "b",
                        [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("s", [2])], [vi("co", [], T.BOOL), vi("so", [2])], list(extra_inits))


def control_flow_cases():
    """If, Loop and Scan: malformed bodies and branches, conditions and trip
    counts of the wrong shape, unbounded loops, nesting, and unrolls whose
    product is large though each factor is small."""
    x = [vi("x", [2])]
    m2 = [const("m", 2, np.int64)]
    loop = lambda body, ins=("m", "", "x"), inits=m2, outs=("y",), **kw: model([node("Loop", list(ins), list(outs), body=body, **kw)], x,
                                                                             [vi(o, [2]) for o in outs], inits)
    empty = h.make_graph([], "b", [], [])
    corpus("nesting", "loop_body_no_inputs", loop(empty), "needs a body with as many inputs and at least 2 outputs; it has 0 and 0")
    corpus("nesting", "loop_body_one_input", loop(h.make_graph([], "b", [vi("i", [], T.INT64)], [vi("i", [], T.INT64)])),
           "a Loop with 3 inputs needs a body with as many inputs and at least 2 outputs; it has 1 and 1")
    corpus("nesting", "loop_body_missing_outputs", loop(h.make_graph([node("Identity", ["c"], ["co"])], "b",
                                                                     [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("s", [2])],
                                                                     [vi("co", [], T.BOOL)])),
           "a Loop with 3 inputs needs a body with as many inputs and at least 2 outputs; it has 3 and 1")
    corpus("nesting", "loop_trip_count_empty", loop(_loop_body(), inits=[const("m", np.zeros(0), np.int64)]),
           "the trip count has shape [0]; it must hold one element")
    corpus("nesting", "loop_trip_count_vector", loop(_loop_body(), inits=[const("m", [3, 4], np.int64)]),
           "the trip count has shape [2]; it must hold one element")
    corpus("nesting", "loop_condition_empty", loop(_loop_body(), ins=("m", "c", "x"), inits=m2 + [const("c", np.zeros(0), np.bool_)]),
           "the condition has shape [0]; it must hold one element")
    corpus("nesting", "loop_trip_count_int32", loop(_loop_body(), inits=[const("m", 2, np.int32)]),
           "the trip count is int32; it must be int64")
    corpus("nesting", "loop_condition_int64", loop(_loop_body(), ins=("m", "c", "x"), inits=m2 + [const("c", 1, np.int64)]),
           "the condition is int64; it must be bool")
    corpus("nesting", "loop_runtime_trip_count", model([node("Loop", ["m", "", "x"], ["y"], body=_loop_body())], x + [vi("m", [], T.INT64)],
                                                       [vi("y", [2])]), "input 'm' must be a compile-time constant")
    corpus("nesting", "loop_while_true", model([node("Loop", ["", "c", "x"], ["y"], body=_loop_body())], x, [vi("y", [2])],
                                               [const("c", True, np.bool_)]), "a Loop without a trip count (a while loop)")
    body = h.make_graph([node("ReduceSum", ["s"], ["r"], keepdims=0), node("Less", ["r", "lim"], ["co"]), node("Add", ["s", "s"], ["so"])], "b",
                        [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("s", [2])], [vi("co", [], T.BOOL), vi("so", [2])],
                        [const("lim", 100.0, np.float32)])
    corpus("nesting", "loop_data_dependent_exit", loop(body), "computes its own loop condition")
    corpus("nesting", "loop_zero_trips", loop(_loop_body(), inits=[const("m", 0, np.int64)]), "ok")
    corpus("nesting", "loop_false_condition", loop(_loop_body(), ins=("m", "c", "x"), inits=m2 + [const("c", False, np.bool_)]), "ok")
    corpus("nesting", "loop_trips_max_int64", loop(_loop_body(), inits=[const("m", 2**63 - 1, np.int64)]),
           "unrolling 9223372036854775807 iterations")
    # nested unrolls: 1000 x 1000 x 1000 iterations of tiny bodies
    inner = None
    for lv in range(3):  # names differ per level: an inner body sees the outer ones
        step = node("Loop", [f"k{lv}", "", f"s{lv}"], [f"so{lv}"], body=inner) if inner else node("Add", [f"s{lv}", f"s{lv}"], [f"so{lv}"])
        inner = h.make_graph([node("Identity", [f"c{lv}"], [f"co{lv}"]), step], f"l{lv}",
                             [vi(f"i{lv}", [], T.INT64), vi(f"c{lv}", [], T.BOOL), vi(f"s{lv}", [2])],
                             [vi(f"co{lv}", [], T.BOOL), vi(f"so{lv}", [2])], [const(f"k{lv}", 1000, np.int64)] if lv else [])
    corpus("unroll", "loop_nested_1000_cubed", loop(inner, inits=[const("m", 1000, np.int64)]),
           "exceeds the limit of 200000 added nodes (--max-expanded-nodes)")
    scan_body = h.make_graph([node("Add", ["s", "e"], ["so"]), node("Identity", ["so"], ["o"])], "sb",
                             [vi("s", [2]), vi("e", [2])], [vi("so", [2]), vi("o", [2])])
    scan = lambda body, n_in=1, shape=(4, 2), **kw: model([node("Scan", ["x0", "seq"], ["y", "ys"], body=body, num_scan_inputs=n_in, **kw)],
                                                          [vi("x0", [2]), vi("seq", list(shape))], [vi("y", [2]), dyn(2, name="ys")])
    corpus("unroll", "scan_long_sequence", scan(scan_body, shape=(10**6, 2)),
           "unrolling 1000000 iterations of a 2-node body exceeds the limit")
    corpus("nesting", "scan_num_inputs_zero", scan(scan_body, n_in=0), "num_scan_inputs 0 does not fit its 2 inputs")
    corpus("nesting", "scan_num_inputs_too_many", scan(scan_body, n_in=5), "num_scan_inputs 5 does not fit its 2 inputs")
    corpus("nesting", "scan_input_axis_out_of_range", scan(scan_body, scan_input_axes=[2]), "(Scan): axis 2 out of range for rank 2")
    corpus("nesting", "scan_output_axis_out_of_range", scan(scan_body, scan_output_axes=[7]), "axis 7 out of range for rank 2")
    corpus("nesting", "scan_axes_wrong_length", scan(scan_body, scan_input_axes=[0, 0, 0]), "scan_input_axes has 3 entries")
    corpus("nesting", "scan_body_signature", scan(h.make_graph([], "sb", [vi("s", [2])], [vi("s", [2])])),
           "the body takes 1 inputs and gives 1 outputs for 1 states and 1 scan inputs")
    corpus("nesting", "scan_v8_scalar_state", model([node("Scan", ["", "x0", "seq"], ["y", "ys"], body=scan_body, num_scan_inputs=1)],
                                                    [vi("x0", []), vi("seq", [1, 4, 2])], [dyn(0), dyn(3, name="ys")], opset=8),
           "input 1 has no batch axis")
    corpus("nesting", "scan_scalar_sequence", model([node("Scan", ["x0", "seq"], ["y", "ys"], body=h.make_graph(
        [node("Add", ["s", "e"], ["so"]), node("Identity", ["so"], ["o"])], "sb", [vi("s", []), vi("e", [])], [vi("so", []), vi("o", [])]),
        num_scan_inputs=1)], [vi("x0", []), vi("seq", [])], [vi("y", []), dyn(1, name="ys")]), "axis 0 out of range for rank 0")
    corpus("nesting", "scan_empty_sequence", scan(scan_body, shape=(0, 2)), "empty scan")
    two = lambda k: h.make_graph([node("Relu", ["x"], [f"o{i}"]) for i in range(k)], "b", [], [vi(f"o{i}", [2]) for i in range(k)])
    corpus("nesting", "if_branch_fewer_outputs", model([node("If", ["c"], ["y", "z"], then_branch=two(1), else_branch=two(2))],
                                                       [vi("c", [], T.BOOL)] + x, [vi("y", [2]), vi("z", [2])]),
           "then_branch has 1 outputs, the node 2")
    corpus("nesting", "if_const_branch_fewer_outputs", model([node("If", ["c"], ["y", "z"], then_branch=two(1), else_branch=two(2))], x,
                                                             [vi("y", [2]), vi("z", [2])], [const("c", True, np.bool_)]),
           "then_branch has 1 outputs, the node 2")
    corpus("nesting", "if_condition_empty", model([node("If", ["c"], ["y"], then_branch=two(1), else_branch=two(1))], x, [vi("y", [2])],
                                                  [const("c", np.zeros(0), np.bool_)]),
           "the condition has shape [0]; it must hold one element")
    corpus("nesting", "if_condition_float", model([node("If", ["c"], ["y"], then_branch=two(1), else_branch=two(1))], x + [vi("c", [])],
                                                  [vi("y", [2])]), "'If_0' (If): the condition is float32; it must be bool")
    # Found by fuzz_import: a uint64 condition at run time passed to the
    # branches' guards (an internal error after lowering) when a branch
    # held an If of its own.
    inner_if = h.make_graph([node("If", ["d"], ["o0"], then_branch=two(1), else_branch=two(1))], "ot", [], [vi("o0", [2])])
    corpus("nesting", "if_condition_uint64_nested", model([node("If", ["c"], ["y"], then_branch=inner_if, else_branch=two(1))],
                                                          [vi("c", [], T.UINT64), vi("d", [], T.BOOL)] + x, [vi("y", [2])]),
           "'If_0' (If): the condition is uint64; it must be bool")
    corpus("nesting", "if_missing_else", model([node("If", ["c"], ["y"], then_branch=two(1))], [vi("c", [], T.BOOL)] + x, [vi("y", [2])]),
           "Required attribute 'else_branch' is missing")
    corpus("nesting", "if_branch_takes_inputs", model([node("If", ["c"], ["y"], then_branch=h.make_graph([node("Relu", ["q"], ["o0"])], "b",
                                                                                                          [vi("q", [2])], [vi("o0", [2])]),
                                                            else_branch=two(1))], [vi("c", [], T.BOOL)] + x, [vi("y", [2])]),
           "subgraph 'b' takes 1 inputs, got 0")
    corpus("nesting", "if_branch_shapes_differ", model([node("If", ["c"], ["y"], then_branch=two(1),
                                                             else_branch=h.make_graph([node("Concat", ["x", "x"], ["o0"], axis=0)], "b", [],
                                                                                      [vi("o0", [4])]))], [vi("c", [], T.BOOL)] + x, [dyn(1)]),
           "input 'c' must be a compile-time constant")
    # Runtime conditions: a branch that cannot be compiled for the input's
    # shape becomes a run-time error; when neither can, the If is refused
    # (naming the input to bind); the compiler's own branch-error op and its
    # marks are not a file's to use.
    bad = lambda name: h.make_graph([node("Reshape", ["x", "r"], ["o0"])], name, [], [vi("o0", [2])],
                                    [const("r", [-1, 3], np.int64)])
    corpus("nesting", "if_one_branch_uncompilable", model([node("If", ["c"], ["y"], then_branch=two(1), else_branch=bad("e"))],
                                                          [vi("c", [], T.BOOL)] + x, [vi("y", [2])]), "ok")
    corpus("nesting", "if_no_branch_compilable", model([node("If", ["c"], ["y"], then_branch=bad("t"), else_branch=bad("e"))],
                                                       [vi("c", [], T.BOOL)] + x, [vi("y", [2])]),
           "neither branch of the If whose condition is 'c' can be compiled for the model's input shapes")
    corpus("nesting", "if_nested_no_branch_compilable",
           model([node("If", ["c"], ["y"], then_branch=h.make_graph([node("If", ["d"], ["o0"], then_branch=bad("t"), else_branch=bad("e"))],
                                                                    "ot", [], [vi("o0", [2])]),
                       else_branch=two(1))], [vi("c", [], T.BOOL), vi("d", [], T.BOOL)] + x, [vi("y", [2])]), "ok")
    # Found by fuzz_import: a branch returning the If's own output (then
    # the other branch failed, and the merge read a value never computed).
    own = h.make_graph([], "t", [], [vi("y", [2])])
    corpus("nesting", "if_branch_returns_own_output", model([node("If", ["c"], ["y"], then_branch=own, else_branch=bad("e"))],
                                                            [vi("c", [], T.BOOL)] + x, [vi("y", [2])]),
           "then_branch returns 'y', which is not computed before the node (a cycle)")
    corpus("nesting", "if_const_branch_returns_own_output",
           model([node("If", ["k"], ["y"], then_branch=own, else_branch=two(1))], x, [vi("y", [2])], [const("k", True, np.bool_)]),
           "input 'y' is read before it is computed (a cycle)")
    corpus("nesting", "if_branch_needs_bind",
           model([node("If", ["c"], ["y"], then_branch=two(1),
                       else_branch=h.make_graph([node("Reshape", ["x", "s"], ["o0"])], "e", [], [vi("o0", [2])]))],
                 [vi("c", [], T.BOOL), vi("s", [1], T.INT64)] + x, [vi("y", [2])]),
           "input 's' must be a compile-time constant because it fixes shapes or axes; freeze it with --bind s=...")
    corpus("nesting", "branch_error_in_model", model([node("BranchError", ["c"], ["y"], domain="tinyrt", message="x")],
                                                     [vi("c", [], T.BOOL)], [vi("y", [], T.BOOL)], domains=[("tinyrt", 1)]),
           "BranchError is the compiler's own step")
    corpus("nesting", "branch_error_mark_in_model", model([node("BranchError", ["c"], ["y"], domain="tinyrt", message="x", _branch=0)],
                                                          [vi("c", [], T.BOOL)], [vi("y", [], T.BOOL)], domains=[("tinyrt", 1)]),
           "attribute '_branch' is not supported")
    corpus("nesting", "if_merge_mark_in_model", model([node("Where", ["c", "x", "x"], ["y"], _if_condition=0)],
                                                      [vi("c", [], T.BOOL)] + x, [vi("y", [2])]),
           "Unrecognized attribute: _if_condition for operator Where")
    # deep but legal: 30 nested Ifs on constant conditions compile to one Relu
    g = two(1)
    for d in range(30):
        g = h.make_graph([node("If", ["k"], ["o0"], then_branch=g, else_branch=two(1))], f"d{d}", [], [vi("o0", [2])],
                         [const("k", True, np.bool_)])
    corpus("nesting", "if30_constant", model([node("If", ["k"], ["y"], then_branch=g, else_branch=two(1))], x, [vi("y", [2])],
                                             [const("k", True, np.bool_)]), "ok")
    # a Loop in an If in a Scan body
    lb = h.make_graph([node("Identity", ["c"], ["co"]), node("Add", ["t", "t"], ["to"])], "lb",
                      [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("t", [2])], [vi("co", [], T.BOOL), vi("to", [2])])
    ib = h.make_graph([node("Loop", ["three", "", "e"], ["lo"], body=lb)], "ib", [], [vi("lo", [2])], [const("three", 3, np.int64)])
    sb = h.make_graph([node("If", ["k"], ["io"], then_branch=ib, else_branch=ib), node("Add", ["s", "io"], ["so"]), node("Identity", ["so"], ["o"])],
                      "sb", [vi("s", [2]), vi("e", [2])], [vi("so", [2]), vi("o", [2])], [const("k", True, np.bool_)])
    corpus("nesting", "loop_in_if_in_scan", scan(sb), "ok")


def opset_cases():
    """Opset imports: missing, negative, huge, future; unknown and
    non-standard domains; ops older or newer than the imported opset; IR
    versions."""
    relu_m = lambda **kw: model([node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], **kw)
    m = relu_m()
    del m.opset_import[:]
    corpus("opset", "missing_import", m, "must specify opset_import for ONNX")
    m = relu_m()
    m.opset_import[0].version = -1
    corpus("opset", "negative", m, "the model imports opset -1 of domain ai.onnx")
    m = relu_m()
    m.opset_import[0].version = 2**62
    corpus("opset", "int64_huge", m, f"the model imports opset {2**62} of domain ai.onnx")
    m = relu_m()
    m.opset_import[0].domain = "ai.onnx"
    m.opset_import[0].version = 18
    corpus("opset", "ai_onnx_spelled_out_18", m, "opset 18 of domain ai.onnx")
    corpus("opset", "ml_4", relu_m(domains=[("ai.onnx.ml", 4)]), "opset 4 of domain ai.onnx.ml")
    corpus("opset", "training_domain_future", relu_m(domains=[("ai.onnx.preview.training", 99)]),
           "opset 99 of domain ai.onnx.preview.training")
    corpus("opset", "node_domain_not_imported", model([node("Relu", ["x"], ["y"], domain="com.microsoft")], [vi("x", [2])], [vi("y", [2])]),
           "No opset import for domain 'com.microsoft'")
    corpus("opset", "contrib_op", model([node("FusedConv", ["x"], ["y"], domain="com.microsoft")], [vi("x", [2])], [vi("y", [2])],
                                        domains=[("com.microsoft", 1)]), "domain 'com.microsoft'")
    corpus("opset", "ml_domain_op", model([node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_int64s=[1], values_int64s=[2])],
                                          [vi("x", [2], T.INT64)], [vi("y", [2], T.INT64)], domains=[("ai.onnx.ml", 2)]),
           "domain 'ai.onnx.ml' is not supported")
    corpus("opset", "op_newer_than_opset", model([node("Celu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=7),
           "No Op registered for Celu with domain_version of 7")
    corpus("opset", "op_removed_in_opset", model([node("Upsample", ["x", "s"], ["y"])], [vi("x", [1, 1, 2, 2])], [dyn(4)],
                                                 [const("s", [1, 1, 2, 2], np.float32)], opset=13),
           "Op registered for Upsample is deprecated in domain_version of 13")
    corpus("opset", "opset1_relu", relu_m(opset=1), "opset 1 semantics of Relu are not supported (need opset >= 6)")
    corpus("opset", "ir_version_zero", relu_m(ir=0), "does not have an ir_version set properly")
    corpus("opset", "ir_version_future", relu_m(ir=99), "ir_version is higher than the checker's")
    corpus("opset", "ir3_opset17", relu_m(ir=3, opset=17), "ok")
    twice = relu_m()
    twice.opset_import.append(h.make_opsetid("", 11))
    corpus("opset", "domain_imported_twice", twice, "the model imports domain ai.onnx twice")
    corpus("opset", "node_domain_spelled_ai_onnx", model([node("Relu", ["x"], ["y"], domain="ai.onnx")], [vi("x", [2])], [vi("y", [2])]),
           "No opset import for domain 'ai.onnx'")


def quantization_cases():
    """QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul,
    ConvInteger and MatMulInteger: scales and zero points of the wrong
    length, rank or type, axes out of range, zero points that disagree with
    the data type. Kernels index scales and zero points without a bound: a
    short one was read past its end."""
    x = [vi("x", [2, 3])]
    f32 = lambda n, v: const(n, v, np.float32)
    u8 = lambda n, v: const(n, v, np.uint8)
    i8 = lambda n, v: const(n, v, np.int8)
    q = lambda ins, inits, **kw: one("QuantizeLinear", ins, x, [dyn(2, T.UINT8)], inits, **kw)
    corpus("quant", "quantize_scale_length", q(["x", "s", "z"], [f32("s", [1, 1]), u8("z", [0, 0])], axis=1),
           "y_scale has shape [2]; expected one element or [3]")
    corpus("quant", "quantize_scale_too_long", q(["x", "s"], [f32("s", np.ones(9))], axis=1),
           "y_scale has shape [9]; expected one element or [3]")
    corpus("quant", "quantize_axis_out_of_range", q(["x", "s"], [f32("s", [1, 1, 1])], axis=2), "axis 2 out of range for rank 2")
    corpus("quant", "quantize_scale_rank2", q(["x", "s"], [f32("s", np.ones((2, 3)))], axis=1),
           "y_scale has shape [2,3]; expected one element or [3]")
    corpus("quant", "quantize_zero_point_length", q(["x", "s", "z"], [f32("s", [1, 1, 1]), u8("z", [0, 0])], axis=1),
           "y_zero_point has shape [2]; expected one element or [3]")
    corpus("quant", "quantize_zero_point_int32", q(["x", "s", "z"], [f32("s", 1), const("z", 0, np.int32)]),
           "input 2 of type int32 is not supported")
    corpus("quant", "quantize_scale_int", q(["x", "s"], [const("s", 2, np.int64)]), "y_scale has type int64, expected float32")
    corpus("quant", "quantize_scalar_per_axis", one("QuantizeLinear", ["x", "s"], [vi("x", [])], [dyn(0, T.UINT8)], [f32("s", [1, 1])]),
           "axis 1 out of range for rank 0")
    corpus("quant", "quantize_per_tensor_valid", one("QuantizeLinear", ["x", "s", "z"], x, [vi("y", [2, 3], T.INT8)],
                                                      [f32("s", 0.5), i8("z", 3)]), "ok")
    dq = lambda ins, inits, t=T.UINT8, **kw: one("DequantizeLinear", ins, [vi("x", [2, 3], t)], [dyn(2)], inits, **kw)
    corpus("quant", "dequantize_scale_length", dq(["x", "s"], [f32("s", [1, 1])], axis=1),
           "x_scale has shape [2]; expected one element or [3]")
    corpus("quant", "dequantize_zero_point_type", dq(["x", "s", "z"], [f32("s", 1), i8("z", 0)]),
           "x_zero_point has type int8, expected uint8")
    corpus("quant", "dequantize_axis_negative_beyond", dq(["x", "s"], [f32("s", [1, 1])], axis=-3), "axis -3 out of range for rank 2")
    corpus("quant", "dequantize_float_input", dq(["x", "s"], [f32("s", 1)], t=T.FLOAT), "input 0 of type float32 is not supported")
    corpus("quant", "dequantize_scale_empty", dq(["x", "s"], [f32("s", np.zeros(0))]), "x_scale has shape [0]; expected one element or [3]")
    # QLinearConv of a [1,2,4,4] uint8 input by 3 int8 filters; one parameter replaced per case
    xq = [vi("x", [1, 2, 4, 4], T.UINT8)]
    qc = [f32("xs", 0.1), u8("xz", 128), const("w", np.ones((3, 2, 3, 3)), np.int8), f32("ws", [0.1] * 3), i8("wz", [0] * 3),
          f32("ys", 0.2), u8("yz", 128)]
    for name, repl, expect in (
            ("w_scale_length", f32("ws", [0.1] * 2), "w_scale has shape [2]; expected one element or [3]"),
            ("w_zero_point_length", i8("wz", [0] * 5), "w_zero_point has shape [5]; expected one element or [3]"),
            ("x_zero_point_vector", u8("xz", [128, 128]), "x_zero_point has shape [2]; expected one element"),
            ("y_scale_vector", f32("ys", [0.2] * 3), "y_scale has shape [3]; expected one element"),
            ("bias_length", const("b", [1, 2], np.int32), "B must be int32 of shape [3], got int32 [2]"),
            ("bias_float", const("b", [1, 2, 3], np.float32), "B must be int32 of shape [3], got float32 [3]"),
            ("y_zero_point_int32", const("yz", 0, np.int32), "input 7 of type int32 is not supported"),
            ("w_zero_point_uint8", u8("wz", [0] * 3), "inputs 3 (w) and 5 (w_zero_point) must have the same type (T2), not int8 and uint8")):
        inits = [repl if t.name == repl.name else t for t in qc] + ([repl] if repl.name == "b" else [])
        ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"] + (["b"] if repl.name == "b" else [])
        corpus("quant", f"qlinearconv_{name}", one("QLinearConv", ins, xq, [dyn(4, T.UINT8)], inits), expect)
    # QLinearMatMul of a [2,4] uint8 matrix by a [4,3] int8 one
    A = [vi("a", [2, 4], T.UINT8)]
    qm = [f32("as", 0.1), u8("az", 0), const("b", np.ones((4, 3)), np.int8), f32("bs", 0.1), i8("bz", 0), f32("ys", 0.1), u8("yz", 0)]
    for name, repl, expect in (
            ("a_scale_vector", f32("as", [0.1, 0.1]), "a_scale has shape [2]; expected one element"),
            ("b_scale_length", f32("bs", [0.1] * 2), "b_scale has shape [2]; expected one element or [3]"),
            ("b_zero_point_length", i8("bz", [0] * 7), "b_zero_point has shape [7]; expected one element or [3]"),
            ("a_zero_point_int8", i8("az", 0), "inputs 0 (a) and 2 (a_zero_point) must have the same type (T1), not uint8 and int8"),
            ("y_scale_int", const("ys", 1, np.int32), "y_scale has type int32, expected float32")):
        inits = [repl if t.name == repl.name else t for t in qm]
        corpus("quant", f"qlinearmatmul_{name}", one("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], A, [dyn(2, T.UINT8)], inits),
               expect)
    w8 = const("w", np.ones((3, 2, 3, 3)), np.int8)
    for name, ins, inits, expect in (
            ("w_zero_point_length", ["x", "w", "", "wz"], [w8, i8("wz", [0, 0])], "w_zero_point has shape [2]; expected one element or [3]"),
            ("x_zero_point_vector", ["x", "w", "xz"], [w8, u8("xz", [1, 2])], "x_zero_point has shape [2]; expected one element"),
            ("float_weight", ["x", "w"], [const("w", np.ones((3, 2, 3, 3)), np.float32)], "input 1 of type float32 is not supported")):
        corpus("quant", f"convinteger_{name}", one("ConvInteger", ins, xq, [dyn(4, T.INT32)], inits), expect)
    b8 = const("b", np.ones((4, 3)), np.int8)
    for name, ins, inits, expect in (
            ("a_zero_point_length", ["a", "b", "az"], [b8, u8("az", [1, 1, 1])], "a_zero_point has shape [3]; expected one element or [2]"),
            ("b_zero_point_length", ["a", "b", "", "bz"], [b8, i8("bz", [1, 1])], "b_zero_point has shape [2]; expected one element or [3]"),
            ("zero_point_type", ["a", "b", "az"], [b8, i8("az", 1)], "inputs 0 (A) and 2 (a_zero_point) must have the same type (T1), not uint8 and int8")):
        corpus("quant", f"matmulinteger_{name}", one("MatMulInteger", ins, A, [dyn(2, T.INT32)], inits), expect)
    corpus("quant", "dynamicquantize_int_input", one("DynamicQuantizeLinear", ["x"], [vi("x", [2, 3], T.INT32)],
                                                     [dyn(2, T.UINT8), dyn(0, name="s"), dyn(0, T.UINT8, "z")], outs=("y", "s", "z")),
           "input 0 of type int32 is not supported")


def contrib_quantization_cases():
    """ONNX Runtime's com.microsoft.DynamicQuantizeMatMul and
    DynamicQuantizeLSTM: weights, scales and zero points of the wrong
    shape or type, weights computed at run time, missing inputs. The
    kernels read scales per column without a bound."""
    ms = [("com.microsoft", 1)]
    f32 = lambda n, v: const(n, v, np.float32)
    i8 = lambda n, v: const(n, v, np.int8)
    u8 = lambda n, v: const(n, v, np.uint8)
    A = [vi("a", [2, 4])]

    def dqm(ins, inits, inputs=A):
        return model([node("DynamicQuantizeMatMul", ins, ["y"], domain="com.microsoft")], inputs, [dyn(2)], inits, domains=ms)
    b = i8("b", np.ones((4, 3)))
    for name, ins, inits, expect in (
            ("scale_length", ["a", "b", "s"], [b, f32("s", [1, 1])], "b_scale has shape [2]; expected one element or [3]"),
            ("zero_point_type", ["a", "b", "s", "z"], [b, f32("s", 1), u8("z", 0)], "b_zero_point has type uint8, expected int8"),
            ("zero_point_length", ["a", "b", "s", "z"], [b, f32("s", 1), i8("z", [0] * 4)],
             "b_zero_point has shape [4]; expected one element or [3]"),
            ("bias_length", ["a", "b", "s", "", "c"], [b, f32("s", 1), f32("c", [1, 2])], "bias must be float32 [3]"),
            ("float_weights", ["a", "b", "s"], [f32("b", np.ones((4, 3))), f32("s", 1)], "B has type float32, expected int8 or uint8"),
            ("weights_3d", ["a", "b", "s"], [i8("b", np.ones((1, 4, 3))), f32("s", 1)], "A must be at least 2-D and B 2-D"),
            ("scale_missing", ["a", "b"], [b], "B and b_scale are required"),
            ("inner_mismatch", ["a", "b", "s"], [i8("b", np.ones((5, 3))), f32("s", 1)], "inner dimensions differ: [2,4] x [5,3]")):
        corpus("quant", f"dynamicquantizematmul_{name}", dqm(ins, inits), expect)
    corpus("quant", "dynamicquantizematmul_runtime_weights",
           dqm(["a", "b", "s"], [f32("s", 1)], A + [vi("b", [4, 3], T.INT8)]), "input 1 (weights, scale, zero point, bias) must be a constant")
    corpus("quant", "dynamicquantizematmul_valid", dqm(["a", "b", "s", "z"], [b, f32("s", [0.5, 1, 2]), i8("z", [0, 1, -1])]), "ok")
    # QOperator contrib ops: input counts, required inputs, C's type.
    u = [vi("a", [2, 4], T.UINT8)]
    qadd = lambda ins, inits: model([node("QLinearAdd", ins, ["y"], domain="com.microsoft")], u, [dyn(2, T.UINT8)], inits,
                                    domains=ms)
    corpus("quant", "qlinearadd_no_c_scale", qadd(["a", "s", "", "a", "s", ""], [f32("s", 1)]), "input 6 is required")
    corpus("quant", "qlinearadd_scale_vector", qadd(["a", "s", "", "a", "s", "", "v"], [f32("s", 1), f32("v", [1, 2, 3])]),
           "y_scale has shape [3]; expected one element or [4]")
    corpus("quant", "qlinearconcat_input_count",
           model([node("QLinearConcat", ["s", "z", "a", "s"], ["y"], domain="com.microsoft", axis=0)], u, [dyn(2, T.UINT8)],
                 [f32("s", 1), u8("z", 0)], domains=ms), "expected Y_scale, Y_zero_point and triples")
    qg = lambda c, extra=(): model([node("QGemm", ["a", "s", "z", "b", "s", "", "c"], ["y"], domain="com.microsoft")],
                                   u + list(extra), [dyn(2)], [f32("s", 1), u8("z", 0), b] + c, domains=ms)
    corpus("quant", "qgemm_float_c", qg([f32("c", [1, 2, 3])]), "C has type float32, expected int32")
    corpus("quant", "qgemm_c_columns", qg([const("c", [1, 2], np.int32)]), "C of shape [2] does not broadcast to [M, 3]")
    corpus("quant", "qgemm_runtime_c", qg([], [vi("c", [3], T.INT32)]), "C needs constant C, a_scale and b_scale")
    # tinyrt's own ConvTransposeInteger (what fuse_qdq writes) from a file.
    ct = lambda w, extra=(): model([node("ConvTransposeInteger", ["x", "w"] + list(extra), ["y"], domain="tinyrt")],
                                   [vi("x", [1, 2, 3, 3], T.UINT8)], [dyn(4, T.INT32)], [w], domains=[("tinyrt", 1)])
    corpus("quant", "convtransposeinteger_float_weight", ct(f32("w", np.ones((2, 3, 2, 2)))), "w must be int8")
    corpus("quant", "convtransposeinteger_channels", ct(i8("w", np.ones((3, 3, 2, 2)))),
           "weight [3,3,2,2] does not match input [1,2,3,3]")
    corpus("quant", "convtransposeinteger_valid", ct(i8("w", np.ones((2, 3, 2, 2)))), "ok")
    # The compiler's own marks ('_' attributes) cannot come from a file
    # (ONNX's checker refuses them on ai.onnx ops; tinyrt on contrib ops).
    corpus("quant", "internal_attribute",
           model([node("DynamicQuantizeMatMul", ["a", "b", "s"], ["y"], domain="com.microsoft", _quantize_dynamic=1)], A, [dyn(2)],
                 [b, f32("s", 1)], domains=ms),
           "attribute '_quantize_dynamic' is not supported")
    corpus("quant", "internal_attribute_ai_onnx", one("Relu", ["x"], [vi("x", [2])], [vi("y", [2])], _quantize_dynamic=1),
           "Unrecognized attribute: _quantize_dynamic for operator Relu")
    # DynamicQuantizeLSTM: T 3, batch 1, input 2, hidden 2, one direction
    X = [vi("x", [3, 1, 2])]
    good = {"W": i8("W", np.ones((1, 2, 8))), "R": i8("R", np.ones((1, 2, 8))), "Ws": f32("Ws", [0.1]), "Wz": i8("Wz", [0]),
            "Rs": f32("Rs", [0.1]), "Rz": i8("Rz", [0])}

    def dql(**repl):
        inits = [repl.get(k, v) for k, v in good.items()]
        names = [k if repl.get(k, good[k]) is not None else "" for k in good]
        n = node("DynamicQuantizeLSTM", ["x", names[0], names[1], "", "", "", "", ""] + names[2:], ["y"], domain="com.microsoft",
                 hidden_size=2)
        return model([n], X, [dyn(4)], [t for t in inits if t is not None], domains=ms)
    for name, repl, expect in (
            ("r_shape", {"R": i8("R", np.ones((1, 8, 2)))}, "R has shape [1,8,2], expected [1,2,8]"),
            ("w_shape", {"W": i8("W", np.ones((1, 3, 8)))}, "W has shape [1,3,8], expected [1,2,8]"),
            ("w_float", {"W": f32("W", np.ones((1, 2, 8)))}, "W has type float32, expected int8 or uint8"),
            ("scale_length", {"Rs": f32("Rs", [0.1] * 3)}, "R_scale has shape [3], expected [1] or [1,8]"),
            ("zero_point_type", {"Wz": u8("Wz", [0])}, "W_zero_point has type uint8, expected int8"),
            ("scale_int", {"Ws": const("Ws", [1], np.int32)}, "W_scale has type int32, expected float32"),
            ("scale_missing", {"Rs": None}, "input 10 is missing"),
            ("valid_uint8", {"W": u8("W", np.full((1, 2, 8), 200)), "Wz": u8("Wz", [100]), "R": u8("R", np.ones((1, 2, 8))),
                             "Rz": u8("Rz", [128])}, "ok")):
        corpus("quant", f"dynamicquantizelstm_{name}", dql(**repl), expect)


def recurrent_cases():
    """RNN, GRU and LSTM weights, biases, peepholes, states and sequence
    lengths of the wrong shape; directions, activations and layouts."""
    H, I = 4, 3
    f32 = lambda n, shape: const(n, np.ones(shape), np.float32)
    def rnn(op, name, gates, expect, inits=None, ins=None, x_shape=(5, 1, I), **kw):
        base = {"W": f32("W", (1, gates * H, I)), "R": f32("R", (1, gates * H, H)), "B": f32("B", (1, 2 * gates * H))}
        base.update(inits or {})
        names = ins or ["x", "W", "R", "B"]
        inits_l = [t for k, t in base.items() if k in names]
        corpus("rnn", name, one(op, names, [vi("x", list(x_shape))], [dyn(4)], inits_l, hidden_size=H, **kw), expect)
    for op, gates in (("LSTM", 4), ("GRU", 3), ("RNN", 1)):
        lo = op.lower()
        G = gates * H
        rnn(op, f"{lo}_w_gates", gates, f"W has shape [1,{G + H},{I}]", {"W": f32("W", (1, G + H, I))})
        rnn(op, f"{lo}_w_input_size", gates, f"W has shape [1,{G},{I + 2}]", {"W": f32("W", (1, G, I + 2))})
        rnn(op, f"{lo}_r_shape", gates, f"R has shape [1,{G},{H + 1}], expected [1,{G},{H}]", {"R": f32("R", (1, G, H + 1))})
        rnn(op, f"{lo}_b_length", gates, f"B has shape [1,{G}], expected [1,{2 * G}]", {"B": f32("B", (1, G))})
        rnn(op, f"{lo}_direction_bogus", gates, "direction 'sideways'", direction="sideways")
        rnn(op, f"{lo}_bidirectional_one_direction_weights", gates, f"W has shape [1,{G},{I}]", direction="bidirectional")
        rnn(op, f"{lo}_activation_unknown", gates, "activation 'Evil'", activations=["Evil"] * (3 if op == "LSTM" else 2 if op == "GRU" else 1))
        rnn(op, f"{lo}_w_rank2", gates, "X and W must be 3-D", {"W": f32("W", (G, I))})
        rnn(op, f"{lo}_weights_int", gates, "W has type int32, X has float32", {"W": const("W", np.ones((1, G, I)), np.int32)})
    rnn("LSTM", "lstm_activations_count", 4, "expected 3 activations", activations=["Sigmoid"])
    rnn("LSTM", "lstm_peephole_length", 4, "P has shape [1,8], expected [1,12]", {"P": f32("P", (1, 2 * H))},
        ins=["x", "W", "R", "B", "", "", "", "P"])
    rnn("LSTM", "lstm_initial_c_shape", 4, "initial_c has shape [1,2,4], expected [1,1,4]", {"c0": f32("c0", (1, 2, H))},
        ins=["x", "W", "R", "B", "", "", "c0"])
    rnn("LSTM", "lstm_sequence_lens_length", 4, "sequence_lens has shape [3], expected [1]", {"L": const("L", [5, 5, 5], np.int32)},
        ins=["x", "W", "R", "B", "L"])
    rnn("RNN", "rnn_x_rank2", 1, "X and W must be 3-D", x_shape=(5, I))
    corpus("rnn", "rnn_hidden_size_zero", one("RNN", ["x", "W", "R"], [vi("x", [5, 1, I])], [dyn(4)],
                                              [f32("W", (1, 0, I)), f32("R", (1, 0, 0))], hidden_size=0),
           "attribute hidden_size = 0 must be in [1, 2^31)")
    corpus("rnn", "lstm_runtime_weights_long", one("LSTM", ["x", "W", "R"], [vi("x", [10**5, 1, I]), vi("W", [1, 4 * H, I]),
                                                                           vi("R", [1, 4 * H, H])], [dyn(4)], hidden_size=H),
           "100000 time steps exceed the unrolling limit")


def folding_cases():
    """Constant folding evaluates integer arithmetic on the host: division
    of INT_MIN by -1 traps on x86, by zero too. The host must compute what
    the generated code computes (0 for x / 0 and x % 0, wrapping for INT_MIN
    / -1, saturating casts), never crash."""
    onnx_type = {np.int32: T.INT32, np.int64: T.INT64, np.uint8: T.UINT8}

    def folded(op, t, a, b=None, **kw):
        ins = [const("a", a, t)] + ([const("b", b, t)] if b is not None else [])
        return one(op, ["a", "b"][:len(ins)], [], [dyn(1, onnx_type[t])], ins, **kw)
    lo64, lo32 = -(2**63), -(2**31)
    corpus("fold", "mod_int64_min_by_minus_one", folded("Mod", np.int64, [lo64, 7], [-1, -1]), "ok")
    corpus("fold", "mod_int64_min_by_minus_one_fmod", folded("Mod", np.int64, [lo64, 7], [-1, -1], fmod=1), "ok")
    corpus("fold", "div_int64_min_by_minus_one", folded("Div", np.int64, [lo64, 7], [-1, -1]), "ok")
    corpus("fold", "div_int32_min_by_minus_one", folded("Div", np.int32, [lo32, 7], [-1, -1]), "ok")
    corpus("fold", "div_by_zero", folded("Div", np.int64, [1, -5], [0, 0]), "ok")
    corpus("fold", "mod_by_zero", folded("Mod", np.int32, [1, -5], [0, 0]), "ok")
    corpus("fold", "mod_unsigned_by_zero", folded("Mod", np.uint8, [1, 255], [0, 0]), "ok")
    corpus("fold", "neg_int64_min", folded("Neg", np.int64, [lo64]), "ok")
    corpus("fold", "abs_int32_min", folded("Abs", np.int32, [lo32]), "ok")
    corpus("fold", "cast_nan_inf_to_int", one("Cast", ["a"], [], [dyn(1, T.INT32)], [const("a", [np.nan, np.inf, -1e30], np.float32)],
                                                to=T.INT32), "ok")
    corpus("fold", "cast_huge_to_uint8", one("Cast", ["a"], [], [dyn(1, T.UINT8)], [const("a", [np.nan, 1e30, -5], np.float32)],
                                               to=T.UINT8), "ok")
    corpus("fold", "shift_by_width", one("BitShift", ["a", "b"], [], [dyn(1, T.UINT8)], [const("a", [1, 2, 3], np.uint8),
                                                                                       const("b", [8, 200, 255], np.uint8)],
                                         direction="LEFT"), "ok")


def chain_cases():
    """Long dependency chains through ops other than elementwise ones, and
    wide fan-in: no recursion over the graph may run out of stack."""
    n = 5000
    nodes, prev = [], "x"
    for i in range(n):  # views and an elementwise op in turn: Transpose, Identity, Neg
        op = ("Transpose", "Identity", "Neg")[i % 3]
        nodes.append(node(op, [prev], [f"t{i}"], **({"perm": [1, 0]} if op == "Transpose" else {})))
        prev = f"t{i}"
    corpus("chain", "views5000", model(nodes, [vi("x", [4, 4])], [vi(prev, [4, 4])]), "ok")
    nodes, prev = [], "x"
    for i in range(n):  # one expression 5000 deep: Add of a constant each time
        nodes.append(node("Add", [prev, "one"], [f"t{i}"]))
        prev = f"t{i}"
    corpus("chain", "add_const5000", model(nodes, [vi("x", [4])], [vi(prev, [4])], [const("one", 1.0, np.float32)]), "ok")
    nodes, prev = [], "s0"
    for i in range(3000):  # shape arithmetic folded on the host
        nodes.append(node("Add", [prev, "one"], [f"s{i + 1}"]))
        prev = f"s{i + 1}"
    nodes.append(node("Reshape", ["x", prev], ["y"]))
    corpus("chain", "folded_shape3000", model(nodes, [vi("x", [4])], [dyn(1)], [const("s0", [-2996], np.int64), const("one", [1], np.int64)]),
           "ok")
    # (a Concat lowers in groups of 16 inputs: 4.9 s for AVX2; one expression of 1000 selects took 118 s)
    corpus("chain", "concat_fan_in_1000", one("Concat", ["x"] * 1000, [vi("x", [1, 2])], [vi("y", [1000, 2])], axis=0), "ok")
    corpus("chain", "sum_fan_in_5000", one("Sum", ["x"] * 5000, [vi("x", [1, 2])], [vi("y", [1, 2])]), "ok")


def fuzzer_findings():
    """What the fuzz targets (tests/fuzz/) found, one case per finding:
    ranks and secondary inputs the onnx library's shape inference or
    tinyrt's own inference trusted, steps and empty shapes whose arithmetic
    overflowed."""
    x23 = [vi("x", [2, 3])]
    i64 = lambda name, v: const(name, v, np.int64)
    f32 = lambda name, v: const(name, v, np.float32)
    # Slice steps of INT64_MAX: the element count was (e - b + step - 1) / step.
    corpus("size", "slice_steps_max_int", one("Slice", ["x", "s", "e", "a", "st"], x23, [vi("y", [2, 1])],
                                              [i64("s", [0]), i64("e", [3]), i64("a", [1]), i64("st", [2**63 - 1])]), "ok")
    # An empty tensor whose other dimensions multiply past 64 bits (its
    # strides overflowed in the memory plan).
    corpus("size", "expand_empty_huge_dims", one("Expand", ["x", "s"], [vi("x", [1])], [dyn(3)],
                                                 [i64("s", [0, 2**40, 2**40])]), "empty, but its other dimensions span")
    # A weight of another rank than the input: onnx 1.12's ConvTranspose and
    # Conv inference read past the dimensions (a crash inside libonnx), and
    # tinyrt's own inference indexed the weight's shape before checking.
    x13 = [vi("x", [1, 1, 3])]
    corpus("index", "convtranspose_weight_rank2", one("ConvTranspose", ["x", "w"], x13 + [vi("w", [1, 2])], [dyn(3)]),
           "input and weight ranks do not match")
    corpus("index", "convtranspose_weight_scalar", one("ConvTranspose", ["x", "w"], x13, [dyn(3)], [f32("w", 1.0)]),
           "input and weight ranks do not match")
    corpus("index", "conv_weight_rank_above_input", one("Conv", ["x", "w"], x13, [dyn(3)], [f32("w", np.ones((1, 1, 3, 3)))]),
           "weight [1,1,3,3] and input [1,1,3] differ in rank")
    # MaxUnpool: indices of another shape than the input (read at the
    # input's indices), and strides shorter than kernel_shape.
    x1122 = [vi("x", [1, 1, 2, 2])]
    corpus("index", "maxunpool_indices_rank1", one("MaxUnpool", ["x", "i"], x1122, [dyn(4)], [i64("i", [0, 1, 2, 3])],
                                                   kernel_shape=[2, 2]), "indices have shape [4], the input [1,1,2,2]")
    corpus("attr", "maxunpool_strides_short", one("MaxUnpool", ["x", "i"], x1122, [dyn(4)],
                                                  [i64("i", np.zeros((1, 1, 2, 2)))], kernel_shape=[2, 2], strides=[2]),
           "strides has 1 and pads 4 entries for 2 spatial dims")
    # RoiAlign's batch_indices: read as one int64 per roi.
    x1144 = [vi("x", [1, 1, 4, 4])]
    rois = f32("r", [[0, 0, 2, 2]])
    corpus("index", "roialign_batch_indices_float", one("RoiAlign", ["x", "r", "r"], x1144, [dyn(4)], [rois]),
           "input 2 of type float32 is not supported")
    corpus("index", "roialign_batch_indices_length", one("RoiAlign", ["x", "r", "b"], x1144, [dyn(4)], [rois, i64("b", [0, 0, 0])]),
           "batch_indices has shape [3], expected [1] (one per roi)")
    # Losses: a class weight that is not [C], targets larger than the input.
    x356 = [vi("x", [3, 5, 6])]
    corpus("index", "sce_weight_scalar", one("SoftmaxCrossEntropyLoss", ["x", "t", "w"], x356, [vi("y", [])],
                                             [i64("t", np.zeros((3, 6))), f32("w", 1.0)]),
           "weight has shape [], expected [5] (one per class)")
    corpus("index", "nll_targets_longer", one("NegativeLogLikelihoodLoss", ["x", "t"], x356, [vi("y", [])],
                                              [i64("t", np.zeros((3, 7)))]), "targets must be [N, d...]")
    # STFT with a scalar signal: onnx 1.12's inference reads the signal's
    # dimensions 1 and 2 (a SEGV inside libonnx).
    corpus("index", "stft_signal_scalar", one("STFT", ["s", "f", "w"], [], [dyn(4)],
                                              [f32("s", 1.0), i64("f", 2), f32("w", [1, 1, 1])], opset=17),
           "signal must be [batch, length, 1 or 2]")
    # Inputs that share a type parameter of the op's schema: a float16
    # Scale of a float32 LayerNormalization was an internal error.
    x34 = [vi("x", [3, 4])]
    corpus("dtype", "layernorm_scale_float16", one("LayerNormalization", ["x", "s", "b"], x34, [dyn(2)],
                                                   [const("s", np.ones(4), np.float16), f32("b", np.zeros(4))], opset=17),
           "inputs 0 (X) and 1 (Scale) must have the same type (T), not float32 and float16")
    corpus("dtype", "matmul_float32_float64", one("MatMul", ["x", "w"], x34, [dyn(2)], [const("w", np.ones((4, 2)), np.float64)]),
           "inputs 0 (A) and 1 (B) must have the same type (T), not float32 and float64")


def _fn(name, nodes, ins, outs, dom="local", attrs=(), opset=13):
    return h.make_function(dom, name, ins, outs, nodes, [h.make_opsetid("", opset)], list(attrs))


def _with_functions(nodes, ins, outs, funcs, inits=(), opset=13):
    m = model(nodes, ins, outs, inits, opset=opset, domains=[("local", 1)])
    m.functions.extend(funcs)
    return m


def pow_exact(a, b, bits):
    """Pow of integers as tinyrt defines it (docs/SECURITY.md): a^b modulo
    2^bits for b >= 0; for b < 0, 1 / a^|b| truncated (1, +-1 or 0)."""
    if b < 0:
        r = 1 if a == 1 else (-1 if b % 2 else 1) if a == -1 else 0
    else:
        r = pow(a, b, 1 << bits)
    r &= (1 << bits) - 1
    return r - (1 << bits) if r >> (bits - 1) else r


def round3_cases():
    """Round 3 of the hostile models (issue 25): model-local functions that
    recurse, chain or nest exponentially (libonnx's shape inference
    recursed without limit; tinyrt no longer runs it and inlines the
    functions itself, bounded); constant folding whose work, not size, is
    huge; weights that would exhaust LLVM; integer Pow computed in float;
    ArgMax over an empty axis; constant indices out of range. Each must end
    within the bounds (10 s, 2 GiB; run_corpus.py --bounds)."""
    corpus_b = lambda *a: corpus(*a, bounded=True)
    x2 = [vi("x", [2])]
    y2 = [vi("y", [2])]
    relu = lambda name: _fn(name, [node("Relu", ["a"], ["b"])], ["a"], ["b"])
    call = lambda f, i="x", o="y": h.make_node(f, [i], [o], domain="local")
    # Recursion: a function calling itself, two calling each other, one
    # reaching itself through an If branch of its body.
    corpus_b("function", "recursive_self", _with_functions([call("F")], x2, y2, [_fn("F", [call("F", "a", "b")], ["a"], ["b"])]),
           "model-local function local::F calls itself")
    corpus_b("function", "recursive_mutual", _with_functions([call("F")], x2, y2, [
        _fn("F", [call("G", "a", "b")], ["a"], ["b"]), _fn("G", [call("H", "a", "b")], ["a"], ["b"]),
        _fn("H", [call("F", "a", "b")], ["a"], ["b"])]), "calls itself (local::F -> local::G -> local::H -> local::F)")
    then_b = h.make_graph([call("F", "a", "t")], "then", [], [vi("t", [2])])
    else_b = h.make_graph([node("Identity", ["a"], ["e"])], "else", [], [vi("e", [2])])
    corpus_b("function", "recursive_through_if", _with_functions(
        [node("ReduceSum", ["x"], ["s"], keepdims=0), node("Greater", ["s", "z"], ["c"]), call("F")], x2, y2,
        [_fn("F", [node("Constant", [], ["c0"], value=h.make_tensor("v", T.BOOL, [], [False])),
                   node("If", ["c0"], ["b"], then_branch=then_b, else_branch=else_b)], ["a"], ["b"])],
        [const("z", np.float32(0))]), "calls itself")
    # A chain of 20 000 functions (a valid 1 MB model), each calling the
    # next: deeper than the nesting cap.
    chain = [relu("F0")] + [_fn(f"F{k}", [call(f"F{k - 1}", "a", "b")], ["a"], ["b"]) for k in range(1, 20000)]
    corpus_b("function", "chain_20000", _with_functions([call("F19999")], x2, y2, chain), "nest more than 64 deep")
    # 41 functions, each calling the previous one twice: 2^41 nodes once
    # inlined, in 3 KB.
    expo = [relu("F0")] + [_fn(f"F{k}", [call(f"F{k - 1}", "a", "t"), call(f"F{k - 1}", "t", "b")], ["a"], ["b"])
                           for k in range(1, 41)]
    corpus_b("function", "exponential_41", _with_functions([call("F40")], x2, y2, expo), "(--max-expanded-nodes)")
    # 64 wide calls of a function of 4000 nodes: 256 000 nodes.
    wide = _fn("W", [node("Relu", ["a" if k == 0 else f"t{k - 1}"], [f"t{k}" if k < 3999 else "b"]) for k in range(4000)], ["a"], ["b"])
    corpus_b("function", "fan_out_over_cap", _with_functions(
        [call("W", "x" if k == 0 else f"y{k - 1}", f"y{k}" if k < 63 else "y") for k in range(64)], x2, y2, [wide]),
        "would add more than 200000 nodes (--max-expanded-nodes)")
    corpus_b("function", "body_reads_undefined", _with_functions([call("F")], x2, y2, [_fn("F", [node("Add", ["a", "q"], ["b"])], ["a"], ["b"])]),
           "reads 'q', which is neither an input of the function nor computed before it")
    corpus_b("function", "output_never_computed", _with_functions([call("F")], x2, y2, [_fn("F", [node("Relu", ["a"], ["c"])], ["a"], ["b"])]),
           "output 'b' is never computed")
    corpus_b("function", "too_many_inputs", _with_functions([h.make_node("F", ["x", "x"], ["y"], domain="local")], x2, y2, [relu("F")]),
           "calls model-local function F with 2 inputs and 1 outputs; it takes 1 and 1")
    corpus_b("function", "opset_differs", _with_functions([call("F")], x2, y2, [_fn("F", [node("Relu", ["a"], ["b"])], ["a"], ["b"], opset=11)]),
           "imports opset 11 of domain ai.onnx, the model opset 13")
    dup = _with_functions([call("F")], x2, y2, [relu("F"), relu("F")])
    corpus_b("function", "defined_twice", dup, "defines function local::F twice")
    # Valid: a function with an attribute reference, called from the main
    # graph and from an If branch, nesting another function; numerically
    # checked below.
    corpus_b("function", "inlined_ok", _with_functions([call("F")], x2, y2, [relu("G"), _fn("F", [call("G", "a", "b")], ["a"], ["b"])]), "ok")

    # Constant folding: a Conv of two ConstantOfShape tensors (20 MB, under
    # the bytes cap; 1.2 * 10^11 element operations, which the interpreter
    # would take an hour for; 268 MB by 67 MB ran for minutes before).
    def cos(name, shape, v=1.0):
        return (node("ConstantOfShape", [name + "_s"], [name], value=h.make_tensor("v", T.FLOAT, [1], [v])),
                const(name + "_s", shape, np.int64))
    a, a_s = cos("A", [1, 64, 128, 128])
    w, w_s = cos("W", [64, 64, 31, 31])
    corpus_b("fold", "conv_of_constants_work", model([a, w, node("Conv", ["A", "W"], ["c"]), node("ReduceSum", ["c"], ["r"], keepdims=0),
                                                    node("Add", ["x", "r"], ["y"])], [vi("x", [])], [vi("y", [])], [a_s, w_s]),
           "element operations, past the limit of 1073741824 for the whole model")
    # A MatMul by a 1 GiB constant (which took 6.4 GB inside LLVM and
    # aborted); a Winograd convolution whose transformed weights (604 MB)
    # pass the weights cap though the folded ones (151 MB) do not.
    b, b_s = cos("B", [16384, 16384])
    corpus_b("fold", "matmul_by_1gib_constant", model([b, node("MatMul", ["x", "B"], ["y"])], [vi("x", [1, 16384])], [vi("y", [1, 16384])], [b_s]),
           "exceeds --max-folded-bytes 268435456")
    # A large 3x3 layer: Winograd F(4,3) would make its weights 4 times
    # larger (once past the cap: refused); the default weights budget
    # (1.1x the model's weights) keeps it direct, and it compiles. (Forced
    # forms past the cap: tests/compiler/passes/test_winograd.cpp.)
    w, w_s = cos("W", [1024, 1024, 3, 3], 0.5)
    corpus_b("fold", "winograd_weights_within_budget_ok",
             model([w, node("Conv", ["x", "W"], ["y"], pads=[1, 1, 1, 1])], [vi("x", [1, 1024, 16, 16])],
                   [vi("y", [1, 1024, 16, 16])], [w_s]), "ok")
    # Integer Pow with a huge constant exponent: the folding loop ran b times.
    corpus_b("fold", "pow_int64_exponent_2_62", model([node("Pow", ["c", "e"], ["p"]), node("Add", ["x", "p"], ["y"])],
                                                    [vi("x", [1], T.INT64)], [vi("y", [1], T.INT64)],
                                                    [const("c", [3], np.int64), const("e", [2**62], np.int64)]), "ok")

    # No index along an empty axis.
    for op in ("ArgMax", "ArgMin"):
        corpus_b("index", f"{op.lower()}_empty_axis", one(op, ["x"], [vi("x", [3, 0])], [dyn(2, T.INT64)], axis=1),
               "axis 1 of the input [3,0] is empty, so there is no index to return")
    corpus_b("index", "argmax_empty_axis_empty_output_ok", one("ArgMax", ["x"], [vi("x", [0, 0])], [dyn(2, T.INT64)], axis=1), "ok")
    # Constant indices that the kernels would skip or clamp at run time.
    i64 = lambda name, v: const(name, v, np.int64)
    x1122 = [vi("x", [1, 1, 2, 2])]
    corpus_b("index", "maxunpool_constant_index_out", one("MaxUnpool", ["x", "i"], x1122, [dyn(4)], [i64("i", [[[[0, 1], [2, 16]]]])],
                                                        kernel_shape=[2, 2], strides=[2, 2]),
           "index 16 (element 3 of 'i') is outside [0, 16)")
    corpus_b("index", "roialign_batch_index_out", one("RoiAlign", ["x", "r", "b"], [vi("x", [1, 1, 4, 4])], [dyn(4)],
                                                    [const("r", [[0, 0, 2, 2]], np.float32), i64("b", [1])]),
           "batch index 1 (element 0 of 'b') is outside [0, 1)")
    x356 = [vi("x", [3, 5, 6])]
    corpus_b("index", "nll_constant_target_out", one("NegativeLogLikelihoodLoss", ["x", "t"], x356, [vi("y", [])],
                                                   [i64("t", np.full((3, 6), 5))]), "target class 5 (element 0 of 't') is outside [0, 5)")
    corpus_b("index", "nll_constant_target_ignored_ok", one("NegativeLogLikelihoodLoss", ["x", "t"], x356, [vi("y", [])],
                                                          [i64("t", np.full((3, 6), -100))], ignore_index=-100), "ok")
    corpus_b("index", "sce_constant_target_negative", one("SoftmaxCrossEntropyLoss", ["x", "t"], x356, [vi("y", [])],
                                                        [i64("t", np.full((3, 6), -1))]), "target class -1 (element 0 of 't') is outside [0, 5)")
    corpus_b("index", "reversesequence_constant_length_out", one("ReverseSequence", ["x", "l"], [vi("x", [4, 2])], [dyn(2)],
                                                               [i64("l", [4, 5])], time_axis=0, batch_axis=1),
           "sequence length 5 (element 1 of 'l') is outside [0, 5)")

    # Found by fuzz_fold: a Conv of rank-1 tensors (two Ranges) sliced the
    # weight's spatial sizes from dimension 2 before any rank check.
    corpus_b("index", "conv_rank1_weight", one("Conv", ["x", "w"], [vi("x", [3])], [dyn(1)], [const("w", [1, 2, 3], np.float32)]),
             "the weight must have rank >= 3, got [3]")
    corpus_b("index", "convinteger_rank1_weight", one("ConvInteger", ["x", "w"], [vi("x", [3], T.UINT8)], [dyn(1, T.INT32)],
                                                      [const("w", [1, 2, 3], np.uint8)]),
             "the weight must have rank >= 3, got [3]")

    # Found by fuzz_import's structure mutator: a Concat in a function called
    # with fewer inputs than the function takes read an omitted input.
    cat = _fn("Cat", [node("Concat", ["a", "b", "c"], ["o"], axis=0)], ["a", "b", "c"], ["o"])
    corpus_b("function", "call_omits_required_input", _with_functions([h.make_node("Cat", ["x", "x"], ["y"], domain="local")],
                                                                      x2, [vi("y", [4])], [cat]),
             "input 2 (inputs) is omitted, but the op requires it")
    corpus_b("index", "concat_input_omitted", one("Concat", ["x", "", "x"], x2, [dyn(1)], axis=0),
             "input 1 (inputs) is omitted, but the op requires it")

    # Exact integer Pow, at run time and folded, checked bit for bit.
    pairs32 = [(3, 19), (-1, 2**31 - 1), (2, 31), (2, 32), (0, 0), (-3, 7), (7, 100), (-2, 63), (5, -1), (1, -7),
               (-1, -3), (-1, -4), (0, -2), (2**31 - 1, 2), (-(2**31), 3)]
    a = np.array([p[0] for p in pairs32], np.int32)
    b = np.array([p[1] for p in pairs32], np.int32)
    want = np.array([pow_exact(int(x), int(y), 32) for x, y in pairs32], np.int32)
    numeric("exact_pow_int32", model([node("Pow", ["a", "b"], ["y"])], [vi("a", [len(a)], T.INT32), vi("b", [len(a)], T.INT32)],
                                     [vi("y", [len(a)], T.INT32)]), [a, b], [want])
    pairs64 = [(3, 39), (3, 41), (-7, 25), (2, 63), (2, 64), (5, 2**40 + 3), (-1, 2**62 + 1), (11, -2), (-1, -1)]
    a = np.array([p[0] for p in pairs64], np.int64)
    b = np.array([p[1] for p in pairs64], np.int64)
    want = np.array([pow_exact(int(x), int(y), 64) for x, y in pairs64], np.int64)
    numeric("exact_pow_int64", model([node("Pow", ["a", "b"], ["y"])], [vi("a", [len(a)], T.INT64), vi("b", [len(a)], T.INT64)],
                                     [vi("y", [len(a)], T.INT64)]), [a, b], [want])
    # Base int32, exponent int64 (computed in int64, wrapped to int32).
    a = np.array([3, 3, -5, 2], np.int32)
    b = np.array([19, 2**33 + 19, 13, 31], np.int64)
    want = np.array([pow_exact(int(x), int(y), 32) for x, y in zip(a, b)], np.int32)
    numeric("exact_pow_int32_by_int64", model([node("Pow", ["a", "b"], ["y"])], [vi("a", [4], T.INT32), vi("b", [4], T.INT64)],
                                              [vi("y", [4], T.INT32)]), [a, b], [want])
    # Folded: constant operands, added to a zero input.
    c = np.array([p[0] for p in pairs64], np.int64)
    e = np.array([p[1] for p in pairs64], np.int64)
    want = np.array([pow_exact(int(x), int(y), 64) for x, y in pairs64], np.int64)
    numeric("exact_pow_int64_folded", model([node("Pow", ["c", "e"], ["p"]), node("Add", ["x", "p"], ["y"])],
                                            [vi("x", [len(c)], T.INT64)], [vi("y", [len(c)], T.INT64)],
                                            [const("c", c, np.int64), const("e", e, np.int64)]),
            [np.zeros(len(c), np.int64)], [want])
    # Model-local functions inlined: an attribute reference (LeakyRelu's
    # alpha) set differently by two calls, a nested call, a call inside an
    # If branch of the main graph.
    f_leaky = h.make_function("local", "LeakyAdd", ["a"], ["b"], [
        _ref_node("LeakyRelu", ["a"], ["l"], "alpha", "alpha", AP.FLOAT),
        node("Add", ["l", "a"], ["b"])], [h.make_opsetid("", 13)], ["alpha"])
    f_twice = h.make_function("local", "Twice", ["a"], ["b"], [
        _ref_node("LeakyAdd", ["a"], ["t"], "alpha", "alpha", AP.FLOAT, domain="local"),
        _ref_node("LeakyAdd", ["t"], ["b"], "alpha", "alpha", AP.FLOAT, domain="local")], [h.make_opsetid("", 13), h.make_opsetid("local", 1)], ["alpha"])
    then_b = h.make_graph([h.make_node("LeakyAdd", ["x"], ["t"], domain="local", alpha=0.5)], "then", [], [vi("t", [5])])
    else_b = h.make_graph([node("Neg", ["x"], ["e"])], "else", [], [vi("e", [5])])
    m = _with_functions([h.make_node("Twice", ["x"], ["y"], domain="local", alpha=0.1),
                         h.make_node("LeakyAdd", ["x"], ["z"], domain="local", alpha=0.3),
                         h.make_node("LeakyAdd", ["x"], ["w"], domain="local"),
                         node("If", ["c"], ["v"], then_branch=then_b, else_branch=else_b)],
                        [vi("x", [5]), vi("c", [], T.BOOL)], [vi("y", [5]), vi("z", [5]), vi("w", [5]), vi("v", [5])], [f_leaky, f_twice])
    xv = np.array([-2, -0.5, 0, 1, 3], np.float32)
    lk = lambda x, al: np.where(x < 0, x * np.float32(al), x).astype(np.float32) + x
    numeric("local_functions_inlined", m, [xv, np.array(True)],
            [lk(lk(xv, 0.1), 0.1), lk(xv, 0.3), lk(xv, 0.01), lk(xv, 0.5)])


def _ref_node(op, ins, outs, name, ref, kind, domain=""):
    n = h.make_node(op, ins, outs, domain=domain)
    a = n.attribute.add()
    a.name = name
    a.ref_attr_name = ref
    a.type = kind
    return n


oversized_dimensions()
opsets_and_domains()
names_of_any_bytes()
attribute_values()
indices_and_secondary_inputs()
control_flow_unrolls()
malformed_protobufs_and_graphs()
deep_nesting_and_chains()
protobuf_cases()
tensor_cases()
external_data_cases()
shape_target_cases()
axis_cases()
index_cases()
zero_divisor_cases()
graph_cases()
name_cases()
dtype_cases()
control_flow_cases()
opset_cases()
quantization_cases()
contrib_quantization_cases()
recurrent_cases()
folding_cases()
chain_cases()
fuzzer_findings()
round3_cases()


with open(os.path.join(COR, "manifest.tsv"), "w") as f:
    for name, expect, bound in manifest:
        f.write(f"{name}\t{expect}\t{bound}\n")
print(f"{len(os.listdir(NUM))} numeric cases in {NUM}, {len(manifest)} corpus cases in {COR}")
