#!/usr/bin/python3
"""Makes the detection example's model: a small YOLO-style detector trained
here (about half a minute on one CPU core) to find squares and disks in
64x64 colour pictures, with its post-processing in the graph.

  image [1, 3, 64, 64] (RGB, 0..1)
    -> four conv + batch norm + ReLU stages, three max pools: an 8x8 grid
    -> a 1x1 conv: per cell objectness, box (x, y, w, h) and class logits
    -> boxes decoded (cell offset + sigmoid, anchor * exp), scores =
       sigmoid(objectness) * sigmoid(class)
    -> NonMaxSuppression (center boxes, per class at most 8, IoU 0.45,
       score 0.35) -> Gather / GatherND
    -> boxes [K, 4] (x0, y0, x1, y1 in pixels), scores [K], classes [K]

K, the number of detections, depends on the picture (0 .. 2 x 8): the
outputs' first dimension is a run-time one (docs/ABI.md). Pictures: a
dark noisy background and one to four shapes of random colour and size
(12..28 pixels). Training is deterministic (fixed seeds, one thread).

Writes into OUTDIR:
  detector/model.onnx, detector/test_data_set_K/{input_0, output_0..2}.pb
  detector/picture0.ppm   the first test picture, for `detect FILE`
  detector_training.txt   one line: parameters, training time, detections
  detector_data.h         the test pictures (uint8 RGB, channels first)
                          and PyTorch's detections of each, so that the
                          example checks itself without a file system
Usage: make_detector.py OUTDIR"""
import os
import sys
import time

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python_helpers", "training"))
import seeded  # noqa: E402

SIZE, GRID, CLASSES, ANCHOR = 64, 8, 2, 20.0
STRIDE = SIZE // GRID
MAX_PER_CLASS, IOU, SCORE = 8, 0.45, 0.35
TEST_COUNT = 4
STEPS, BATCH = 350, 32
NAMES = ("square", "disk")


def picture(rng):
    """A uint8 [3, SIZE, SIZE] picture and its objects [(class, cx, cy, w, h)]."""
    img = rng.uniform(0, 50, (3, SIZE, SIZE))
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] + 0.5
    objs = []
    for _ in range(rng.integers(1, 5)):
        cls = int(rng.integers(0, CLASSES))
        s = rng.uniform(12, 28)
        cx, cy = rng.uniform(s / 2, SIZE - s / 2, 2)
        if cls == 0:
            inside = (abs(xx - cx) <= s / 2) & (abs(yy - cy) <= s / 2)
        else:
            inside = (xx - cx) ** 2 + (yy - cy) ** 2 <= (s / 2) ** 2
        colour = rng.uniform(90, 255, 3)
        img[:, inside] = colour[:, None]
        objs.append((cls, cx, cy, s, s))
    return np.clip(img, 0, 255).astype(np.uint8), objs


class Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        n = torch.nn

        def stage(i, o):
            return [n.Conv2d(i, o, 3, padding=1), n.BatchNorm2d(o), n.ReLU()]

        self.body = n.Sequential(*stage(3, 12), n.MaxPool2d(2), *stage(12, 24), n.MaxPool2d(2), *stage(24, 48),
                                 n.MaxPool2d(2), *stage(48, 64))
        self.head = n.Conv2d(64, 5 + CLASSES, 1)
        gy, gx = torch.meshgrid(torch.arange(GRID), torch.arange(GRID), indexing="ij")
        self.register_buffer("grid", torch.stack([gx, gy], -1).reshape(1, GRID * GRID, 2).float())

    def raw(self, x):  # [B, cells, 5 + C]
        return self.head(self.body(x)).flatten(2).transpose(1, 2)

    def forward(self, x):
        p = self.raw(x)
        xy = (self.grid + torch.sigmoid(p[..., 0:2])) * STRIDE
        wh = ANCHOR * torch.exp(p[..., 2:4])
        centre = torch.cat([xy, wh], -1)  # [1, cells, 4]
        corners = torch.cat([xy - wh / 2, xy + wh / 2], -1)[0]  # [cells, 4]
        scores = (torch.sigmoid(p[..., 4:5]) * torch.sigmoid(p[..., 5:])).transpose(1, 2)  # [1, C, cells]
        return centre, corners, scores


def targets(objs_list):
    """Per cell: objectness, (x, y) offset in the cell, log(w, h / anchor), class."""
    n = len(objs_list)
    obj = torch.zeros(n, GRID * GRID)
    box = torch.zeros(n, GRID * GRID, 4)
    cls = torch.zeros(n, GRID * GRID, CLASSES)
    for i, objs in enumerate(objs_list):
        for c, cx, cy, w, h in objs:
            gx, gy = min(int(cx // STRIDE), GRID - 1), min(int(cy // STRIDE), GRID - 1)
            k = gy * GRID + gx
            obj[i, k] = 1
            box[i, k] = torch.tensor([cx / STRIDE - gx, cy / STRIDE - gy, np.log(w / ANCHOR), np.log(h / ANCHOR)])
            cls[i, k, c] = 1
    return obj, box, cls


def train(model):
    rng = np.random.default_rng(1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=STEPS)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    model.train()
    for _ in range(STEPS):
        batch = [picture(rng) for _ in range(BATCH)]
        x = torch.from_numpy(np.stack([b[0] for b in batch])).float() / 255
        obj, box, cls = targets([b[1] for b in batch])
        p = model.raw(x)
        pos = obj > 0
        loss = bce(p[..., 4], obj) + 5 * torch.nn.functional.mse_loss(torch.sigmoid(p[..., 0:2])[pos], box[pos][:, :2])
        loss = loss + torch.nn.functional.mse_loss(p[..., 2:4][pos], box[pos][:, 2:]) + bce(p[..., 5:][pos], cls[pos])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    model.eval()
    return model


def detections(model, x):
    """The graph's outputs, as ONNX NonMaxSuppression defines them, from
    PyTorch's boxes and scores: per class, by score, at most MAX_PER_CLASS."""
    with torch.no_grad():
        _, corners, scores = model(x)
    boxes, out_scores, classes = [], [], []
    for c in range(CLASSES):
        s = scores[0, c]
        keep = torch.nonzero(s > SCORE).flatten()
        order = keep[torchvision.ops.nms(corners[keep], s[keep], IOU)][:MAX_PER_CLASS]
        boxes.append(corners[order])
        out_scores.append(s[order])
        classes += [c] * len(order)
    return (torch.cat(boxes).numpy(), torch.cat(out_scores).numpy(), np.array(classes, np.int64))


def export(model, path):
    """PyTorch's graph (centre boxes, corners, scores), then NMS and the
    gathers of the kept boxes appended with onnx.helper."""
    x = torch.zeros(1, 3, SIZE, SIZE)
    torch.onnx.export(model, x, path, opset_version=13, input_names=["image"],
                      output_names=["centre", "corners", "class_scores"])
    m = onnx.load(path)
    g = m.graph
    g.initializer.extend([
        numpy_helper.from_array(np.array([MAX_PER_CLASS], np.int64), "max_per_class"),
        numpy_helper.from_array(np.array([IOU], np.float32), "iou_threshold"),
        numpy_helper.from_array(np.array([SCORE], np.float32), "score_threshold"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array(2, np.int64), "two"),
    ])
    g.node.extend([
        helper.make_node("NonMaxSuppression", ["centre", "class_scores", "max_per_class", "iou_threshold",
                                               "score_threshold"], ["selected"], center_point_box=1),
        helper.make_node("Gather", ["selected", "two"], ["cell"], axis=1),
        helper.make_node("Gather", ["corners", "cell"], ["boxes"], axis=0),
        helper.make_node("GatherND", ["class_scores", "selected"], ["scores"]),
        helper.make_node("Gather", ["selected", "one"], ["classes"], axis=1),
    ])
    del g.output[:]
    g.output.extend([helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["K", 4]),
                     helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["K"]),
                     helper.make_tensor_value_info("classes", TensorProto.INT64, ["K"])])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def c_float(v):
    s = f"{v:.9g}"
    return s + ("f" if any(c in s for c in ".e") else ".f")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    seeded.deterministic(26)
    t0 = time.monotonic()
    model = train(Detector())
    seconds = time.monotonic() - t0

    case = os.path.join(out, "detector")
    os.makedirs(case, exist_ok=True)
    export(model, os.path.join(case, "model.onnx"))
    rng = np.random.default_rng(2026)
    tests = [picture(rng) for _ in range(TEST_COUNT)]
    found = 0
    results = []
    for k, (img, objs) in enumerate(tests):
        x = torch.from_numpy(img).float().unsqueeze(0) / 255
        det = detections(model, x)
        results.append(det)
        found += len(det[0])
        d = os.path.join(case, "test_data_set_%d" % k)
        os.makedirs(d, exist_ok=True)
        for name, arr, tname in (("input_0.pb", x.numpy(), "image"), ("output_0.pb", det[0], "boxes"),
                                 ("output_1.pb", det[1], "scores"), ("output_2.pb", det[2], "classes")):
            with open(os.path.join(d, name), "wb") as f:
                f.write(numpy_helper.from_array(np.ascontiguousarray(arr), tname).SerializeToString())
    objects = sum(len(t[1]) for t in tests)
    summary = (f"{sum(p.numel() for p in model.parameters())} parameters, {STEPS} steps of {BATCH} pictures in "
               f"{seconds:.1f} s; {TEST_COUNT} test pictures: {objects} shapes, PyTorch detects {found}")
    print("make_detector: " + summary)
    with open(os.path.join(out, "detector_training.txt"), "w") as f:
        f.write(summary + "\n")
    with open(os.path.join(case, "picture0.ppm"), "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (SIZE, SIZE) + tests[0][0].transpose(1, 2, 0).tobytes())
    with open(os.path.join(out, "detector_data.h"), "w") as f:
        f.write("/* Generated by examples/models/make_detector.py: test pictures (RGB,\n"
                " * channels first, 0..255) and PyTorch's detections of each. */\n"
                "#ifndef DETECTOR_DATA_H_\n#define DETECTOR_DATA_H_\n")
        f.write(f"#define DETECT_TEST_COUNT {TEST_COUNT}\n#define DETECT_SIZE {SIZE}\n")
        f.write("static const char *const detect_class_names[] = {" + ", ".join(f'"{n}"' for n in NAMES) + "};\n")
        f.write("static const unsigned char detect_pictures[DETECT_TEST_COUNT][3 * DETECT_SIZE * DETECT_SIZE] = {\n")
        for img, _ in tests:
            f.write("  {" + ",".join(str(v) for v in img.ravel()) + "},\n")
        f.write("};\n")
        f.write("typedef struct { int cls; float score, box[4]; } detect_reference;\n")
        f.write("static const int detect_expected_count[DETECT_TEST_COUNT] = {"
                + ", ".join(str(len(r[0])) for r in results) + "};\n")
        rows = [f"{{{int(c)}, {c_float(s)}, {{{', '.join(c_float(v) for v in b)}}}}}"
                for r in results for b, s, c in zip(*r)]
        f.write(f"static const detect_reference detect_expected[{max(len(rows), 1)}] = {{\n  "
                + (",\n  ".join(rows) if rows else "{0, 0.f, {0.f, 0.f, 0.f, 0.f}}") + "};\n")
        f.write("#endif\n")


if __name__ == "__main__":
    main()
