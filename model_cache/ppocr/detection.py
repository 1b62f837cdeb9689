"""DB text detection: input sizing, and the standard DB post-processing (binarize the
probability map, score each region, unclip it, return quadrilaterals)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import ncnn
import numpy as np

from model_cache.ppocr.runtime import NcnnNet

# ImageNet normalisation the PP-OCR detector was trained with, on BGR pixels.
_MEAN = (0.406 * 255, 0.456 * 255, 0.485 * 255)
_NORM = (1 / (0.225 * 255), 1 / (0.224 * 255), 1 / (0.229 * 255))


@dataclass(frozen=True)
class DetParams:
    # Longest input side: a 200 dpi A4 page is read at ~0.68x. 5-pt print reads about as well as
    # at 1920 (tests/test_ppocr_engine.py::test_small_print_survives); at 1024 it is lost.
    limit_side: int = 1600
    min_side: int = 64
    thresh: float = 0.3  # binarisation threshold on the probability map
    box_thresh: float = 0.6  # minimum mean probability inside a box
    # ... unless the region itself is at least this full: a line with a tall glyph at one end (a
    # footnote mark, a symbol, a superscript) gets a slanted, half-empty rectangle, and a whole line
    # of text was lost under box_thresh (corpus pages R-exts p33, chemexec p5).
    fill_thresh: float = 0.9
    # Figures found in a shrunk page's ink are detected again from the page at full size
    # (figure_detail.py): a chart's tick labels are lost at limit_side.
    figure_detail: bool = True
    unclip_ratio: float = 1.5
    min_size: float = 3.0
    max_candidates: int = 3000


@dataclass
class TextBox:
    quad: np.ndarray  # (4, 2) float32: top-left, top-right, bottom-right, bottom-left
    score: float


def page_scale(width: int, height: int, params: DetParams) -> float:
    """How much the detector shrinks a page (1.0: read at full size)."""
    return min(1.0, params.limit_side / max(width, height))


def input_size(width: int, height: int, params: DetParams) -> tuple[int, int]:
    """Scale so the long side is at most limit_side, then round each side to a multiple of 32."""
    scale = page_scale(width, height, params)
    def fit(side: int) -> int:
        return max(32, int(round(side * scale / 32)) * 32)
    tw, th = fit(width), fit(height)
    if min(tw, th) < params.min_side:  # tiny inputs (a single word) upscale a little
        up = params.min_side / min(width, height)
        tw, th = (max(32, int(round(width * up / 32)) * 32), max(32, int(round(height * up / 32)) * 32))
    # Never more pixels than a limit_side square: a 4 x 40,000 px strip would otherwise become a
    # 64 x 640,000 detector input (16 s; minutes and gigabytes for longer strips).
    budget = params.limit_side ** 2
    if tw * th > budget:
        if tw >= th:
            tw = max(32, budget // th // 32 * 32)
        else:
            th = max(32, budget // tw // 32 * 32)
    return tw, th


def probability_map(net: NcnnNet, rgb: np.ndarray, params: DetParams) -> np.ndarray:
    h, w = rgb.shape[:2]
    tw, th = input_size(w, h, params)
    return _run(net, [_input_mat(rgb, tw, th)], tw, th)


def _run(net: NcnnNet, holder: list[ncnn.Mat], tw: int, th: int) -> np.ndarray:
    """The net takes the input Mat over (`holder` is emptied): a local net frees it after its
    first layer instead of at the end (21 MiB at 1600 px); a device owner's copies it anyway."""
    if isinstance(net, NcnnNet):
        return net.run_inputs({net.files.input: holder.pop()}, consume=True).reshape(th, tw)
    return net.run(holder.pop()).reshape(th, tw)


def _input_mat(rgb: np.ndarray, tw: int, th: int) -> ncnn.Mat:
    h, w = rgb.shape[:2]
    mat = ncnn.Mat.from_pixels_resize(rgb, ncnn.Mat.PixelType.PIXEL_RGB2BGR, w, h, tw, th)
    mat.substract_mean_normalize(_MEAN, _NORM)
    return mat


def order_quad(points: np.ndarray) -> np.ndarray:
    """Order 4 points clockwise from the top-left (in image coordinates)."""
    pts = np.asarray(points, dtype=np.float32).reshape(4, 2)
    by_x = pts[np.argsort(pts[:, 0], kind="stable")]
    left, right = by_x[:2], by_x[2:]
    tl, bl = left[np.argsort(left[:, 1], kind="stable")]
    tr, br = right[np.argsort(right[:, 1], kind="stable")]
    return np.array([tl, tr, br, bl], dtype=np.float32)


def box_score(prob: np.ndarray, quad: np.ndarray) -> float:
    """Mean probability inside a polygon: the region's rectangle (DB's 'fast' score) or its
    contour's points (its 'slow' score)."""
    h, w = prob.shape
    x0, y0 = np.clip(np.floor(quad.min(0)).astype(int), 0, [w - 1, h - 1])
    x1, y1 = np.clip(np.ceil(quad.max(0)).astype(int), 0, [w - 1, h - 1])
    mask = np.zeros((y1 - y0 + 1, x1 - x0 + 1), dtype=np.uint8)
    cv2.fillPoly(mask, [np.round(quad - [x0, y0]).astype(np.int32)], 1)
    return float(cv2.mean(prob[y0:y1 + 1, x0:x1 + 1], mask)[0])


def unclip_rect(rect: tuple, ratio: float) -> tuple:
    """Grow a rotated rectangle by DB's offset distance area*ratio/perimeter on every side
    (the min-area rectangle of the round-offset polygon is exactly this)."""
    (cx, cy), (w, h), angle = rect
    if w <= 0 or h <= 0:
        return rect
    d = w * h * ratio / (2 * (w + h))
    return (cx, cy), (w + 2 * d, h + 2 * d), angle


def boxes_from_map(prob: np.ndarray, params: DetParams, out_w: int, out_h: int) -> list[TextBox]:
    bitmap = (prob > params.thresh).astype(np.uint8)
    contours, _ = cv2.findContours(bitmap, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    sx, sy = out_w / prob.shape[1], out_h / prob.shape[0]
    boxes: list[TextBox] = []
    for contour in contours[: params.max_candidates]:
        rect = cv2.minAreaRect(contour)
        if min(rect[1]) < params.min_size:
            continue
        score = box_score(prob, cv2.boxPoints(rect))
        if score < params.box_thresh and box_score(prob, contour.reshape(-1, 2)) < params.fill_thresh:
            continue
        grown = unclip_rect(rect, params.unclip_ratio)
        if min(grown[1]) < params.min_size + 2:
            continue
        quad = order_quad(cv2.boxPoints(grown)) * np.array([sx, sy], dtype=np.float32)
        quad[:, 0] = np.clip(quad[:, 0], 0, out_w)
        quad[:, 1] = np.clip(quad[:, 1], 0, out_h)
        boxes.append(TextBox(quad, score))
    return boxes


def detection_margin(width: int, height: int) -> int:
    """DB needs some background around text: a tight crop (one text line touching the image
    edges) is read from a copy with a margin of paper added."""
    return int(min(64, max(16, min(width, height) // 2)))


def paper_colour(rgb: np.ndarray) -> tuple[int, int, int]:
    edge = np.concatenate([rgb[0], rgb[-1], rgb[:, 0], rgb[:, -1]])
    return tuple(int(v) for v in np.median(edge, axis=0))


def detect(net: NcnnNet, rgb: np.ndarray, params: DetParams) -> list[TextBox]:
    h, w = rgb.shape[:2]
    pad = detection_margin(w, h)
    padded = cv2.copyMakeBorder(rgb, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=paper_colour(rgb))
    tw, th = input_size(w + 2 * pad, h + 2 * pad, params)
    holder = [_input_mat(padded, tw, th)]
    del padded  # freed before the net runs: only its input is needed now
    prob = _run(net, holder, tw, th)
    boxes = boxes_from_map(prob, params, w + 2 * pad, h + 2 * pad)
    for box in boxes:
        box.quad -= pad
        box.quad[:, 0] = np.clip(box.quad[:, 0], 0, w)
        box.quad[:, 1] = np.clip(box.quad[:, 1], 0, h)
    return boxes
