"""Page orientation. Whole-page 0/90/180/270 is decided once per page, never per line:
90/270 from the shape of the detected text boxes (text lines are long and flat when
upright), then 0/180 by a confidence-weighted vote of the PP-LCNet text-line classifier
over the start of each of the page's longest lines. A page is only turned when the vote is
clear, so upright pages are never harmed by a few misclassified lines."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import ncnn
import numpy as np

from model_cache.ppocr.detection import TextBox, order_quad
from model_cache.ppocr.crops import quad_size, rectify
from model_cache.ppocr.recognition import RecParams
from model_cache.ppocr.runtime import NcnnNet

_MEAN = (0.406 * 255, 0.456 * 255, 0.485 * 255)
_NORM = (1 / (0.225 * 255), 1 / (0.224 * 255), 1 / (0.229 * 255))


@dataclass(frozen=True)
class OrientParams:
    vertical_share: float = 0.6  # share of elongated boxes (by length) that must be vertical
    elongation: float = 2.0  # a box counts only if its long side is this many times its short
    vote_lines: int = 8  # lines the 0/180 classifier looks at
    early_votes: int = 3  # ...unless this many agree with p < 0.05 (or > 0.95)
    flip_share: float = 0.75  # weighted share of "180" votes needed to turn the page
    # A page with one line to vote turns only on a near-certain vote: a line of Greek voted
    # "turned" at p = 0.93 on an upright page (reledpar p6), where turned lines of Latin print
    # alone on a page voted 0.99-1.0 (tests/test_ppocr_orientation.py).
    lone_vote: float = 0.98
    # The classifier sees each line squeezed to cls_width x cls_height (2:1). A whole long line
    # squeezed 10x or more can read as turned: six lines of "very very very ..." voted 180 with
    # p = 1.0 on an upright page (eqexpl p2). It votes on a piece this many heights long instead.
    piece_aspect: float = 8.0
    cls_width: int = 160
    cls_height: int = 80


def vertical_share(boxes: list[TextBox], params: OrientParams) -> float:
    """Length-weighted share of elongated boxes that stand upright (h >> w)."""
    vertical = horizontal = 0.0
    for box in boxes:
        w, h = quad_size(box.quad)
        if max(w, h) < params.elongation * max(min(w, h), 1.0):
            continue
        if h > w:
            vertical += h
        else:
            horizontal += w
    total = vertical + horizontal
    return vertical / total if total else 0.0


def rotate_image(rgb: np.ndarray, degrees_cw: int) -> np.ndarray:
    k = (degrees_cw // 90) % 4
    return np.ascontiguousarray(np.rot90(rgb, k=-k)) if k else rgb


def rotate_quad(quad: np.ndarray, degrees_cw: int, width: int, height: int) -> np.ndarray:
    """Map points of a width x height image into the image turned clockwise by degrees_cw."""
    x, y = quad[:, 0], quad[:, 1]
    k = (degrees_cw // 90) % 4
    if k == 1:
        pts = np.stack([height - y, x], axis=1)
    elif k == 2:
        pts = np.stack([width - x, height - y], axis=1)
    elif k == 3:
        pts = np.stack([y, width - x], axis=1)
    else:
        pts = quad
    return order_quad(pts)


def rotate_boxes(boxes: list[TextBox], degrees_cw: int, width: int, height: int) -> list[TextBox]:
    return [TextBox(rotate_quad(b.quad, degrees_cw, width, height), b.score) for b in boxes]


def flip_probability(net: NcnnNet, rgb: np.ndarray, quad: np.ndarray, params: OrientParams) -> float:
    """P(line is upside down) from the text-line classifier (whole line squeezed to 160x80)."""
    crop = rectify(rgb, quad, RecParams(height=params.cls_height, min_width=1))
    crop = np.ascontiguousarray(cv2.resize(crop, (params.cls_width, params.cls_height),
                                           interpolation=cv2.INTER_AREA))
    mat = ncnn.Mat.from_pixels(crop, ncnn.Mat.PixelType.PIXEL_RGB2BGR,
                               params.cls_width, params.cls_height)
    mat.substract_mean_normalize(_MEAN, _NORM)
    probs = net.run(mat).ravel()
    return float(probs[1])


def upside_down(net: NcnnNet, rgb: np.ndarray, boxes: list[TextBox], params: OrientParams) -> bool:
    """Vote over the longest lines; each vote weighs by its confidence (|p - 0.5|). The vote
    stops early once the first few lines agree with high confidence (most pages)."""
    lines = [b for b in boxes if _is_line(b.quad, params)]
    lines.sort(key=lambda b: -quad_size(b.quad)[0])
    votes: list[float] = []
    for box in lines[: params.vote_lines]:
        votes.append(flip_probability(net, rgb, line_piece(box.quad, params.piece_aspect), params))
        if len(votes) >= params.early_votes and (max(votes) < 0.05 or min(votes) > 0.95):
            break
    if not votes or (len(votes) == 1 and votes[0] < params.lone_vote):
        return False
    weights = np.abs(np.array(votes) - 0.5)
    if weights.sum() < 1e-6:
        return False
    share = float((weights * (np.array(votes) > 0.5)).sum() / weights.sum())
    return share >= params.flip_share


def line_piece(quad: np.ndarray, aspect: float) -> np.ndarray:
    """The first `aspect` heights of a line's quadrilateral (the whole of a shorter one)."""
    width, height = quad_size(quad)
    if width <= aspect * height:
        return quad
    tl, tr, br, bl = quad
    share = aspect * height / width
    return np.array([tl, tl + (tr - tl) * share, bl + (br - bl) * share, bl], dtype=np.float32)


def _is_line(quad: np.ndarray, params: OrientParams) -> bool:
    w, h = quad_size(quad)
    return w >= params.elongation * max(h, 1.0)
