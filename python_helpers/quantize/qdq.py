"""The QDQ writer shared by bench/make_qdq.py and tests/accuracy/: rewrites a
float ONNX model (opset >= 13) into the QDQ format ONNX Runtime's static
quantizer writes (QuantFormat.QDQ), given a calibrated (min, max) range for
every float activation. No ONNX Runtime: onnx and numpy only. Calibration
is the caller's (bench/make_qdq.py runs onnxruntime-node; the accuracy test
runs the float model in PyTorch), so that either can be replaced -- e.g. by
a `tinyrt-compile --quantize static` -- without touching the other.

- Activations: uint8, asymmetric, per tensor: scale = (max - min) / 255,
  zero point = round(-min / scale), every range widened to include 0.
- Weights: int8, symmetric (zero point 0, scale = max|w| / 127, values in
  [-127, 127]), per output channel (Conv W axis 0, ConvTranspose W axis 1,
  MatMul B [K,N] axis 1,
  Gemm B axis 0 with transB=1, else 1), or per tensor; initializer inputs
  of Add/Mul are quantized per tensor like weights.
- Biases (Conv input 2, Gemm C when 1-D): int32, scale = x_scale * w_scale,
  zero point 0.
- Quantized ops: Conv, ConvTranspose, Gemm, MatMul, Add, Mul, Concat, MaxPool,
  AveragePool, GlobalAveragePool, Relu, Clip, Sigmoid, HardSigmoid,
  HardSwish, Resize, Flatten, Reshape: their float inputs and outputs get
  Q/DQ. Flatten, Reshape and MaxPool outputs share their input's scale and
  zero point; a Concat's inputs and output all share one. A Relu or Clip
  whose input comes from a quantized op and feeds nothing else is removed,
  its range given to that input (ORT's QDQRemovableActivation), unless a
  shared range would then lose the clip. Other ops stay float, reading
  quantized tensors through DequantizeLinear and quantized after if a
  quantized op reads them.
- One QuantizeLinear per quantized tensor, one DequantizeLinear per
  consumer (graph outputs keep their names, produced by a last DQ).

Use: prepare(model) (folds Constant nodes and Identity nodes of
initializers; returns the float tensors to calibrate), calibrate those
tensors' ranges on the prepared model, then quantize(model, ranges,
floats)."""
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

QUANTIZED_OPS = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Mul", "Concat", "MaxPool", "AveragePool", "GlobalAveragePool",
                 "Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Resize", "Flatten", "Reshape"}
SHARE_INPUT_SCALE = {"MaxPool", "Flatten", "Reshape"}
REMOVABLE_ACTIVATIONS = {"Relu", "Clip"}


# ------------------------------------------------------------- preparation

def fold_constants(graph):
    """Constant nodes, and Identity nodes of initializers, become
    initializers (the quantizer treats only initializers as weights)."""
    inits = {i.name: i for i in graph.initializer}
    outputs = {o.name for o in graph.output}
    keep = []
    for node in graph.node:
        value = None
        if node.op_type == "Constant" and len(node.attribute) == 1:
            a = node.attribute[0]
            if a.name == "value":
                value = numpy_helper.to_array(a.t)
            elif a.name in ("value_float", "value_floats"):
                value = np.array(helper.get_attribute_value(a), np.float32)
            elif a.name in ("value_int", "value_ints"):
                value = np.array(helper.get_attribute_value(a), np.int64)
        elif node.op_type == "Identity" and node.input[0] in inits and node.output[0] not in outputs:
            value = numpy_helper.to_array(inits[node.input[0]])
        if value is None:
            keep.append(node)
            continue
        t = numpy_helper.from_array(value, node.output[0])
        graph.initializer.append(t)
        inits[t.name] = t
    del graph.node[:]
    graph.node.extend(keep)


def float_tensors(model):
    """Names of the float32 tensors of the graph (after shape inference)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    return {v.name for v in list(g.input) + list(g.value_info) + list(g.output)
            if v.type.tensor_type.elem_type == TensorProto.FLOAT}


def used_names(nodes):
    """Tensor names that nodes (and the subgraphs of their attributes) read."""
    used = set()
    for n in nodes:
        used.update(n.input)
        for a in n.attribute:
            for g in list(a.graphs) + ([a.g] if a.HasField("g") else []):
                used |= used_names(g.node)
    return used


def graph_inputs(graph):
    inits = {i.name for i in graph.initializer}
    return [i for i in graph.input if i.name not in inits]

# ------------------------------------------------------------- quantization

def widen(lo, hi):
    """A calibrated range widened to include 0."""
    return min(lo, 0.0), max(hi, 0.0)


def activation_params(lo, hi):
    """uint8 asymmetric scale and zero point of a range widened to include 0."""
    lo, hi = widen(lo, hi)
    scale = np.float32((hi - lo) / 255)
    if scale == 0:
        return np.float32(1.0), np.uint8(0)
    return scale, np.uint8(np.clip(np.rint(-lo / np.float64(scale)), 0, 255))


def weight_params(w, axis, qmax=127):
    """int8 symmetric quantization, per channel along axis (None: per tensor),
    into [-qmax, qmax] (63: 7 bits, ONNX Runtime's reduce_range)."""
    if axis is None:
        scale = np.array(np.abs(w).max(initial=0) / qmax, np.float32)
    else:
        red = tuple(i for i in range(w.ndim) if i != axis)
        scale = (np.abs(w).max(axis=red, initial=0) / qmax).astype(np.float32)
    scale = np.where(scale == 0, np.float32(1.0), scale).astype(np.float32)
    s = scale if axis is None else scale.reshape([-1 if i == axis else 1 for i in range(w.ndim)])
    q = np.clip(np.rint(w.astype(np.float64) / s), -qmax, qmax).astype(np.int8)
    return q, scale


class Groups:
    """Union-find of tensors that share one scale and zero point."""

    def __init__(self):
        self.parent = {}

    def find(self, t):
        self.parent.setdefault(t, t)
        while self.parent[t] != t:
            self.parent[t] = self.parent[self.parent[t]]
            t = self.parent[t]
        return t

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)


class Quantizer:
    def __init__(self, model, ranges, floats, per_channel, weight_max=127):
        self.weight_max = weight_max
        self.graph = model.graph
        self.ranges, self.floats, self.per_channel = ranges, floats, per_channel
        self.inits = {i.name: i for i in self.graph.initializer}
        self.outputs = {o.name for o in self.graph.output}
        self.reset()

    def reset(self):
        self.groups = Groups()
        self.acts = set()  # activations to quantize
        self.slots = {}  # (node index, input index) -> ("weight", axis) or ("bias", x)

    def consumers(self):
        c = {}
        for n in self.graph.node:
            for t in n.input:
                c[t] = c.get(t, 0) + 1
        return c

    def quantizable(self, t):
        return t in self.floats and t not in self.inits and t in self.ranges

    def remove_activations(self):
        """Relu/Clip after an op whose output is quantized, as its only
        consumer: the op writes the activation's output directly, quantized
        with the activation's range (ORT's try_replacing_upstream_output),
        whose saturation does the clipping. Not where that would lose the
        clip: a Relu whose output shares a range reaching below 0 (a Concat
        with other inputs), a Clip whose output shares any other range, or
        an op whose output shares its input's range. Needs plan() first,
        and plan() again after."""
        group_range = self.group_ranges()
        producer = {t: n for n in self.graph.node for t in n.output}
        count = self.consumers()
        kept = []
        removed = set()
        for n in self.graph.node:
            if n.op_type not in REMOVABLE_ACTIVATIONS or n.output[0] not in self.acts:
                kept.append(n)
                continue
            up = producer.get(n.input[0])
            shared = group_range[self.groups.find(n.output[0])]
            own = widen(*self.ranges[n.output[0]])
            if (up is not None and id(up) not in removed and up.op_type in QUANTIZED_OPS
                    and up.op_type not in SHARE_INPUT_SCALE and up.op_type != "Concat"
                    and count[n.input[0]] == 1 and n.input[0] not in self.outputs and self.quantizable(n.input[0])
                    and (shared == own or (n.op_type == "Relu" and shared[0] == 0.0))):
                up.output[list(up.output).index(n.input[0])] = n.output[0]
                producer[n.output[0]] = up
                removed.add(id(n))
                continue
            kept.append(n)
        del self.graph.node[:]
        self.graph.node.extend(kept)
        return len(removed)

    def act(self, t):
        if self.quantizable(t):
            self.acts.add(t)
            self.groups.find(t)
            return True
        return False

    def weight_axis(self, node, i):
        if not self.per_channel:
            return None
        w = self.inits[node.input[i]]
        if node.op_type == "Conv":
            return 0
        if node.op_type == "ConvTranspose":
            return 1  # W [IC, OC/group, k...]: per output channel
        if node.op_type == "Gemm":
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            return 0 if trans_b else 1
        return len(w.dims) - 1 if len(w.dims) >= 2 else None  # MatMul B [.., K, N]: per column

    def is_float_init(self, t):
        return t in self.inits and self.inits[t].data_type == TensorProto.FLOAT

    def plan(self):
        for k, n in enumerate(self.graph.node):
            op = n.op_type
            if op not in QUANTIZED_OPS:
                continue
            if op in ("Conv", "ConvTranspose", "Gemm", "MatMul"):
                for i, t in enumerate(n.input[:2]):
                    if i == 1 and self.is_float_init(t):
                        self.slots[(k, i)] = ("weight", self.weight_axis(n, i))
                    elif i == 0 and op == "MatMul" and self.is_float_init(t):
                        self.slots[(k, i)] = ("weight", None)
                    else:
                        self.act(t)
                if len(n.input) > 2 and n.input[2] and self.is_float_init(n.input[2]) \
                        and n.input[0] in self.acts and (k, 1) in self.slots:
                    b = self.inits[n.input[2]]
                    w = self.inits[n.input[1]]
                    axis = self.slots[(k, 1)][1]
                    n_out = w.dims[axis] if axis is not None else None
                    if len(b.dims) == 1 and (n_out is None or b.dims[0] == n_out):
                        self.slots[(k, 2)] = ("bias", n.input[0])
            elif op in ("Add", "Mul"):
                for i, t in enumerate(n.input):
                    if self.is_float_init(t):
                        self.slots[(k, i)] = ("weight", None)
                    else:
                        self.act(t)
            elif op == "Concat":
                ins = [t for t in n.input if self.act(t)]
                if self.act(n.output[0]):
                    for t in ins:
                        self.groups.union(t, n.output[0])
                continue
            else:  # one data input
                if self.act(n.input[0]) and op in SHARE_INPUT_SCALE and self.act(n.output[0]):
                    self.groups.union(n.output[0], n.input[0])
                    continue
            self.act(n.output[0])

    def group_ranges(self):
        """The union of the (0-including) ranges of each group's tensors."""
        lo, hi = {}, {}
        for t in self.acts:
            g = self.groups.find(t)
            r = widen(*self.ranges[t])
            lo[g], hi[g] = min(lo.get(g, r[0]), r[0]), max(hi.get(g, r[1]), r[1])
        return {g: (lo[g], hi[g]) for g in lo}

    def group_params(self):
        """Scale and zero point per group."""
        return {g: activation_params(*r) for g, r in self.group_ranges().items()}

    def build(self):
        params = self.group_params()
        new_inits, nodes = [], []
        names = {i.name for i in self.graph.initializer} | {t for n in self.graph.node for t in n.output}

        def unique(name):
            base, k = name, 1
            while name in names:
                name, k = f"{base}_{k}", k + 1
            names.add(name)
            return name

        def init(arr, name):
            name = unique(name)
            new_inits.append(numpy_helper.from_array(arr, name))
            return name

        qparam_names = {}

        def qparams(t):
            g = self.groups.find(t)
            if g not in qparam_names:
                scale, zp = params[g]
                qparam_names[g] = (init(np.array(scale), g + "_scale"), init(np.array(zp), g + "_zero_point"))
            return qparam_names[g]

        quantized = {}  # activation -> its QuantizeLinear output

        def quantize(t, src):
            s, z = qparams(t)
            q = unique(t + "_quantized")
            nodes.append(helper.make_node("QuantizeLinear", [src, s, z], [q], name=unique(t + "_QuantizeLinear")))
            quantized[t] = q

        def dequantize(t, out=None):
            s, z = qparams(t)
            out = out or unique(t + "_DequantizeLinear_Output")
            nodes.append(helper.make_node("DequantizeLinear", [quantized[t], s, z], [out],
                                          name=unique(t + "_DequantizeLinear")))
            return out

        qweights = {}  # (initializer, axis) -> (q, scale, names)

        def weight(t, axis):
            if (t, axis) not in qweights:
                q, scale = weight_params(numpy_helper.to_array(self.inits[t]), axis, self.weight_max)
                zp = np.zeros(scale.shape, np.int8)
                qweights[(t, axis)] = (scale, [init(q, t + "_quantized"), init(scale, t + "_scale"),
                                               init(zp, t + "_zero_point")])
            return qweights[(t, axis)]

        def dq_node(ins, out_base, axis):
            out = unique(out_base + "_DequantizeLinear_Output")
            kw = {"axis": axis} if axis is not None else {}
            nodes.append(helper.make_node("DequantizeLinear", ins, [out], name=unique(out_base + "_DequantizeLinear"),
                                          **kw))
            return out

        graph_outs = {}  # quantized graph output -> the name its producer now writes
        for i in graph_inputs(self.graph):
            if i.name in self.acts:
                quantize(i.name, i.name)
        for k, n in enumerate(self.graph.node):
            w_scale = None
            for i, t in enumerate(n.input):
                slot = self.slots.get((k, i))
                if slot and slot[0] == "weight":
                    w_scale, ins = weight(t, slot[1])
                    n.input[i] = dq_node(ins, t, slot[1] if w_scale.ndim else None)
                elif slot and slot[0] == "bias":
                    b_scale = (params[self.groups.find(slot[1])][0] * w_scale).astype(np.float32)
                    b_scale = np.where(b_scale == 0, np.float32(1.0), b_scale).astype(np.float32)
                    b = numpy_helper.to_array(self.inits[t]).astype(np.float64)
                    q = np.clip(np.rint(b / b_scale.astype(np.float64)), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
                    ins = [init(q, t + "_quantized"), init(b_scale, t + "_quantized_scale"),
                           init(np.zeros(b_scale.shape, np.int32), t + "_quantized_zero_point")]
                    n.input[i] = dq_node(ins, t, 0 if b_scale.ndim else None)
                elif t in quantized:
                    n.input[i] = dequantize(t)
            nodes.append(n)
            for j, t in enumerate(n.output):
                if t in self.acts:
                    if t in self.outputs:
                        graph_outs[t] = n.output[j] = unique(t + "_float")
                    quantize(t, n.output[j])
        for t in graph_outs:
            dequantize(t, out=t)
        used = used_names(nodes) | {o.name for o in self.graph.output}
        keep = [i for i in self.graph.initializer if i.name in used]  # what DQs and folded Relu/Clip left
        del self.graph.initializer[:]
        self.graph.initializer.extend(keep + new_inits)
        del self.graph.node[:]
        self.graph.node.extend(nodes)
        del self.graph.value_info[:]
        return len(quantized), len(qweights)


# ------------------------------------------------------------- entry points

def prepare(model):
    """Checks the opset, folds constants in place; returns the names of the
    float tensors whose ranges quantize() needs (graph inputs and node
    outputs among them)."""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 13:
        raise ValueError(f"opset {opset}; QDQ with per-channel axes needs opset >= 13")
    fold_constants(model.graph)
    return float_tensors(model)


def quantize(model, ranges, floats, per_channel=True, weight_max=127):
    """Rewrites the prepared model in place into QDQ form. ranges: {tensor:
    (min, max)} calibrated on the prepared model; floats: from prepare().
    Returns (quantized activations, quantized weights, Relu/Clip folded)."""
    q = Quantizer(model, ranges, floats, per_channel, weight_max)
    q.plan()
    removed = q.remove_activations()
    q.reset()
    q.plan()
    n_act, n_w = q.build()
    onnx.checker.check_model(model)
    return n_act, n_w, removed


def summary(model):
    """A one-line count of the QDQ model's Q and DQ nodes."""
    ops = {}
    for n in model.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    return (f"{ops.get('QuantizeLinear', 0)} QuantizeLinear, {ops.get('DequantizeLinear', 0)} DequantizeLinear, "
            f"{len(model.graph.node)} nodes")
