#!/usr/bin/python3
"""The compiler's refusals that are not about a model's content
(docs/SECURITY.md, docs/ABI.md "Names"):

  - memory running out, in tinyrt's code or inside LLVM, ends in exit 1 and
    an "out of memory" message, never a signal (a model of 256 MiB of folded
    weights, within every cap, compiled under address-space limits that run
    out before, during and after LLVM's code generation);
  - reserved names: --name stddef, --name TinyRT_net and --name __x are
    refused with exit 2 naming the rule; a model file called tinyrt.onnx or
    stdint.onnx compiles as model_tinyrt / model_stdint, with a warning;
  - run-time dimensions (docs/ABI.md): malformed or empty ranges, a --dim
    no input has, a bound past the element cap, and ops or layouts that
    cannot take a run-time dimension are refused with a message naming the
    option, or the node, the input, the axis, the dimension and its range
    (a Loop over a run-time trip count whose carried value changes shape,
    a Slice to a run-time end with a step other than 1, an extent computed
    from the data where another must equal it, a transposed convolution to
    a fixed output_shape over a run-time size).

    tests/compiler/check_refusals.py build/tinyrt-compile WORKDIR
"""
import os, resource, subprocess, sys

import onnx
from onnx import TensorProto as T, helper as h

compiler, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failures += not ok


def save(m, name):
    path = os.path.join(work, name)
    onnx.save(m, path)
    return path


def run(args, limit=None):
    def pre():
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return subprocess.run([compiler] + args, capture_output=True, text=True, preexec_fn=pre, timeout=600)


# 8192 x 8192 float32: exactly --max-folded-bytes and --max-weights-bytes.
n = 8192
g = h.make_graph([h.make_node("ConstantOfShape", ["s"], ["B"], value=h.make_tensor("v", T.FLOAT, [1], [0.5])),
                  h.make_node("MatMul", ["x", "B"], ["y"])], "g",
                 [h.make_tensor_value_info("x", T.FLOAT, [1, n])], [h.make_tensor_value_info("y", T.FLOAT, [1, n])],
                 [h.make_tensor("s", T.INT64, [2], [n, n])])
big = save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "big_weights.onnx")
for gib in (0.6, 1.0, 1.3):
    r = run([big, "-o", os.path.join(work, "big"), "--target", "x86-64-avx2"], int(gib * (1 << 30)))
    check(r.returncode == 1 and "error: out of memory" in r.stderr,
          f"256 MiB of weights under a {gib} GiB address space: exit {r.returncode}, {r.stderr.strip()[-160:]!r}")

relu = h.make_model(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                                 [h.make_tensor_value_info("y", T.FLOAT, [2])]), opset_imports=[h.make_opsetid("", 13)])
plain = save(relu, "plain.onnx")
for name, rule in (("stddef", "stddef.h would shadow"), ("TinyRT_net", "belong to the runtime"),
                   ("__x", "reserved to the C implementation")):
    r = run([plain, "-o", os.path.join(work, "n"), "--name", name])
    check(r.returncode == 2 and rule in r.stderr, f"--name {name}: exit {r.returncode}, {r.stderr.strip()!r}")
for stem in ("tinyrt", "stdint"):
    out = os.path.join(work, "out_" + stem)
    r = run([save(relu, stem + ".onnx"), "-o", out])
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    check(r.returncode == 0 and f"model_{stem}.h" in files and f"{stem}.h" not in files and
          f"the model is named 'model_{stem}'" in r.stderr, f"{stem}.onnx: exit {r.returncode}, files {files}")

# Run-time dimensions.
def model_of(nodes, inputs, outputs, inits=()):
    return h.make_model(h.make_graph(nodes, "g", inputs, outputs, list(inits)), opset_imports=[h.make_opsetid("", 13)])


seq = save(model_of([h.make_node("Relu", ["x"], ["y"])], [h.make_tensor_value_info("x", T.FLOAT, ["T", 4])],
                    [h.make_tensor_value_info("y", T.FLOAT, ["T", 4])]), "seq.onnx")
conv = save(model_of([h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3])],
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 2, "H", 8])], [h.make_tensor_value_info("y", T.FLOAT, ["n", "c", "h", "w"])],
                     [h.make_tensor("w", T.FLOAT, [3, 2, 3, 3], [0.1] * 54)]), "conv_h.onnx")
conv_same = save(model_of([h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], auto_pad="SAME_UPPER")],
                          [h.make_tensor_value_info("x", T.FLOAT, [1, 2, "H", 8])],
                          [h.make_tensor_value_info("y", T.FLOAT, ["n", "c", "h", "w"])],
                          [h.make_tensor("w", T.FLOAT, [3, 2, 3, 3], [0.1] * 54)]), "conv_same.onnx")
conv_c = save(model_of([h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[1, 1], group=1)],
                       [h.make_tensor_value_info("x", T.FLOAT, [1, "C", 4, 4])],
                       [h.make_tensor_value_info("y", T.FLOAT, ["n", "c", "h", "w"])],
                       [h.make_tensor("w", T.FLOAT, [3, 4, 1, 1], [0.1] * 12)]), "conv_c.onnx")
resize_third = save(model_of([h.make_node("Resize", ["x", "", "s"], ["y"])],
                             [h.make_tensor_value_info("x", T.FLOAT, [1, 1, "H", 4])],
                             [h.make_tensor_value_info("y", T.FLOAT, ["n", "c", "h", "w"])],
                             [h.make_tensor("s", T.FLOAT, [4], [1, 1, 0.3, 1])]), "resize_third.onnx")
# Two extents that meet are tested at run time (T against U here), but not
# one computed from the data (NonZero's count against T): refused.
two = save(model_of([h.make_node("NonZero", ["x"], ["nz"]), h.make_node("Cast", ["nz"], ["nzf"], to=T.FLOAT),
                     h.make_node("Unsqueeze", ["x", "ax0"], ["x1"]), h.make_node("Add", ["nzf", "x1"], ["y"])],
                    [h.make_tensor_value_info("x", T.FLOAT, ["T"])], [h.make_tensor_value_info("y", T.FLOAT, [1, "n"])],
                    [h.make_tensor("ax0", T.INT64, [1], [0])]), "produced_meets.onnx")
# A transposed convolution to a fixed output_shape over a run-time size.
convt_shape = save(model_of([h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2], output_shape=[9])],
                            [h.make_tensor_value_info("x", T.FLOAT, [1, 2, "T"])],
                            [h.make_tensor_value_info("y", T.FLOAT, [1, 3, 9])],
                            [h.make_tensor("w", T.FLOAT, [2, 3, 3], [0.1] * 18)]), "convt_output_shape.onnx")
# Sizes computed from a run-time extent: a float Range (its length would
# depend on rounding), a Range whose delta is computed too, an Expand of a
# run-time axis to a fixed size.
t_of_x = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "zero"], ["t"], axis=0)]
zero = h.make_tensor("zero", T.INT64, [], [0])
frange = save(model_of(t_of_x + [h.make_node("Cast", ["t"], ["tf"], to=T.FLOAT),
                                 h.make_node("Range", ["z", "tf", "d"], ["y"])],
                       [h.make_tensor_value_info("x", T.FLOAT, ["T", 4])], [h.make_tensor_value_info("y", T.FLOAT, ["n"])],
                       [zero, h.make_tensor("z", T.FLOAT, [], [0.0]), h.make_tensor("d", T.FLOAT, [], [0.5])]),
              "range_float.onnx")
drange = save(model_of(t_of_x + [h.make_node("Range", ["zero", "sixty", "t"], ["y"])],
                       [h.make_tensor_value_info("x", T.FLOAT, ["T", 4])], [h.make_tensor_value_info("y", T.INT64, ["n"])],
                       [zero, h.make_tensor("sixty", T.INT64, [], [60])]), "range_delta.onnx")
expand = save(model_of([h.make_node("Expand", ["x", "s"], ["y"])], [h.make_tensor_value_info("x", T.FLOAT, ["T", 4])],
                       [h.make_tensor_value_info("y", T.FLOAT, ["n", 4])], [h.make_tensor("s", T.INT64, [2], [6, 4])]),
              "expand_fixed.onnx")
# A Loop over a run-time trip count whose carried value grows; a Slice to
# a run-time end with a step of 2.
grow_body = h.make_graph([h.make_node("Concat", ["s_in", "one"], ["s_out"], axis=0),
                          h.make_node("Identity", ["c_in"], ["c_out"])], "body",
                         [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c_in", T.BOOL, []),
                          h.make_tensor_value_info("s_in", T.FLOAT, None)],
                         [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("s_out", T.FLOAT, None)],
                         [h.make_tensor("one", T.FLOAT, [1], [1.0])])
grow = save(model_of(t_of_x + [h.make_node("Loop", ["t", "yes", "s0"], ["y"], body=grow_body)],
                     [h.make_tensor_value_info("x", T.FLOAT, ["T", 4])], [h.make_tensor_value_info("y", T.FLOAT, ["n"])],
                     [zero, h.make_tensor("yes", T.BOOL, [], [1]), h.make_tensor("s0", T.FLOAT, [1], [0.0])]),
            "loop_grows.onnx")
slice2 = save(model_of(t_of_x + [h.make_node("Unsqueeze", ["t", "ax"], ["e"]),
                                 h.make_node("Slice", ["w", "z1", "e", "ax", "two"], ["y"])],
                       [h.make_tensor_value_info("x", T.FLOAT, ["T", 4])], [h.make_tensor_value_info("y", T.FLOAT, ["n"])],
                       [zero, h.make_tensor("w", T.FLOAT, [8], [0.5] * 8), h.make_tensor("z1", T.INT64, [1], [0]),
                        h.make_tensor("ax", T.INT64, [1], [0]), h.make_tensor("two", T.INT64, [1], [2])]),
              "slice_step2.onnx")
for path, args, want in (
        (grow, ["--dim", "T=1:8"], "changes shape from [1] to [2] in an iteration"),
        (slice2, ["--dim", "T=1:8"], "it is taken with a step of 1"),
        (frange, ["--dim", "T=1:8"], "a floating-point Range with a limit or start computed from run-time extents"),
        (drange, ["--dim", "T=1:8"], "delta 't' is computed at run time"),
        (expand, ["--dim", "T=1:8"], "meets the fixed size 6"),
        (seq, ["--dim", "T=5:3"], "--dim expects NAME=MIN:MAX"),
        (seq, ["--dim", "T=1"], "--dim expects NAME=MIN:MAX"),
        (seq, ["--dim", "T=1:8", "--dim", "U=1:8"], "--dim names 'U', which no graph input has"),
        (seq, ["--dim", "T=1:99999999999999"], "dimension T may be 99999999999999, more than the"),
        (seq, ["--input-shape", "x=4:2,4"], "is not a dimension (D, or a range MIN:MAX with MIN <= MAX)"),
        (seq, [], "pass --input-shape x=D0,D1,... (a dimension may be a range MIN:MAX) or --dim T=MIN:MAX"),
        (conv, ["--dim", "H=2:16"], "the window of 3 does not fit an input of 2 with the pads; the range must start at 3"),
        (conv_same, ["--dim", "H=3:16"], "with auto_pad SAME_UPPER: the padding would depend on the run's size"),
        (conv_c, ["--dim", "C=1:4"], "Conv takes run-time batch and spatial dimensions only"),
        (resize_third, ["--dim", "H=3:16"], "resized by 0.3"),
        (two, ["--dim", "T=1:8"], "one is computed from the data"),
        (convt_shape, ["--dim", "T=2:4"], "with output_shape: the output size would not follow")):
    r = run([path, "-o", os.path.join(work, "dims"), "--target", "x86-64-avx2"] + args)
    check(r.returncode in (1, 2) and want in r.stderr,
          f"{os.path.basename(path)} {' '.join(args)}: exit {r.returncode}, {r.stderr.strip()[-200:]!r}")

print(f"{(25 - failures)} passed, {failures} failed")
sys.exit(1 if failures else 0)
