#!/usr/bin/python3
"""Real accuracy of int8 quantization (ctest accuracy/make, the fixture of
<target>/accuracy/digits): trains a small CNN on the handwritten digits that
ship with scikit-learn (sklearn.datasets.load_digits(): 1797 8x8 images,
pixels 0..16 scaled to 0..1), exports it to ONNX, quantizes it statically
(quantize_static.py: min/max calibration on the whole training split) and
writes what run_digits.py needs to measure both models on a target.

Split: sklearn's train_test_split, 360 test images, stratified,
random_state 0. Model: Conv 1->8 3x3 pad 1, ReLU, Conv 8->16 3x3 stride 2
pad 1, ReLU, MaxPool 2, Flatten, Gemm 64->10 (logits). Training: Adam with
a one-cycle schedule, seeded, one thread, deterministic algorithms: a few
seconds on one core.

Writes into OUTDIR:
  fp32.onnx, int8.onnx   the float model and its QDQ form; input "image"
                         [N,1,8,8] (N symbolic), output "logits" [N,10]
  test_images.bin        the test split, float32 [360,1,8,8], raw (the
                         runner's --in)
  expected.npz           labels, PyTorch's logits of the float model, and
                         the QDQ model's logits run here as the ONNX
                         definition (Q/DQ in float, round half to even)
  summary.txt            training, quantization and reference accuracies
Usage: make_digits.py OUTDIR"""
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python_helpers", "training"))
from quantize_static import quantize_static, run_graph  # noqa: E402
import seeded  # noqa: E402

TEST_COUNT = 360
EPOCHS = 20
BATCH = 32


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        n = torch.nn
        self.features = n.Sequential(n.Conv2d(1, 8, 3, padding=1), n.ReLU(),
                                      n.Conv2d(8, 16, 3, stride=2, padding=1), n.ReLU(), n.MaxPool2d(2))
        self.head = n.Linear(64, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def train(x, y):
    return seeded.train(Net(), x, y, EPOCHS, BATCH)


def accuracy(logits, labels):
    return 100.0 * float((np.argmax(logits, axis=1) == labels).mean())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeded.deterministic(0)

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]  # exact: k/16
    labels = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(images, labels, test_size=TEST_COUNT, random_state=0,
                                                        stratify=labels)

    t0 = time.monotonic()
    model = train(torch.from_numpy(x_train), torch.from_numpy(y_train))
    seconds = time.monotonic() - t0
    with torch.no_grad():
        torch_logits = model(torch.from_numpy(x_test)).numpy()
        train_acc = accuracy(model(torch.from_numpy(x_train)).numpy(), y_train)

    fp32, int8 = os.path.join(out, "fp32.onnx"), os.path.join(out, "int8.onnx")
    torch.onnx.export(model, torch.from_numpy(x_test[:1]), fp32, opset_version=13, input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}})
    t1 = time.monotonic()
    qsummary = quantize_static(fp32, {"image": x_train}, int8)
    qseconds = time.monotonic() - t1

    # The references: the float model as exported (must agree with
    # PyTorch) and the QDQ model as the ONNX definition.
    onnx_logits = run_graph(onnx.load(fp32), {"image": x_test})["logits"]
    qdq_logits = run_graph(onnx.load(int8), {"image": x_test})["logits"]
    if np.abs(onnx_logits - torch_logits).max() > 1e-4:
        sys.exit("make_digits: the exported ONNX model disagrees with PyTorch")
    x_test.tofile(os.path.join(out, "test_images.bin"))
    # Calibration input sets for tinyrt's own `--quantize static` (ONNX test
    # layout, batches of the test split's size): the training digits.
    n = len(x_test)
    starts = list(range(0, len(x_train) - n + 1, n)) + [len(x_train) - n]
    for k, s in enumerate(starts):
        d = os.path.join(out, "calibration", f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x_train[s:s + n], "image").SerializeToString())
    np.savez(os.path.join(out, "expected.npz"), labels=y_test, torch_logits=torch_logits, qdq_logits=qdq_logits)

    lines = [
        f"{sum(p.numel() for p in model.parameters())} parameters, trained on {len(x_train)} digits "
        f"({EPOCHS} epochs) in {seconds:.1f} s: train accuracy {train_acc:.2f}%",
        f"quantized in {qseconds:.1f} s (min/max over the {len(x_train)} training digits): {qsummary}",
        f"test split ({len(y_test)} digits): PyTorch fp32 {accuracy(torch_logits, y_test):.2f}%, "
        f"QDQ reference int8 {accuracy(qdq_logits, y_test):.2f}%",
    ]
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join("make_digits: " + s for s in lines))


if __name__ == "__main__":
    main()
