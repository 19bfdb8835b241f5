#!/usr/bin/python3
"""Models with data-dependent output sizes (issue 26): NonZero,
NonMaxSuppression, Unique and Compress, alone and in the graphs around them
(a detection head's post-processing, x[x > t]), some over inputs of
run-time size too. Same layout as make_dynamic_models.py (OUT/<case>/
model.onnx, tinyrt_dims.txt, test_data_set_K); the test sets include empty
results (no box above the threshold, an all-zero tensor, an all-false
condition, zero boxes) and full ones (every box kept up to the bound).
References: numpy, and ONNX NonMaxSuppression written out from its
specification below (checked against torchvision.ops.nms).

Usage: make_data_dependent_models.py OUTDIR

Nothing here is committed; the build runs it (tests/CMakeLists.txt)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_dynamic_models import make_model, write_case  # noqa: E402

RNG = np.random.default_rng(2626)
F = np.float32


def corners(box, center):
    """(x0, y0, x1, y1) in float32 as ONNX Runtime's SuppressByIOU takes them."""
    b = [F(v) for v in box]
    if center:
        hw, hh = b[2] / F(2), b[3] / F(2)
        return b[0] - hw, b[1] - hh, b[0] + hw, b[1] + hh
    return min(b[1], b[3]), min(b[0], b[2]), max(b[1], b[3]), max(b[0], b[2])


def suppresses(a, c, iou, center):
    ax0, ay0, ax1, ay1 = corners(a, center)
    cx0, cy0, cx1, cy1 = corners(c, center)
    w = max(min(ax1, cx1) - max(ax0, cx0), F(0))
    h = max(min(ay1, cy1) - max(ay0, cy0), F(0))
    inter = w * h
    area_a, area_c = (ax1 - ax0) * (ay1 - ay0), (cx1 - cx0) * (cy1 - cy0)
    union = area_a + area_c - inter
    if inter <= 0 or area_a <= 0 or area_c <= 0 or union <= 0:
        return False
    return inter / union > F(iou)


def nms_ref(boxes, scores, max_out, iou, score_thr, center):
    """ONNX NonMaxSuppression: per batch entry and class, boxes above the
    score threshold by score (ties: lower index), each kept unless a kept
    one suppresses it, at most max_out."""
    sel = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c]
            cand = [i for i in range(boxes.shape[1]) if score_thr is None or s[i] > F(score_thr)]
            kept = []
            for i in sorted(cand, key=lambda i: (-s[i], i)):
                if len(kept) >= max_out:
                    break
                if not any(suppresses(boxes[b, k], boxes[b, i], iou, center) for k in kept):
                    kept.append(i)
            sel += [[b, c, i] for i in kept]
    return np.array(sel, np.int64).reshape(-1, 3)


def check_with_torchvision(boxes, scores, max_out, iou, score_thr, ref):
    """The reference agrees with torchvision's nms (corner boxes, distinct scores)."""
    import torch
    import torchvision
    got = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            keep = np.nonzero(scores[b, c] > score_thr)[0]
            xyxy = boxes[b][keep][:, [1, 0, 3, 2]]
            xyxy = np.concatenate([np.minimum(xyxy[:, :2], xyxy[:, 2:]), np.maximum(xyxy[:, :2], xyxy[:, 2:])], 1)
            k = torchvision.ops.nms(torch.from_numpy(xyxy), torch.from_numpy(scores[b, c][keep]), iou).numpy()
            got += [[b, c, keep[i]] for i in k[:max_out]]
    got = np.array(got, np.int64).reshape(-1, 3)
    assert np.array_equal(got, ref), "the NMS reference disagrees with torchvision"


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def detection_head(out):
    """A YOLO-style head's post-processing: predictions [1, A, 4 + C]
    (center boxes, class logits) -> Sigmoid scores -> NonMaxSuppression
    (per-class maximum, IoU and score thresholds as constants) -> the kept
    boxes (Gather) and their scores (GatherND)."""
    A, C, MAX = 300, 3, 20
    nodes = [
        helper.make_node("Slice", ["pred", "s0", "s4", "ax2"], ["boxes"]),
        helper.make_node("Slice", ["pred", "s4", "s7", "ax2"], ["logits"]),
        helper.make_node("Sigmoid", ["logits"], ["probs"]),
        helper.make_node("Transpose", ["probs"], ["scores"], perm=[0, 2, 1]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "thr"], ["selected"],
                         center_point_box=1),
        helper.make_node("Gather", ["selected", "two"], ["box_index"], axis=1),
        helper.make_node("Gather", ["boxes", "box_index"], ["det_boxes"], axis=1),
        helper.make_node("GatherND", ["scores", "selected"], ["det_scores"]),
    ]
    inits = {"s0": np.array([0], np.int64), "s4": np.array([4], np.int64), "s7": np.array([4 + C], np.int64),
             "ax2": np.array([2], np.int64), "max_out": np.array([MAX], np.int64), "iou": np.array([0.45], F),
             "thr": np.array([0.4], F), "two": np.array(2, np.int64)}
    model = make_model(nodes, [value("pred", TensorProto.FLOAT, [1, A, 4 + C])],
                       [value("selected", TensorProto.INT64, ["K", 3]),
                        value("det_boxes", TensorProto.FLOAT, [1, "K", 4]),
                        value("det_scores", TensorProto.FLOAT, ["K"])], inits)

    def pred(logit_shift=0.0, spread=100.0, size=(5, 30)):
        p = np.zeros((1, A, 4 + C), F)
        p[0, :, 0:2] = RNG.uniform(0, spread, (A, 2))
        p[0, :, 2:4] = RNG.uniform(size[0], size[1], (A, 2))
        p[0, :, 4:] = RNG.standard_normal((A, C)) + logit_shift
        return p

    sets = []
    for p in (pred(), pred(logit_shift=-20.0), pred(spread=10.0), pred(logit_shift=5.0, spread=4000.0, size=(1, 2))):
        boxes = p[:, :, :4]
        scores = (1 / (1 + np.exp(-p[:, :, 4:].astype(np.float64)))).astype(F).transpose(0, 2, 1)
        sel = nms_ref(boxes, scores, MAX, 0.45, 0.4, True)
        sets.append(([p], [sel, boxes[:, sel[:, 2]], scores[sel[:, 0], sel[:, 1], sel[:, 2]]]))
    # (no box above the threshold; heavy suppression; every class full: 3 x 20 rows, the bound)
    assert len(sets[1][1][0]) == 0 and len(sets[3][1][0]) == C * MAX
    write_case(out, "dd_detection_head", model, [], sets)


def nms_runtime(out):
    """NonMaxSuppression over a run-time number of boxes (N in 0:64), corner
    boxes in either diagonal, with the per-class maximum and both thresholds
    as run-time inputs. The last two sets: tied scores, and boxes with an
    infinite or NaN corner (no overlap with them: never suppressed nor
    suppressing), then clusters of boxes far apart (as batched NMS offsets
    each class's boxes: a selection's neighbours lie near it in x)."""
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "thr"], ["selected"])]
    model = make_model(nodes, [value("boxes", TensorProto.FLOAT, [2, "N", 4]),
                               value("scores", TensorProto.FLOAT, [2, 3, "N"]),
                               value("max_out", TensorProto.INT64, [1]), value("iou", TensorProto.FLOAT, [1]),
                               value("thr", TensorProto.FLOAT, [1])],
                       [value("selected", TensorProto.INT64, ["K", 3])], {})
    sets = []
    for n, max_out, iou, thr in ((0, 5, 0.5, 0.0), (1, 5, 0.5, 0.0), (64, 4, 0.3, 0.2), (23, 100, 0.6, -1.0),
                                 (40, 0, 0.5, 0.0)):
        xy = RNG.uniform(0, 10, (2, n, 2)).astype(F)
        wh = RNG.uniform(1, 4, (2, n, 2)).astype(F) * RNG.choice([-1, 1], (2, n, 2)).astype(F)
        boxes = np.concatenate([xy, xy + wh], axis=2)  # [y1, x1, y2, x2], either diagonal
        scores = RNG.uniform(0, 1, (2, 3, n)).astype(F)
        sets.append((boxes, scores, max_out, iou, thr, True))
    ties = RNG.uniform(0, 10, (2, 64, 4)).astype(F)
    ties[0, 3, 1], ties[0, 9, 3], ties[1, 5, 0], ties[1, 7, 2] = np.inf, -np.inf, np.nan, np.nan
    sets.append((ties, np.round(RNG.uniform(0, 1, (2, 3, 64)) * 4).astype(F) / 4, 12, 0.2, 0.1, False))
    corner = RNG.integers(0, 6, (2, 64, 1)).astype(F) * 1000 + RNG.uniform(0, 30, (2, 64, 2)).astype(F)
    far = np.concatenate([corner, corner + RNG.uniform(3, 12, (2, 64, 2)).astype(F)], axis=2)
    sets.append((far, RNG.uniform(0, 1, (2, 3, 64)).astype(F), 64, 0.3, 0.0, True))
    for i, (boxes, scores, max_out, iou, thr, distinct) in enumerate(sets):
        sel = nms_ref(boxes, scores, max_out, iou, thr, False)
        if distinct:
            check_with_torchvision(boxes, scores, max_out, iou, thr, sel)
        sets[i] = ([boxes, scores, np.array([max_out], np.int64), np.array([iou], F), np.array([thr], F)], [sel])
    write_case(out, "dd_nms_runtime", model, ["--dim N=0:64"], sets)


def select_above(out):
    """x[x > t] over [T, 8] (T in 1:32): Greater -> NonZero -> Transpose ->
    GatherND, and NonZero of x itself."""
    nodes = [
        helper.make_node("Greater", ["x", "t"], ["above"]),
        helper.make_node("NonZero", ["above"], ["where"]),
        helper.make_node("Transpose", ["where"], ["index"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "index"], ["y"]),
        helper.make_node("NonZero", ["x"], ["nz"]),
    ]
    model = make_model(nodes, [value("x", TensorProto.FLOAT, ["T", 8]), value("t", TensorProto.FLOAT, [])],
                       [value("y", TensorProto.FLOAT, ["K"]), value("index", TensorProto.INT64, ["K", 2]),
                        value("nz", TensorProto.INT64, [2, "Z"])], {})
    sets = []
    for rows, t, zeros in ((1, 10.0, False), (32, 0.5, False), (9, -10.0, False), (20, 0.0, True), (13, 0.0, False)):
        x = np.zeros((rows, 8), F) if zeros else RNG.standard_normal((rows, 8)).astype(F)
        if rows == 13:
            x[x < 0.3] = 0  # NonZero of a sparse tensor
        idx = np.argwhere(x > F(t)).astype(np.int64)
        sets.append(([x, np.array(t, F)], [x[x > F(t)], idx, np.array(np.nonzero(x), np.int64)]))
    write_case(out, "dd_select_above", model, ["--dim T=1:32"], sets)


def compress(out):
    """Compress with run-time conditions: along axis 0 by a shorter
    condition (then a reduction over the kept rows), and of the flattened
    input."""
    nodes = [
        helper.make_node("Compress", ["x", "rows"], ["kept"], axis=0),
        helper.make_node("ReduceSum", ["kept", "ax1"], ["row_sums"], keepdims=0),
        helper.make_node("Compress", ["x", "elems"], ["flat"]),
    ]
    model = make_model(nodes, [value("x", TensorProto.FLOAT, [6, 5]), value("rows", TensorProto.BOOL, [4]),
                               value("elems", TensorProto.BOOL, [30])],
                       [value("kept", TensorProto.FLOAT, ["K", 5]), value("row_sums", TensorProto.FLOAT, ["K"]),
                        value("flat", TensorProto.FLOAT, ["E"])], {"ax1": np.array([1], np.int64)})
    sets = []
    for fill in (None, False, True):
        x = RNG.standard_normal((6, 5)).astype(F)
        rows = RNG.random(4) < 0.5 if fill is None else np.full(4, fill)
        elems = RNG.random(30) < 0.4 if fill is None else np.full(30, fill)
        kept = x[:4][rows]
        sets.append(([x, rows, elems], [kept, kept.sum(axis=1, dtype=F), x.reshape(-1)[elems]]))
    write_case(out, "dd_compress", model, [], sets)


def unique(out):
    """Unique of token ids of run-time length (T in 1:50, sorted, all four
    outputs) and of the rows of a matrix (axis 0, first-occurrence order)."""
    nodes = [
        helper.make_node("Unique", ["tokens"], ["vals", "first", "inverse", "counts"]),
        helper.make_node("Unique", ["rows"], ["urows", "rfirst", "rinverse", "rcounts"], axis=0, sorted=0),
    ]
    model = make_model(nodes, [value("tokens", TensorProto.INT64, ["T"]), value("rows", TensorProto.FLOAT, [7, 3])],
                       [value("vals", TensorProto.INT64, ["U"]), value("first", TensorProto.INT64, ["U"]),
                        value("inverse", TensorProto.INT64, ["T"]), value("counts", TensorProto.INT64, ["U"]),
                        value("urows", TensorProto.FLOAT, ["R", 3]), value("rfirst", TensorProto.INT64, ["R"]),
                        value("rinverse", TensorProto.INT64, [7]), value("rcounts", TensorProto.INT64, ["R"])], {})

    def first_order(rows):
        """np.unique over rows, reordered by first occurrence (sorted=0)."""
        u, idx, inv, cnt = np.unique(rows, axis=0, return_index=True, return_inverse=True, return_counts=True)
        order = np.argsort(idx, kind="stable")
        pos = np.empty_like(order)
        pos[order] = np.arange(len(order))
        return u[order], idx[order].astype(np.int64), pos[inv.reshape(-1)].astype(np.int64), cnt[order].astype(
            np.int64)

    sets = []
    for t in (1, 17, 50):
        tokens = RNG.integers(0, 12, t).astype(np.int64)
        v, i, inv, c = np.unique(tokens, return_index=True, return_inverse=True, return_counts=True)
        rows = RNG.integers(0, 2, (7, 3)).astype(F)
        sets.append(([tokens, rows], [v, i.astype(np.int64), inv.reshape(-1).astype(np.int64), c.astype(np.int64)] +
                     list(first_order(rows))))
    write_case(out, "dd_unique", model, ["--dim T=1:50"], sets)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for make in (detection_head, nms_runtime, select_above, compress, unique):
        make(out)


if __name__ == "__main__":
    main()
