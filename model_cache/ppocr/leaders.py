"""Dot leaders (tables of contents: "Title . . . . . 29"). The detector does not see the
dots as text, so a TOC row comes out as "Title" and "29"; this finds the dots in the gap
between two boxes of one row and adds a "..." line there, which the layout then joins
into "Title ... 29"."""

from __future__ import annotations

import numpy as np

from outputs.model import Line

LEADER_TEXT = "..."


def _bounds(line: Line) -> tuple[float, float, float, float]:
    pts = np.asarray(line.box, dtype=np.float64)
    return pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max()


def is_leader(gray: np.ndarray, x0: float, x1: float, y0: float, y1: float) -> bool:
    """Regular small dark dots along the lower part of the row between x0 and x1 (each dot
    is checked on its own, so a slightly skewed row of dots still counts)."""
    h = y1 - y0
    top, bottom = int(round(y0 + 0.35 * h)), int(round(y1))
    left, right = int(round(x0 + 0.1 * h)), int(round(x1 - 0.1 * h))
    if right - left < 1.5 * h or bottom <= top:
        return False
    band = gray[top:bottom, left:right]
    lo, hi = float(band.min()), float(np.percentile(band, 90))
    if hi - lo < 60:
        return False  # no contrast: nothing there
    ink = band < (lo + hi) / 2
    cols = ink.any(axis=0).astype(np.int8)
    edges = np.diff(np.concatenate([[0], cols, [0]]))
    starts, ends = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    if len(starts) < 3 or (ends - starts).max() > 0.35 * h:
        return False
    for a, b in zip(starts, ends):
        rows = np.nonzero(ink[:, a:b].any(axis=1))[0]
        if rows[-1] - rows[0] + 1 > 0.35 * h:
            return False  # taller than a dot: a letter, a rule seen end-on
    pitch = np.diff(starts)
    regular = pitch.std() <= 0.35 * pitch.mean()
    covered = starts[0] < 2.5 * pitch.mean() and (right - left) - ends[-1] < 2.5 * pitch.mean()
    return bool(regular and covered)


def leader_lines(rgb: np.ndarray, lines: list[Line]) -> list[Line]:
    """'...' lines for the gaps between horizontally adjacent boxes of one row that hold dots."""
    boxes = [_bounds(line) for line in lines]
    order = sorted(range(len(lines)), key=lambda i: boxes[i][0])
    found: list[Line] = []
    for pos, i in enumerate(order):
        ax0, ay0, ax1, ay1 = boxes[i]
        h = ay1 - ay0
        for j in order[pos + 1:]:
            bx0, by0, bx1, by1 = boxes[j]
            overlap = min(ay1, by1) - max(ay0, by0)
            if overlap < 0.6 * min(h, by1 - by0) or bx0 <= ax1:
                continue
            if bx0 - ax1 >= 1.5 * h and _gap_has_leader(rgb, ax1, bx0, max(ay0, by0), min(ay1, by1)):
                y0, y1 = max(ay0, by0), min(ay1, by1)
                found.append(Line(LEADER_TEXT, 1.0, [[ax1, y0], [bx0, y0], [bx0, y1], [ax1, y1]]))
            break  # only the nearest box to the right on this row
    return found


def _gap_has_leader(rgb: np.ndarray, x0: float, x1: float, y0: float, y1: float) -> bool:
    h, w = rgb.shape[:2]
    ys, ye = max(0, int(y0)), min(h, int(np.ceil(y1)))
    xs, xe = max(0, int(x0)), min(w, int(np.ceil(x1)))
    if ye <= ys or xe <= xs:
        return False
    gray = rgb[ys:ye, xs:xe].mean(axis=2)
    return is_leader(gray, 0, xe - xs, 0, ye - ys)
