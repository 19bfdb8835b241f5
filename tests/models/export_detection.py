#!/usr/bin/python3
"""Detection with non-maximum suppression in the graph (issue 26):
torchvision's SSDlite320-MobileNetV3 with random weights and its whole
post-processing (per-class score threshold -> NonZero, top-k with
k = min(candidates, 300), batched NMS, the best 300), exported to ONNX
with PyTorch's tracer, in the ONNX backend-test layout:
  OUT/ssdlite320/model.onnx, OUT/ssdlite320/test_data_set_K/{input_0,
  output_0..2}.pb (boxes [K, 4], scores [K], labels [K]; K data-dependent).
Random weights give every anchor the same scores (ties no two runtimes
order alike): the batch-norm statistics are measured on a few images and
the classification head's logits widened, so that scores differ and the
detections depend on the image. Images: smooth random blobs.

Usage: export_detection.py OUTDIR [--sets N]

Nothing here is committed; the build runs it (tests/CMakeLists.txt)."""
import os
import sys

import numpy as np
import torch
import torchvision
from onnx import numpy_helper


def image(rng, size=320):
    yy, xx = np.mgrid[0:size, 0:size] / float(size)
    img = np.zeros((3, size, size))
    for _ in range(12):
        cy, cx, r = rng.uniform(0, 1, 3)
        c = rng.uniform(-1, 1, 3)
        img += c[:, None, None] * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (0.02 + 0.05 * r))[None]
    return torch.tensor((img - img.min()) / (img.max() - img.min()), dtype=torch.float32)


def ssdlite():
    torch.manual_seed(26)
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    with torch.no_grad():
        for head, scale, spread in ((m.head.classification_head, 40.0, 2.0), (m.head.regression_head, 1.0, 0.5)):
            for blk in head.module_list:
                last = blk[-1] if isinstance(blk, torch.nn.Sequential) else blk
                last.weight.mul_(scale)
                last.bias.normal_(0, spread)
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.momentum = None  # a plain average over the batches below
                mod.reset_running_stats()
        m.train()
        rng = np.random.default_rng(9)
        m.backbone(m.transform([image(rng) for _ in range(8)])[0].tensors)
    return m.eval()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = os.path.join(sys.argv[1], "ssdlite320")
    sets = int(sys.argv[sys.argv.index("--sets") + 1]) if "--sets" in sys.argv else 2
    os.makedirs(out, exist_ok=True)
    m = ssdlite()
    rng = np.random.default_rng(5)
    images = [image(rng) for _ in range(sets)]
    torch.onnx.export(m, ([images[0]],), os.path.join(out, "model.onnx"), opset_version=13, input_names=["image"],
                      output_names=["boxes", "scores", "labels"])
    for k, x in enumerate(images):
        with torch.no_grad():
            det = m([x])[0]
        d = os.path.join(out, "test_data_set_%d" % k)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "input_0.pb"), "wb").write(numpy_helper.from_array(x.numpy(), "image").SerializeToString())
        for i, name in enumerate(("boxes", "scores", "labels")):
            t = numpy_helper.from_array(det[name].numpy(), name)
            open(os.path.join(d, "output_%d.pb" % i), "wb").write(t.SerializeToString())
        print("set %d: %d detections, best score %.4f" % (k, len(det["scores"]), float(det["scores"].max())))


if __name__ == "__main__":
    main()
