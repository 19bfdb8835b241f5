#!/usr/bin/python3
"""Makes the examples' model: a small CNN trained here, in a few seconds on
one CPU core, on the handwritten digits that ship with scikit-learn
(sklearn.datasets.load_digits(): 1797 8x8 grey images of 0..9). It uses
the building blocks of real edge models: conv + batch norm + ReLU, a
residual block, max pooling, a depthwise conv with ReLU6, a pointwise conv,
global average pooling, a linear layer and softmax. Input 1x1x8x8 (pixels
0..16 scaled to 0..1), output 1x10 class probabilities.

Training is deterministic (fixed seeds, one thread, deterministic
algorithms): model.onnx and demo_data.h come out byte-identical on every
run on a machine. 360 images, picked by a fixed permutation, are held back from
training as the test set.

Writes into OUTDIR:
  demo/model.onnx, demo/test_data_set_0/{input_0,output_0}.pb  (ONNX test layout)
  training.txt  one line: parameters, training time, accuracy
  demo_data.h   C arrays, so that the examples can check themselves
                without a file system:
                  demo_input, demo_expected: the reference input (the first
                    held-back image) and PyTorch's output for it;
                  with DEMO_DATA_TEST_SET defined before the #include, also
                  the held-back test set: DEMO_TEST_COUNT images
                  demo_test_images[i][DEMO_TEST_PIXELS] (floats, 0..1),
                  demo_test_labels[i], PyTorch's predictions
                  demo_test_torch_pred[i] and DEMO_TEST_TORCH_CORRECT.
Usage: make_demo_model.py OUTDIR"""
import os
import sys
import time

import numpy as np
import torch
from onnx import numpy_helper
from sklearn.datasets import load_digits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python_helpers", "training"))
import seeded  # noqa: E402

TEST_COUNT = 360
EPOCHS = 15
BATCH = 64


class Demo(torch.nn.Module):
    def __init__(self):
        super().__init__()
        n = torch.nn
        self.stem = n.Sequential(n.Conv2d(1, 16, 3, padding=1), n.BatchNorm2d(16), n.ReLU())
        self.block = n.Sequential(n.Conv2d(16, 16, 3, padding=1), n.BatchNorm2d(16), n.ReLU(),
                                  n.Conv2d(16, 16, 3, padding=1), n.BatchNorm2d(16))
        self.pool = n.MaxPool2d(2)
        self.dw = n.Sequential(n.Conv2d(16, 16, 3, padding=1, groups=16), n.ReLU6(),
                               n.Conv2d(16, 32, 1), n.BatchNorm2d(32), n.ReLU())
        self.head = n.Linear(32, 10)

    def logits(self, x):
        x = self.stem(x)
        x = self.pool(torch.relu(x + self.block(x)))
        x = self.dw(x)
        return self.head(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))

    def forward(self, x):
        return torch.softmax(self.logits(x), dim=1)


def c_float(v):
    s = f"{v:.9g}"
    return s + ("f" if any(c in s for c in ".e") else ".f")  # 0 -> "0.f", a valid float literal


def c_floats(arr):
    return ", ".join(c_float(v) for v in arr.ravel())


def c_array(name, arr):
    return f"static const float {name}[{arr.size}] = {{{c_floats(arr)}}};\n"


def train(x, y):
    model = Demo()
    return seeded.train(model, x, y, EPOCHS, BATCH, logits=model.logits)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    seeded.deterministic(7)

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)  # exact: k/16
    labels = digits.target.astype(np.int64)
    perm = np.random.RandomState(0).permutation(len(images))
    test, tr = perm[:TEST_COUNT], perm[TEST_COUNT:]
    x_train = torch.from_numpy(images[tr]).unsqueeze(1)
    y_train = torch.from_numpy(labels[tr])
    x_test = torch.from_numpy(images[test]).unsqueeze(1)
    y_test = labels[test]

    t0 = time.monotonic()
    model = train(x_train, y_train)
    seconds = time.monotonic() - t0
    with torch.no_grad():
        prob = model(x_test)
        train_acc = (model(x_train).argmax(1) == y_train).float().mean().item()
    pred = prob.argmax(1).numpy()
    correct = int((pred == y_test).sum())
    summary = (f"{sum(p.numel() for p in model.parameters())} parameters, trained on {len(tr)} digits "
               f"({EPOCHS} epochs) in {seconds:.1f} s: train accuracy {100 * train_acc:.1f}%, "
               f"held-back {correct}/{TEST_COUNT} = {100 * correct / TEST_COUNT:.1f}%")
    print("make_demo_model: " + summary)

    x = x_test[:1]
    with torch.no_grad():
        y = model(x).numpy()
    case = os.path.join(out, "demo")
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    torch.onnx.export(model, x, os.path.join(case, "model.onnx"), opset_version=13,
                      input_names=["image"], output_names=["probabilities"])
    for fname, arr, tname in (("input_0.pb", x.numpy(), "image"), ("output_0.pb", y, "probabilities")):
        with open(os.path.join(data, fname), "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(arr), tname).SerializeToString())
    with open(os.path.join(out, "training.txt"), "w") as f:
        f.write(summary + "\n")
    with open(os.path.join(out, "demo_data.h"), "w") as f:
        f.write("/* Generated by examples/models/make_demo_model.py: the digits classifier's\n"
                " * reference input (the first held-back image) and PyTorch's output for it;\n"
                " * with DEMO_DATA_TEST_SET defined, the held-back test set too. */\n"
                "#ifndef DEMO_DATA_H_\n#define DEMO_DATA_H_\n")
        f.write(c_array("demo_input", x.numpy()))
        f.write(c_array("demo_expected", y))
        f.write("#ifdef DEMO_DATA_TEST_SET\n")
        f.write(f"#define DEMO_TEST_COUNT {TEST_COUNT}\n#define DEMO_TEST_PIXELS 64\n")
        f.write(f"/* PyTorch classifies this many of them correctly. */\n"
                f"#define DEMO_TEST_TORCH_CORRECT {correct}\n")
        f.write("/* sklearn.datasets.load_digits() images (pixels / 16), labels, and\n"
                " * PyTorch's predicted classes. */\n")
        f.write("static const float demo_test_images[DEMO_TEST_COUNT][DEMO_TEST_PIXELS] = {\n")
        for img in x_test.numpy():
            f.write(f"  {{{c_floats(img)}}},\n")
        f.write("};\n")
        f.write("static const unsigned char demo_test_labels[DEMO_TEST_COUNT] = {"
                + ", ".join(str(v) for v in y_test) + "};\n")
        f.write("static const unsigned char demo_test_torch_pred[DEMO_TEST_COUNT] = {"
                + ", ".join(str(v) for v in pred) + "};\n")
        f.write("#endif\n#endif\n")


if __name__ == "__main__":
    main()
