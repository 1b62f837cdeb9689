"""Dot leaders (tables of contents: "Title . . . . . 29"). The detector does not see the
dots as text, so a TOC row comes out as "Title" and "29"; this finds the dots in the gap
between two boxes of one row. The finding is a typed annotation (`LayoutLine.leader`): the
layout stage joins the row into "Title ... 29"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np

from model_cache.layout.lines import LayoutLine, line_bounds, reads_as_page_numbers

Box = tuple[float, float, float, float]  # x0, y0, x1, y1

MAX_DOT_BREAK = 3.0  # the widest gap between two dots of one leader, in dot pitches (a speck lost)
MAX_DOT_SLOPE = 0.05  # dy/dx of the line through the dots: a scan's skew, not a slant across letters
MAX_DOT_OFF = 0.1  # how far a dot may sit off that line, in row heights (4 in 5 dots must not)
# How far the dots may stop short of the gap's ends, in dot pitches. Before a box that reads as a
# page number the right end may be further off: LaTeX's contents right-align the number in a
# 1.55 em box that the dots stop an em before, so a one-digit number leaves ~2.6 pitches.
LEAD_IN, LEAD_TO_NUMBER = 2.5, 3.5


def is_leader(gray: np.ndarray, x0: float, x1: float, y0: float, y1: float,
              row_height: float | None = None, lead_out: float = LEAD_IN) -> bool:
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
    typical = _dot_pitch(centroids[1:count][inside], h)
    if typical is None:
        return False
    xs = np.sort(centroids[1:count][inside, 0])
    fills = xs[0] < LEAD_IN * typical and (right - left) - xs[-1] < lead_out * typical
    cut = stats[1:count][~inside]
    return bool(fills and not _glyph_after_dots(blobs, centroids[1:count][inside, 0], cut, ink.shape[0], h))


def _glyph_after_dots(blobs: np.ndarray, xs: np.ndarray, cut: np.ndarray, depth: int, h: float) -> bool:
    """Does a glyph stand after the dots: a last blob several times a dot's size, or one that the
    band's top edge cuts and that reaches down most of the band? Then the dots run to a target
    the detector did not box (a lone page number), and the box beyond it is the next column's
    line, not the target."""
    size = np.maximum(blobs[:, cv2.CC_STAT_WIDTH], blobs[:, cv2.CC_STAT_HEIGHT])
    big = size > max(2.5 * float(np.median(size)), 0.2 * h)
    if big[int(np.argmax(xs))]:
        return True
    tall = (cut[:, cv2.CC_STAT_TOP] == 0) & (cut[:, cv2.CC_STAT_HEIGHT] >= 0.5 * depth)
    return bool((tall & (cut[:, cv2.CC_STAT_LEFT] > xs.max())).any())


def _dot_pitch(centres: np.ndarray, h: float) -> float | None:
    """The pitch of blobs (centres x, y) that read as one leader's dots: on one nearly level line
    (not specks from the letters of the rows above and below), at a regular pitch, unbroken;
    else None. A leader runs unbroken to its target: dots that stop and start again after a
    blank of several pitches are two leaders, either side of a column gutter (a tight index)."""
    if not _on_one_line(centres, h):
        return None
    pitch = np.diff(np.sort(centres[:, 0]))
    typical = float(np.median(pitch))
    regular = np.mean(np.abs(pitch - typical) <= 0.35 * typical) >= 0.8
    unbroken = pitch.max() <= MAX_DOT_BREAK * typical
    return typical if typical > 0 and regular and unbroken else None


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


def page_slope(lines: list[LayoutLine], boxes: list[Box]) -> float:
    """The median slope of the page's long boxes (short ones, like 'dirs' or a page number,
    give no direction of their own)."""
    slopes = [_slope(line) for line, (x0, y0, x1, y1) in zip(lines, boxes) if x1 - x0 > 3 * (y1 - y0)]
    return float(np.median(slopes)) if slopes else 0.0


def _nearest_on_row(boxes: list[Box], slope: float) -> np.ndarray:
    """For each box, the index of the nearest box right of it on its row, or -1. On its row: its
    centre lies on the box's centre line carried across the gap (within 0.4 of the lower box's
    height), or the two overlap by 0.6 of it in height."""
    if not boxes:
        return np.zeros(0, dtype=int)
    x0, y0, x1, y1 = np.asarray(boxes, dtype=np.float64).T
    cx, cy, h = (x0 + x1) / 2, (y0 + y1) / 2, y1 - y0
    short = np.minimum(h[:, None], h[None, :])
    level = np.abs(cy[:, None] + slope * (cx[None, :] - cx[:, None]) - cy[None, :]) <= 0.4 * short
    overlap = np.minimum(y1[:, None], y1[None, :]) - np.maximum(y0[:, None], y0[None, :]) >= 0.6 * short
    candidate = (level | overlap) & (x0[None, :] > x1[:, None])
    nearest = np.where(candidate, x0[None, :], np.inf).argmin(axis=1)
    return np.where(candidate.any(axis=1), nearest, -1)


def leader_pairs(rgb: np.ndarray, lines: list[LayoutLine]) -> list[tuple[int, int]]:
    """(i, j) for each two horizontally adjacent boxes of one row, i left of j, whose gap holds
    dots: a dot leader runs from line i to line j. In the order of i."""
    boxes = [line_bounds(line) for line in lines]
    found: list[tuple[int, int]] = []
    for i, j in enumerate(_nearest_on_row(boxes, page_slope(lines, boxes))):
        if j < 0:
            continue
        ax0, ay0, ax1, ay1 = boxes[i]
        bx0, by0, bx1, by1 = boxes[j]
        h = ay1 - ay0
        row = min(h, by1 - by0)
        lead_out = LEAD_TO_NUMBER if reads_as_page_numbers(lines[j].text) else LEAD_IN
        if bx0 - ax1 >= 1.5 * h and _gap_has_leader(rgb, ax1, bx0, min(ay0, by0), max(ay1, by1), row, lead_out):
            found.append((i, int(j)))
    return found


def _gap_has_leader(rgb: np.ndarray, x0: float, x1: float, y0: float, y1: float, row: float,
                    lead_out: float) -> bool:
    h, w = rgb.shape[:2]
    ys, ye = max(0, int(y0)), min(h, int(np.ceil(y1)))
    xs, xe = max(0, int(x0)), min(w, int(np.ceil(x1)))
    if ye <= ys or xe <= xs:
        return False
    # The darkest channel, as in `_band`: a red or blue page number after the dots is as dark as
    # black there, where the channels' mean and the median filter lose its thin strokes.
    gray = rgb[ys:ye, xs:xe].min(axis=2)
    return is_leader(gray, 0, xe - xs, 0, ye - ys, row, lead_out)


def with_leaders(rgb: np.ndarray, lines: list[LayoutLine],
                 read_targets: Callable[[list[Box]], list[LayoutLine]] | None = None) -> list[LayoutLine]:
    """`lines`, each that a dot leader joins to the next box on its row annotated `leader`.
    With `read_targets` (boxes -> the lines read there), the page numbers that leaders run to
    where the detector found no box (missed_targets) are read and added first."""
    starts = {i for i, _ in leader_pairs(rgb, lines)}
    if read_targets is not None:
        targets = missed_targets(rgb, lines, starts)
        found = read_targets(targets) if targets else []
        if found:
            lines = lines + found
            starts = {i for i, _ in leader_pairs(rgb, lines)}
    return [replace(line, leader=True) if i in starts else line for i, line in enumerate(lines)]


MAX_TARGET_WIDTH = 5.0  # a leader's target ("29", "4, 117", "xiv") at most this many row heights wide
MIN_LEADER_DOTS = 4


def missed_targets(rgb: np.ndarray, lines: list[LayoutLine], starts: set[int] | None = None) -> list[Box]:
    """Boxes (x0, y0, x1, y1) of the ink a dot leader runs to where the detector found no box:
    the page number of "Title . . . . 29" read as "Title" alone (a lone thin "1", old-style or
    coloured figures). Each is looked for right of a line that no found leader starts from, up
    to the next box on its row. `starts`: the lines found leaders start from, if known."""
    boxes = [line_bounds(line) for line in lines]
    if not boxes:
        return []
    nearest = _nearest_on_row(boxes, page_slope(lines, boxes))
    rights = [boxes[j][0] if j >= 0 else rgb.shape[1] for j in nearest]
    if starts is None:
        starts = {i for i, _ in leader_pairs(rgb, lines)}
    found = []
    for i, box in enumerate(boxes):
        h = box[3] - box[1]
        if i in starts or h <= 0 or rights[i] - box[2] < 3 * h or not _dots_start(rgb, box):
            continue
        target = _target_after_dots(rgb, box, rights[i])
        if target is not None:
            found.append(target)
    return found


def _band(rgb: np.ndarray, x0: float, x1: float, y0: float, y1: float,
          smooth: bool = True) -> tuple[np.ndarray, float] | None:
    """(the darkest channel of the page between x0..x1 and y0..y1, its ink threshold); None
    where it is empty or holds no contrast. The darkest channel keeps coloured ink (red or blue
    page numbers of a hyperlinked index) as dark as black; `smooth` takes specks out first."""
    xs, xe = max(0, int(np.ceil(x0))), min(rgb.shape[1], int(x1))
    ys, ye = max(0, int(y0)), min(rgb.shape[0], int(np.ceil(y1)))
    if xe <= xs or ye <= ys:
        return None
    band = np.ascontiguousarray(rgb[ys:ye, xs:xe].min(axis=2))
    if smooth:
        band = cv2.medianBlur(band, 3)
    lo, hi = int(band.min()), int(band.max())
    return (band, (lo + hi) / 2) if hi - lo >= 60 else None


def _dots_start(rgb: np.ndarray, box: Box) -> bool:
    """Cheap first look: small blobs in the lower part of the row just right of the box."""
    x0, y0, x1, y1 = box
    h = y1 - y0
    found = _band(rgb, x1, x1 + 4 * h, y0 + 0.35 * h, y1, smooth=False)
    if found is None:
        return False
    count, _, stats, _ = cv2.connectedComponentsWithStats((found[0] < found[1]).astype(np.uint8), connectivity=8)
    small = (stats[1:, cv2.CC_STAT_WIDTH] <= 0.3 * h) & (stats[1:, cv2.CC_STAT_HEIGHT] <= 0.3 * h)
    return int(small.sum()) >= 2


def _target_after_dots(rgb: np.ndarray, box: Box,
                       right: float) -> Box | None:
    """The ink after a run of leader dots that starts at the box's right end, or None."""
    _, y0, x1, y1 = box
    h = y1 - y0
    found = _band(rgb, x1, right, y0, y1)
    if found is None:
        return None
    band, threshold = found
    count, _, stats, centroids = cv2.connectedComponentsWithStats((band < threshold).astype(np.uint8), 8)
    spans = [(int(s[cv2.CC_STAT_LEFT]), int(s[cv2.CC_STAT_LEFT] + s[cv2.CC_STAT_WIDTH]),
              bool(s[cv2.CC_STAT_WIDTH] <= 0.3 * h and s[cv2.CC_STAT_HEIGHT] <= 0.3 * h), centroids[k])
             for k, s in enumerate(stats) if k > 0]
    spans.sort(key=lambda span: span[0])
    dots = len(spans) if all(span[2] for span in spans) else next(k for k, span in enumerate(spans) if not span[2])
    pitch = _leader_pitch(np.array([span[3] for span in spans[:dots]]), spans[0][0] if spans else 0, h)
    if pitch is None or dots == len(spans) or spans[dots][0] - spans[dots - 1][1] > max(3 * pitch, 1.5 * h):
        return None  # no leader, or dots that stop short of anything
    left, end = _target_span(spans[dots:], h)
    if end - left > MAX_TARGET_WIDTH * h or end - left < 0.15 * h:
        return None
    xs, pad = max(0, int(np.ceil(x1))), 0.2 * h
    return (xs + left - pad, y0, min(float(rgb.shape[1]), xs + end + pad), y1)


def _leader_pitch(centres: np.ndarray, start: float, h: float) -> float | None:
    """The dots' pitch when they are a leader: at least MIN_LEADER_DOTS, starting within 2.5 row
    heights of the box, and _dot_pitch's tests; else None."""
    if len(centres) < MIN_LEADER_DOTS or start > 2.5 * h:
        return None
    return _dot_pitch(centres, h)


def _target_span(spans: list, h: float) -> tuple[int, int]:
    """(left, right) of the ink from the first blob on, up to a blank wider than a word space."""
    left, end = spans[0][0], spans[0][1]
    for x0, x1, _, _ in spans[1:]:
        if x0 - end > 0.8 * h:
            break
        end = max(end, x1)
    return left, end
