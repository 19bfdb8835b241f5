#!/usr/bin/python3
"""Exports torchvision models with random weights to ONNX (opset 13, input
1x3x224x224) in the ONNX backend-test layout, with PyTorch's output as the
reference:  OUT/<model>/model.onnx, OUT/<model>/test_data_set_0/{input_0,output_0}.pb

Usage: export_torchvision.py OUTDIR [MODEL ...]

Weights are random (seeded), batch-norm statistics too, so that folding
them is exercised. Nothing here is committed; the build runs it."""
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

MODELS = ["squeezenet1_1", "resnet18", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_x0_5", "googlenet"]


def build(name):
    kwargs = {"weights": None}
    if name == "googlenet":
        kwargs.update(aux_logits=False, init_weights=True)
    model = getattr(torchvision.models, name)(**kwargs)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    return model.eval()


def write_case(model, x, out_dir, name, input_names=("input",)):
    """Exports `model` at input `x` as OUT/<name> in the backend-test layout,
    with PyTorch's output as the reference. Shared with export_zoo.py.
    Several inputs: `x` is a list of input tuples, one data set each
    (exported at the first)."""
    case = os.path.join(out_dir, name)
    path = os.path.join(case, "model.onnx")
    sets = x if isinstance(x, list) else [(x,)]
    os.makedirs(case, exist_ok=True)
    torch.onnx.export(model, sets[0] if len(sets[0]) > 1 else sets[0][0], path, opset_version=13,
                      input_names=list(input_names), output_names=["output"], do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    for k, ins in enumerate(sets):
        data = os.path.join(case, f"test_data_set_{k}")
        os.makedirs(data, exist_ok=True)
        # With autograd on, as the export traced it (no_grad would let PyTorch
        # take fused fast paths, e.g. in transformer layers, that were not traced).
        y = model(*ins).detach().numpy()
        arrays = [(f"input_{i}.pb", t.numpy(), n) for i, (t, n) in enumerate(zip(ins, input_names))]
        for fname, arr, tname in arrays + [("output_0.pb", y, "output")]:
            t = numpy_helper.from_array(np.ascontiguousarray(arr), tname)
            with open(os.path.join(data, fname), "wb") as f:
                f.write(t.SerializeToString())
    print(f"exported {name}: {path}", flush=True)


def export(name, out_dir):
    torch.manual_seed(0)
    model = build(name)
    write_case(model, torch.rand(1, 3, 224, 224), out_dir, name)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    names = sys.argv[2:] or MODELS
    torch.set_num_threads(1)
    for name in names:
        if name not in MODELS:
            sys.exit(f"unknown model {name}; known: {' '.join(MODELS)}")
        if os.path.exists(os.path.join(out_dir, name, "test_data_set_0", "output_0.pb")):
            continue
        export(name, out_dir)


if __name__ == "__main__":
    main()
