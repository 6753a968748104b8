#!/usr/bin/env python3
"""Writes the golden files of the detection operators' tests.

Run from this folder with `/usr/bin/python3 gen_detect.py` (Debian's NumPy).
Not run by CI: the .npy files it writes into golden/ are committed. Each
reference is Caffe2's algorithm (caffe2/operators/roi_align_op.cc,
roi_pool_op.cc, bbox_transform_op.cc, box_with_nms_limit_op.cc,
generate_proposals_op.cc, collect_and_distribute_fpn_rpn_proposals_op.cc,
integral_image_op.cc and generate_proposals_op_util_*.h) written out in
NumPy in float64, vectorised where NumPy allows; inputs are float32.
"""
import math
import os

import numpy as np

rng = np.random.default_rng(20261127)
OUT = "golden"


def save(name, a):
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a))


def bilinear(img, y, x):
    h, w = img.shape[-2:]
    if y < -1 or y > h or x < -1 or x > w:
        return np.zeros(img.shape[:-2])
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[..., y0, x0] + (1 - ly) * lx * img[..., y0, x1]
            + ly * (1 - lx) * img[..., y1, x0] + ly * lx * img[..., y1, x1])


def roi_align(X, R, scale, ph, pw, ratio, aligned):
    Y = np.zeros((R.shape[0], X.shape[1], ph, pw))
    off = 0.5 if aligned else 0.0
    for n, roi in enumerate(R.astype(np.float64)):
        b = int(roi[0]) if R.shape[1] == 5 else 0
        x1, y1, x2, y2 = roi[-4:] * scale - off
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else int(math.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(math.ceil(rw / pw))
        count = max(gh * gw, 1)
        for i in range(ph):
            for j in range(pw):
                acc = np.zeros(X.shape[1])
                for iy in range(gh):
                    y = y1 + i * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        x = x1 + j * bw + (ix + 0.5) * bw / gw
                        acc += bilinear(X[b], y, x)
                Y[n, :, i, j] = acc / count
    return Y


def f32(*shape, lo=-1, hi=1):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


# RoIAlign: 5-column RoIs over two images, and 4-column RoIs.
X = f32(2, 3, 8, 9)
R = np.array([[0, 1.2, 0.7, 6.3, 5.9], [1, 0, 0, 8, 7], [1, 3.1, 2.2, 3.4, 2.4], [0, -2, -1.5, 4, 9.5], [1, 6.5, 5.5, 12, 11]], np.float32)
save("roialign_x", X)
save("roialign_r", R)
save("roialign_y", roi_align(X, R, 1.0, 2, 3, -1, False))
save("roialign_y_s2", roi_align(X, R, 0.5, 3, 2, 2, False))
save("roialign_y_aligned", roi_align(X, R, 1.0, 2, 2, 0, True))
R4 = R[:, 1:].copy()
save("roialign_r4", R4)
save("roialign_y4", roi_align(X[:1], R4, 1.0, 2, 3, -1, False))


def roi_pool(X, R, scale, ph, pw):
    n, c, h, w = X.shape
    Y = np.zeros((R.shape[0], c, ph, pw))
    A = np.full((R.shape[0], c, ph, pw), -1, np.int32)
    for r, roi in enumerate(R):
        b = int(roi[0])
        sw, sh, ew, eh = (int(np.round(np.float32(v) * np.float32(scale))) if abs(v * scale) % 1 != 0.5 else
                          int(math.copysign(math.floor(abs(v * scale) + 0.5), v)) for v in roi[1:])
        rh, rw = max(eh - sh + 1, 1), max(ew - sw + 1, 1)
        bh, bw = np.float32(rh) / np.float32(ph), np.float32(rw) / np.float32(pw)
        for i in range(ph):
            hs = min(max(int(math.floor(np.float32(i) * bh)) + sh, 0), h)
            he = min(max(int(math.ceil(np.float32(i + 1) * bh)) + sh, 0), h)
            for j in range(pw):
                ws = min(max(int(math.floor(np.float32(j) * bw)) + sw, 0), w)
                we = min(max(int(math.ceil(np.float32(j + 1) * bw)) + sw, 0), w)
                if he <= hs or we <= ws:
                    continue
                win = X[b, :, hs:he, ws:we].reshape(c, -1)
                k = win.argmax(axis=1)
                Y[r, :, i, j] = win[np.arange(c), k]
                A[r, :, i, j] = (hs + k // (we - ws)) * w + ws + k % (we - ws)
    return Y, A


Rp = np.array([[0, 1.4, 0.6, 6.5, 5.2], [1, 0, 0, 8, 7], [1, 20, 20, 30, 30], [0, 2.5, 3.5, 2.5, 3.5]], np.float32)
Yp, Ap = roi_pool(X, Rp, 1.0, 2, 3)
save("roipool_r", Rp)
save("roipool_y", Yp)
save("roipool_argmax", Ap)
Yp, Ap = roi_pool(X, Rp, 0.5, 3, 2)
save("roipool_y_s", Yp)
save("roipool_argmax_s", Ap)

CLIP = math.log(1000.0 / 16.0)


def transform(boxes, deltas, weights, legacy):
    one = 1.0 if legacy else 0.0
    w = boxes[:, 2] - boxes[:, 0] + one
    h = boxes[:, 3] - boxes[:, 1] + one
    cx, cy = boxes[:, 0] + 0.5 * w, boxes[:, 1] + 0.5 * h
    dx, dy = deltas[:, 0] / weights[0], deltas[:, 1] / weights[1]
    dw, dh = np.minimum(deltas[:, 2] / weights[2], CLIP), np.minimum(deltas[:, 3] / weights[3], CLIP)
    px, py, pw_, ph_ = dx * w + cx, dy * h + cy, np.exp(dw) * w, np.exp(dh) * h
    return np.stack([px - 0.5 * pw_, py - 0.5 * ph_, px + 0.5 * pw_ - one, py + 0.5 * ph_ - one], axis=1)


def clip(boxes, h, w, legacy):
    one = 1.0 if legacy else 0.0
    out = boxes.copy()
    out[:, [0, 2]] = np.clip(out[:, [0, 2]], None, w - one).clip(0)
    out[:, [1, 3]] = np.clip(out[:, [1, 3]], None, h - one).clip(0)
    return out


def bbox_transform(rois, deltas, iminfo, weights=(1, 1, 1, 1), apply_scale=True, legacy=True):
    rois, deltas, iminfo = (a.astype(np.float64) for a in (rois, deltas, iminfo))
    out = np.zeros_like(deltas)
    splits = []
    for i, (h, w, s) in enumerate(iminfo):
        rows = np.where(rois[:, 0] == i)[0] if rois.shape[1] == 5 else np.arange(rois.shape[0])
        splits.append(len(rows))
        boxes = rois[rows][:, -4:] / s
        ih, iw = int(h / s + 0.5), int(w / s + 0.5)
        for k in range(deltas.shape[1] // 4):
            t = clip(transform(boxes, deltas[rows, 4 * k:4 * k + 4], weights, legacy), ih, iw, legacy)
            out[rows, 4 * k:4 * k + 4] = t * (s if apply_scale else 1.0)
    return out, np.array(splits, np.float64)


bt_rois = np.array([[0, 10, 12, 50, 60], [0, 0, 0, 99, 79], [0, 30, 5, 31, 70], [1, 5, 5, 40, 20], [1, 100, 90, 150, 130]], np.float32)
bt_deltas = f32(5, 8, lo=-0.6, hi=0.6)
bt_deltas[1, 2] = 9  # exceeds the log-scale clip
bt_info = np.array([[80, 100, 1.0], [120, 160, 0.8]], np.float32)
save("bbox_rois", bt_rois)
save("bbox_deltas", bt_deltas)
save("bbox_info", bt_info)
o, s = bbox_transform(bt_rois, bt_deltas, bt_info)
save("bbox_out", o)
save("bbox_splits", s)
o, _ = bbox_transform(bt_rois, bt_deltas, bt_info, weights=(10, 10, 5, 5), apply_scale=False, legacy=False)
save("bbox_out_w", o)


def nms(boxes, scores, order, thresh, top, legacy):
    one = 1.0 if legacy else 0.0
    area = (boxes[:, 2] - boxes[:, 0] + one) * (boxes[:, 3] - boxes[:, 1] + one)
    keep = []
    order = list(order)
    while order:
        if top >= 0 and len(keep) >= top:
            break
        i = order.pop(0)
        keep.append(i)
        rest = []
        for j in order:
            w = max(min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]) + one, 0)
            h = max(min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]) + one, 0)
            inter = w * h
            if inter / (area[i] + area[j] - inter) <= thresh:
                rest.append(j)
        order = rest
    return keep


def box_nms_limit(scores, boxes, splits, thresh=0.05, nms_t=0.3, dpi=100):
    out_s, out_b, out_c, out_split, keeps_all, sizes = [], [], [], [], [], []
    off = 0
    k = scores.shape[1]
    for n in splits:
        sc, bx = scores[off:off + n].astype(np.float64), boxes[off:off + n].astype(np.float64)
        keeps = [[] for _ in range(k)]
        for j in range(1, k):
            inds = [i for i in range(n) if sc[i, j] > thresh]
            inds.sort(key=lambda i: -sc[i, j])
            keeps[j] = nms(bx[:, 4 * j:4 * j + 4], sc[:, j], inds, nms_t, dpi if dpi > 0 else -1, True)
        total = sum(len(x) for x in keeps)
        if dpi > 0 and total > dpi:
            pairs = [(j, i) for j in range(1, k) for i in keeps[j]]
            pairs.sort(key=lambda p: -sc[p[1], p[0]])
            keeps = [[] for _ in range(k)]
            for j, i in pairs[:dpi]:
                keeps[j].append(i)
            total = dpi
        for j in range(1, k):
            for i in keeps[j]:
                out_s.append(sc[i, j])
                out_b.append(bx[i, 4 * j:4 * j + 4])
                out_c.append(j)
        for j in range(k):
            keeps_all.extend(keeps[j])
        sizes.append([len(x) for x in keeps])
        out_split.append(total)
        off += n
    return (np.array(out_s), np.array(out_b).reshape(-1, 4), np.array(out_c, np.float64), np.array(out_split, np.float64),
            np.array(keeps_all, np.int32), np.array(sizes, np.int32))


N, K = 30, 4
nms_scores = rng.uniform(0, 1, size=(N, K)).astype(np.float32)
ctr = rng.uniform(10, 60, size=(N, K, 2))
half = rng.uniform(3, 15, size=(N, K, 2))
nms_boxes = np.concatenate([ctr - half, ctr + half], axis=2).astype(np.float32).reshape(N, 4 * K)
save("nms_scores", nms_scores)
save("nms_boxes", nms_boxes)
for name, dpi in (("nms", 100), ("nms_limit", 7)):
    for q, a in zip(("scores", "boxes", "classes", "splits", "keeps", "sizes"), box_nms_limit(nms_scores, nms_boxes, [12, 18], dpi=dpi)):
        save(name + "_out_" + q, a)


def generate_proposals(scores, deltas, info, anchors, scale, pre, post, thresh, min_size):
    stride = 1.0 / scale
    n, a, h, w = scores.shape
    rois, probs = [], []
    for img in range(n):
        sc = scores[img].reshape(-1).astype(np.float64)
        order = sorted(range(sc.size), key=lambda i: -sc[i])
        if 0 < pre < sc.size:
            order = order[:pre]
        an, cell = np.array(order) // (h * w), np.array(order) % (h * w)
        sx, sy = (cell % w) * stride, (cell // w) * stride
        anc = anchors[an].astype(np.float64) + np.stack([sx, sy, sx, sy], axis=1)
        d = deltas[img].reshape(a, 4, h * w)[an, :, cell]
        props = clip(transform(anc, d, (1, 1, 1, 1), True), int(info[img, 0]), int(info[img, 1]), True)
        ws, hs = props[:, 2] - props[:, 0] + 1, props[:, 3] - props[:, 1] + 1
        ms = min_size * info[img, 2]
        keep = [i for i in range(len(order)) if ws[i] >= ms and hs[i] >= ms and props[i, 0] + ws[i] / 2 < info[img, 1]
                and props[i, 1] + hs[i] / 2 < info[img, 0]]
        keep = nms(props, None, keep, thresh, post if 0 < post < len(keep) else -1, True)
        for i in keep:
            rois.append([img, *props[i]])
            probs.append(sc[order[i]])
    return np.array(rois).reshape(-1, 5), np.array(probs)


gp_scores = f32(2, 3, 4, 5, lo=0, hi=1)
gp_deltas = f32(2, 12, 4, 5, lo=-0.3, hi=0.3)
gp_info = np.array([[60, 70, 1.0], [50, 64, 2.0]], np.float32)
gp_anchors = np.array([[-8, -8, 7, 7], [-16, -8, 15, 7], [-4, -12, 3, 11]], np.float32)
save("gp_scores", gp_scores)
save("gp_deltas", gp_deltas)
save("gp_info", gp_info)
save("gp_anchors", gp_anchors)
r, p = generate_proposals(gp_scores, gp_deltas, gp_info, gp_anchors, 1 / 16, 30, 10, 0.5, 4)
save("gp_rois", r)
save("gp_probs", p)


def fpn(rois_lvls, scores_lvls, top, lmin=2, lmax=5, s0=224, l0=4):
    rois = np.concatenate(rois_lvls).astype(np.float64)
    scores = np.concatenate(scores_lvls).astype(np.float64)
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    if 0 < top < len(order):
        order = order[:top]
    rois = rois[order]
    area = (rois[:, 3] - rois[:, 1] + 1) * (rois[:, 4] - rois[:, 2] + 1)
    lvls = np.clip(np.floor(l0 + np.log2(np.sqrt(area) / s0 + 1e-6)), lmin, lmax)
    outs, idx = [], []
    for lvl in range(lmin, lmax + 1):
        rows = np.where(lvls == lvl)[0]
        outs.append(rois[rows])
        idx.extend(rows)
    return rois, outs, np.argsort(np.array(idx, np.int64), kind="stable").astype(np.int32)


fr, fs = [], []
for lvl in range(5):
    n = 6 + lvl
    xy = rng.uniform(0, 400, size=(n, 2))
    size = rng.uniform(8, 600, size=(n, 2)) * (lvl + 1) / 3
    fr.append(np.concatenate([rng.integers(0, 2, size=(n, 1)), xy, xy + size], axis=1).astype(np.float32))
    fs.append(rng.uniform(0, 1, size=(n,)).astype(np.float32))
rois, outs, restore = fpn(fr, fs, 25)
for lvl in range(5):
    save("fpn_rois_in%d" % lvl, fr[lvl])
    save("fpn_scores_in%d" % lvl, fs[lvl])
save("fpn_rois", rois)
for q, o in enumerate(outs):
    save("fpn_rois_lvl%d" % q, o.reshape(-1, 5))
save("fpn_restore", restore)

Xi = f32(2, 3, 5, 4)
Yi = np.zeros((2, 3, 6, 5))
Yi[:, :, 1:, 1:] = Xi.astype(np.float64).cumsum(axis=2).cumsum(axis=3)
dYi = f32(2, 3, 6, 5)
dXi = dYi.astype(np.float64)[:, :, ::-1, ::-1].cumsum(axis=2).cumsum(axis=3)[:, :, ::-1, ::-1][:, :, 1:, 1:]
save("integral_x", Xi)
save("integral_y", Yi)
save("integral_dy", dYi)
save("integral_dx", dXi)


# Rotated boxes [ctr_x, ctr_y, w, h, angle in degrees]. Their corners are
# c + R(-angle)·(±w/2, ±h/2) (image coordinates, y down); the overlap is
# computed here by Sutherland-Hodgman clipping of one rectangle by the
# other, a different algorithm from Caffe2's intersection points and
# convex hull.
def corners(b):
    t = -math.radians(b[4])
    rot = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    local = np.array([[-b[2] / 2, b[3] / 2], [-b[2] / 2, -b[3] / 2], [b[2] / 2, -b[3] / 2], [b[2] / 2, b[3] / 2]])
    return local @ rot.T + np.array(b[:2])


def poly_area(p):
    if len(p) < 3:
        return 0.0
    x, y = np.array(p).T
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def clip_poly(subject, clipper):
    def ccw(p):
        return p if poly_signed(p) > 0 else p[::-1]

    def poly_signed(p):
        x, y = np.array(p).T
        return 0.5 * (np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))

    out = list(ccw(list(subject)))
    clipper = ccw(list(clipper))
    for i in range(len(clipper)):
        a, b = clipper[i], clipper[(i + 1) % len(clipper)]
        inp, out = out, []
        if not inp:
            break

        def inside(p):
            return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= 0

        def cut(p, q):
            d1 = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
            d2 = (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0])
            return p + (q - p) * (d1 / (d1 - d2))

        for j in range(len(inp)):
            p, q = inp[j], inp[(j + 1) % len(inp)]
            if inside(q):
                if not inside(p):
                    out.append(cut(p, q))
                out.append(q)
            elif inside(p):
                out.append(cut(p, q))
    return out


def rot_iou(a, b):
    inter = poly_area(clip_poly(corners(a), corners(b)))
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def nms_rot(boxes, order, thresh, top):
    keep, order = [], list(order)
    while order:
        if top >= 0 and len(keep) >= top:
            break
        i = order.pop(0)
        keep.append(i)
        order = [j for j in order if rot_iou(boxes[i], boxes[j]) <= thresh]
    return keep


Nr, Kr = 16, 3
rot_scores = rng.uniform(0, 1, size=(Nr, Kr)).astype(np.float32)
rb = np.concatenate([rng.uniform(20, 40, size=(Nr, Kr, 2)), rng.uniform(6, 20, size=(Nr, Kr, 2)),
                     rng.uniform(-80, 80, size=(Nr, Kr, 1))], axis=2).astype(np.float32)
rot_boxes = rb.reshape(Nr, 5 * Kr)
save("rot_scores", rot_scores)
save("rot_boxes", rot_boxes)
rs, rbx, rc = [], [], []
for j in range(1, Kr):
    inds = sorted([i for i in range(Nr) if rot_scores[i, j] > 0.05], key=lambda i: -rot_scores[i, j])
    bj = rot_boxes[:, 5 * j:5 * j + 5].astype(np.float64)
    for i in nms_rot(bj, inds, 0.3, 100):
        rs.append(rot_scores[i, j])
        rbx.append(bj[i])
        rc.append(j)
save("rot_out_scores", np.array(rs, np.float64))
save("rot_out_boxes", np.array(rbx).reshape(-1, 5))
save("rot_out_classes", np.array(rc, np.float64))


def transform_rot(b, d, lo=-90, hi=90):
    dw, dh = min(d[2], CLIP), min(d[3], CLIP)
    out = [d[0] * b[2] + b[0], d[1] * b[3] + b[1], math.exp(dw) * b[2], math.exp(dh) * b[3], d[4] * 180 / math.pi + b[4]]
    if out[4] < lo:
        out[4] += hi - lo
    elif out[4] > hi:
        out[4] -= hi - lo
    return out


def clip_rot(b, h, w, thresh=1.0):
    if abs(b[4]) > thresh:
        return b
    x1, y1 = b[0] - (b[2] - 1) / 2, b[1] - (b[3] - 1) / 2
    x2, y2 = b[0] + (b[2] - 1) / 2, b[1] + (b[3] - 1) / 2
    x1, x2 = (min(max(v, 0), w - 1) for v in (x1, x2))
    y1, y2 = (min(max(v, 0), h - 1) for v in (y1, y2))
    return [(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1 + 1, y2 - y1 + 1, b[4]]


def proposals_rot(scores, deltas, info, anchors, stride, pre, post, thresh, min_size):
    n, a, h, w = scores.shape
    rois, probs = [], []
    for img in range(n):
        sc = scores[img].reshape(-1).astype(np.float64)
        order = sorted(range(sc.size), key=lambda i: -sc[i])[:pre]
        props = []
        for idx in order:
            an, cell = idx // (h * w), idx % (h * w)
            anc = anchors[an].astype(np.float64).copy()
            anc[0] += (cell % w) * stride
            anc[1] += (cell // w) * stride
            d = deltas[img].reshape(a, 5, h * w)[an, :, cell].astype(np.float64)
            props.append(clip_rot(transform_rot(anc, d), int(info[img, 0]), int(info[img, 1])))
        ms = min_size * info[img, 2]
        keep = [i for i, p in enumerate(props) if p[2] >= ms and p[3] >= ms and p[0] < info[img, 1] and p[1] < info[img, 0]]
        keep = nms_rot(props, keep, thresh, post if 0 < post < len(keep) else -1)
        for i in keep:
            rois.append([img, *props[i]])
            probs.append(sc[order[i]])
    return np.array(rois).reshape(-1, 6), np.array(probs)


gr_scores = f32(1, 2, 3, 4, lo=0, hi=1)
gr_deltas = f32(1, 10, 3, 4, lo=-0.3, hi=0.3)
gr_info = np.array([[48, 64, 1.0]], np.float32)
gr_anchors = np.array([[8, 8, 16, 8, 30], [8, 8, 12, 12, 0.5]], np.float32)
save("gr_scores", gr_scores)
save("gr_deltas", gr_deltas)
save("gr_info", gr_info)
save("gr_anchors", gr_anchors)
r, p = proposals_rot(gr_scores, gr_deltas, gr_info, gr_anchors, 16.0, 20, 8, 0.4, 2)
save("gr_rois", r)
save("gr_probs", p)
