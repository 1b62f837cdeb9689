"""The page's skew, measured from the ink of its text lines.

The layout stage works in a deskewed frame: on a scan a degree off level, a column's edge
drifts ~35 px down an A4 page at 200 dpi, more than the gutter of a tight index. The stage can
take the skew from its line boxes (their baselines' median angle), but a detector's box of a
short line snaps to level (`minAreaRect` of a contour a few pixels off level), so on a page of
short lines (an index, a glossary) the boxes say 0, and on a level page a few tilted boxes
(a slide's rotated label) can say most of a degree.

The ink says more: inside the recognised lines' boxes, the ink's rows are sharpest (its
projection across the baselines has the highest peaks) at the text's true angle, projected over
the whole page and line by line (the columns of an index need not share baselines). On the
layout corpus's tune half (`benchmarks/skew_accuracy.py`; docs/benchmarks.md, "Skewed scans of
tight indexes" and "Indexes, lists and tables beside each other"): median error 0.014 degrees on
the 257 simulated scans against the boxes' 0.049, p90 0.040 against 0.275.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from model_cache.layout.geometry import page_skew
from model_cache.layout.lines import LayoutLine


@dataclass(frozen=True)
class SkewParams:
    max_degrees: float = 5.0  # angles searched: within this of level
    steps: tuple[float, ...] = (0.2, 0.02, 0.005)  # search steps, degrees, coarse to fine
    level: float = 0.1  # an angle under this (degrees) is level: on level pages (the tune half's
    # born-digital renders) the ink's angle stayed under it on 56 of 57
    points: int = 60000  # ink pixels sampled (a fixed seed: the same page gives the same angle)
    min_points: int = 500  # less ink than this: no measure
    agree: float = 1.0  # degrees: an ink angle further than this from the boxes' is not trusted
    close: float = 0.2  # degrees: nearer than this, the boxes' angle stands


def text_skew(rgb: np.ndarray, lines: list[LayoutLine], params: SkewParams = SkewParams()) -> float | None:
    """The baseline angle of the page's text (radians, image coordinates with y down, as
    `layout.geometry.page_skew` gives it from the boxes). The ink's angle where it differs from
    the boxes' by `close` to `agree` degrees (the boxes snapped to level, or a few tilted ones
    pulled them); the boxes' own within `close` (a page they already read right stays as it
    was); None beyond `agree` (ink that is not running text decided it: a diagram's slanted
    labels, a formula) or with too little ink to tell, and the stage keeps the boxes' angle."""
    ink = ink_skew(rgb, lines, params)
    boxes = page_skew(lines)
    if ink is None or abs(np.degrees(ink - boxes)) > params.agree:
        return None
    return ink if abs(np.degrees(ink - boxes)) > params.close else boxes


def ink_skew(rgb: np.ndarray, lines: list[LayoutLine], params: SkewParams = SkewParams()) -> float | None:
    """The angle at which the ink inside the lines' boxes lines up best (radians), snapped to
    level under `params.level`; None with too little ink."""
    xs, ys, ids = _text_ink(rgb, lines)
    if len(xs) < params.min_points:
        return None
    if len(xs) > params.points:  # sorted, the sample keeps each line's points together
        pick = np.sort(np.random.default_rng(0).choice(len(xs), params.points, replace=False))
        xs, ys, ids = xs[pick], ys[pick], ids[pick]
    lines_ink = LinesInk.of(ids)
    best, reach = 0.0, params.max_degrees
    for step in params.steps:
        angles = best + np.arange(-reach, reach + step / 2, step)
        best = float(angles[int(np.argmax([_sharpness(xs, ys, lines_ink, np.radians(a)) for a in angles]))])
        reach = step
    return 0.0 if abs(best) < params.level else float(np.radians(best))


@dataclass(frozen=True)
class LinesInk:
    """Which line each ink point lies in, the points grouped line by line: `line` numbers the
    lines 0, 1, ... in order, `starts` is where each line's points begin."""
    line: np.ndarray
    starts: np.ndarray

    @staticmethod
    def of(ids: np.ndarray) -> "LinesInk":
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        return LinesInk(np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(ids)])), starts)


def _sharpness(xs: np.ndarray, ys: np.ndarray, lines_ink: LinesInk, angle: float) -> float:
    """Sum of squares of the ink's projection onto the normal of lines at `angle`, in
    one-pixel bins, over the whole page and line by line: highest when the bins follow the
    baselines. The whole page's projection is sharp where rows line up across columns; the
    columns of an index or a glossary do not share baselines, and there only each line's own
    projection peaks at the text's angle. A line's bins are counted from its own lowest, so its
    counts take a few line heights of bins, not the page's height (the sums are whole numbers,
    the same either way)."""
    v = ys * np.cos(angle) - xs * np.sin(angle)
    bins = np.round(v - v.min()).astype(np.int64)
    whole = np.bincount(bins)
    local = bins - np.minimum.reduceat(bins, lines_ink.starts)[lines_ink.line]
    each = np.bincount(lines_ink.line * (int(local.max()) + 1) + local)
    return float(whole @ whole + each @ each)


def _text_ink(rgb: np.ndarray, lines: list[LayoutLine]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coordinates (float x, y) of the ink inside the lines' boxes, and the index of the box
    each lies in: the dark side of an Otsu threshold, or the light side in a box that is mostly
    dark (light text on a dark band)."""
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY) if rgb.ndim == 3 else rgb
    _, dark = cv2.threshold(gray, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    h, w = dark.shape
    xs, ys, ids = [], [], []
    for line in lines:
        quad = np.round(np.asarray(line.box, dtype=np.float64)).astype(np.int32)
        x0, y0 = np.clip(quad.min(0), 0, [w, h])
        x1, y1 = np.clip(quad.max(0) + 1, 0, [w, h])
        if x1 - x0 < 2 or y1 - y0 < 2:
            continue
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillPoly(mask, [quad - [x0, y0]], 1)
        ink = dark[y0:y1, x0:x1]
        if ink[mask > 0].mean() > 0.5:
            ink = 1 - ink
        by, bx = np.nonzero(ink & mask)
        xs.append(bx + x0)
        ys.append(by + y0)
        ids.append(np.full(len(bx), len(ids), np.int64))
    if not xs:
        return np.zeros(0), np.zeros(0), np.zeros(0, np.int64)
    return (np.concatenate(xs).astype(np.float64), np.concatenate(ys).astype(np.float64),
            np.concatenate(ids))
