"""Dot leaders (tables of contents: "Title . . . . . 29"). The detector does not see the
dots as text, so a TOC row comes out as "Title" and "29"; this finds the dots in the gap
between two boxes of one row. The finding is a typed annotation (`LayoutLine.leader`): the
layout stage joins the row into "Title ... 29"."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from model_cache.layout.lines import LayoutLine

MAX_DOT_BREAK = 3.0  # the widest gap between two dots of one leader, in dot pitches (a speck lost)
MAX_DOT_SLOPE = 0.05  # dy/dx of the line through the dots: a scan's skew, not a slant across letters
MAX_DOT_OFF = 0.1  # how far a dot may sit off that line, in row heights (4 in 5 dots must not)


def line_bounds(line: LayoutLine) -> tuple[float, float, float, float]:
    pts = np.asarray(line.box, dtype=np.float64)
    return pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max()


def is_leader(gray: np.ndarray, x0: float, x1: float, y0: float, y1: float,
              row_height: float | None = None) -> bool:
    """Regular small dark dots along the lower part of the row between x0 and x1 (y0..y1 may
    span both boxes of a skewed row; `row_height` is then one box's height). Dots are taken as
    connected blobs after a 3x3 median (scanner noise and JPEG specks vanish, dots of 2+ pixels
    stay); blobs cut by the band's top or bottom edge belong to other lines and are ignored."""
    h = row_height or (y1 - y0)
    top, bottom = int(round(y0 + 0.35 * h)), int(round(y1))
    left, right = int(round(x0 + 0.1 * h)), int(round(x1 - 0.1 * h))
    if right - left < 1.5 * h or bottom <= top:
        return False
    band = cv2.medianBlur(np.ascontiguousarray(gray[top:bottom, left:right], dtype=np.uint8), 3)
    lo, hi = float(band.min()), float(np.percentile(band, 90))
    if hi - lo < 60:
        return False  # no contrast: nothing there
    ink = (band < (lo + hi) / 2).astype(np.uint8)
    count, _, stats, centroids = cv2.connectedComponentsWithStats(ink, connectivity=8)
    inside = ((stats[1:count, cv2.CC_STAT_TOP] > 0) &
              (stats[1:count, cv2.CC_STAT_TOP] + stats[1:count, cv2.CC_STAT_HEIGHT] < ink.shape[0]))
    blobs = stats[1:count][inside]
    if len(blobs) < 3:
        return False
    if (blobs[:, cv2.CC_STAT_WIDTH] > 0.35 * h).any() or (blobs[:, cv2.CC_STAT_HEIGHT] > 0.35 * h).any():
        return False  # wider or taller than a dot: a letter, a rule
    if not _on_one_line(centroids[1:count][inside], h):
        return False  # specks from the letters of the row below or above, not a leader's dots
    xs = np.sort(centroids[1:count][inside, 0])
    pitch = np.diff(xs)
    typical = float(np.median(pitch))
    regular = np.mean(np.abs(pitch - typical) <= 0.35 * typical) >= 0.8
    covered = xs[0] < 2.5 * typical and (right - left) - xs[-1] < 2.5 * typical
    # A leader runs unbroken to its target: dots that stop and start again after a blank of
    # several pitches are two leaders, on either side of a column gutter (a tight index).
    unbroken = pitch.max() <= MAX_DOT_BREAK * typical
    return bool(typical > 0 and regular and covered and unbroken)


def _on_one_line(centres: np.ndarray, h: float) -> bool:
    """Do most blobs lie on one nearly level line, as a leader's dots sit on the baseline? The
    line's slope is the median of the pairwise slopes, so a stray speck does not tilt it."""
    x, y = centres[:, 0], centres[:, 1]
    i, j = np.triu_indices(len(x), 1)
    dx = x[j] - x[i]
    keep = dx > 0
    if not keep.any():
        return False
    slope = float(np.median((y[j] - y[i])[keep] / dx[keep]))
    off = y - slope * x
    near = np.abs(off - np.median(off)) <= MAX_DOT_OFF * h
    return abs(slope) <= MAX_DOT_SLOPE and float(np.mean(near)) >= 0.8


def _slope(line: LayoutLine) -> float:
    """dy/dx of the box's long edges (a skewed scan's rows are not level)."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = np.asarray(line.box, dtype=np.float64)[:4]
    run = (x1 - x0) + (x2 - x3)
    return float(((y1 - y0) + (y2 - y3)) / run) if run > 0 else 0.0


def page_slope(lines: list[LayoutLine], boxes: list[tuple[float, float, float, float]]) -> float:
    """The median slope of the page's long boxes (short ones, like 'dirs' or a page number,
    give no direction of their own)."""
    slopes = [_slope(line) for line, (x0, y0, x1, y1) in zip(lines, boxes) if x1 - x0 > 3 * (y1 - y0)]
    return float(np.median(slopes)) if slopes else 0.0


def _same_row(a: tuple[float, float, float, float], b: tuple[float, float, float, float], slope: float) -> bool:
    """b's centre lies on a's centre line carried across the gap, within 0.4 of a box height."""
    ax0, ay0, ax1, ay1 = a
    bx0, by0, bx1, by1 = b
    predicted = (ay0 + ay1) / 2 + slope * ((bx0 + bx1) / 2 - (ax0 + ax1) / 2)
    level = abs(predicted - (by0 + by1) / 2) <= 0.4 * min(ay1 - ay0, by1 - by0)
    overlap = min(ay1, by1) - max(ay0, by0) >= 0.6 * min(ay1 - ay0, by1 - by0)
    return level or overlap


def leader_pairs(rgb: np.ndarray, lines: list[LayoutLine]) -> list[tuple[int, int]]:
    """(i, j) for each two horizontally adjacent boxes of one row, i left of j, whose gap holds
    dots: a dot leader runs from line i to line j."""
    boxes = [line_bounds(line) for line in lines]
    order = sorted(range(len(lines)), key=lambda i: boxes[i][0])
    slope = page_slope(lines, boxes)
    found: list[tuple[int, int]] = []
    for pos, i in enumerate(order):
        ax0, ay0, ax1, ay1 = boxes[i]
        h = ay1 - ay0
        for j in order[pos + 1:]:
            bx0, by0, bx1, by1 = boxes[j]
            if bx0 <= ax1 or not _same_row(boxes[i], boxes[j], slope):
                continue
            row = min(h, by1 - by0)
            if bx0 - ax1 >= 1.5 * h and _gap_has_leader(rgb, ax1, bx0, min(ay0, by0), max(ay1, by1), row):
                found.append((i, j))
            break  # only the nearest box to the right on this row
    return found


def _gap_has_leader(rgb: np.ndarray, x0: float, x1: float, y0: float, y1: float, row: float) -> bool:
    h, w = rgb.shape[:2]
    ys, ye = max(0, int(y0)), min(h, int(np.ceil(y1)))
    xs, xe = max(0, int(x0)), min(w, int(np.ceil(x1)))
    if ye <= ys or xe <= xs:
        return False
    gray = rgb[ys:ye, xs:xe].mean(axis=2)
    return is_leader(gray, 0, xe - xs, 0, ye - ys, row)


def with_leaders(rgb: np.ndarray, lines: list[LayoutLine]) -> list[LayoutLine]:
    """`lines`, each that a dot leader joins to the next box on its row annotated `leader`."""
    starts = {i for i, _ in leader_pairs(rgb, lines)}
    return [replace(line, leader=True) if i in starts else line for i, line in enumerate(lines)]
