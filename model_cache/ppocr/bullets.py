"""List bullets the detector does not see. A slide's "▶" or a manual's "•" is a lone solid mark
left of its line, too small and too far from the words for DB to box it with them, and alone
the recogniser does not read it (it says "-" or "A" at low confidence). This finds one solid
mark just left of a recognised line (or just inside its box: the detector's box may take in
part of its bullet), level with it, names it by its shape (triangle, disc, square) and records
it as the line's `bullet` annotation for the layout stage."""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from model_cache.layout.lines import LayoutLine, line_bounds, with_bullet
from outputs.model import Word

TRIANGLE, DISC, SQUARE = "▶", "•", "■"


@dataclass(frozen=True)
class BulletParams:
    reach: float = 2.0  # how far left of a line to look, in line heights
    overlap: float = 1.2  # ...and how far into its box (a box may start inside its bullet)
    min_size: float = 0.15  # a mark's height, as a share of the line box's height...
    max_size: float = 0.6  # ...(the box includes the detector's margin around the text)
    level: float = 0.2  # the mark's centre within this share of the height of the line's centre
    gap: float = 0.2  # blank between the mark and the text after it, in line heights
    speck: int = 3  # ink components of fewer pixels are noise


LEADING_MARKS = frozenset("-*–")  # a line read with one of these already has its bullet


def with_bullets(rgb: np.ndarray, lines: list[LayoutLine],
                 params: BulletParams = BulletParams()) -> list[LayoutLine]:
    """`lines`, each that has a bullet before it annotated with it, its box widened to take
    in the bullet."""
    if not lines:
        return lines
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    threshold, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    bounds = [line_bounds(line) for line in lines]
    out = []
    for line in lines:
        out.append(line)
        if line.bullet or line.text[:1] in LEADING_MARKS:
            continue
        # The box's left edge, not its bounds: on a skewed page a long line's bounds span
        # the lines above and below it, and their bullets.
        (lx0, ly0), (lx3, ly3) = line.box[0], line.box[3]
        x, y0, y1 = min(lx0, lx3), min(ly0, ly3), max(ly0, ly3)
        h = y1 - y0
        left = max(0.0, x - params.reach * h)
        for (bx0, by0, bx1, by1) in bounds:  # stop at any text box between the mark and the line
            if x > bx1 > left and by0 < y1 and by1 > y0:
                left = bx1
        right = min(float(gray.shape[1]), x + params.overlap * h)
        mark = _lone_mark(gray, threshold, int(left), int(right), int(y0), int(np.ceil(y1)), params)
        if mark is not None:
            glyph, mark_x = mark
            start = min(mark_x, x)
            box = [[start, ly0], list(line.box[1]), list(line.box[2]), [start, ly3]]
            mark_word = Word(glyph, line.conf, [[start, ly0], [x, ly0], [x, ly3], [start, ly3]])
            words = [mark_word, *line.words] if line.words is not None else None
            out[-1] = replace(with_bullet(line, glyph, box), words=words)
    return out


def _lone_mark(gray: np.ndarray, threshold: float, x0: int, x1: int, y0: int, y1: int,
               params: BulletParams) -> tuple[str, float] | None:
    """(bullet, its left x) of the one solid mark that leads the region, if there is one."""
    h = y1 - y0
    if x1 - x0 < params.min_size * h or h <= 0:
        return None
    ink = (gray[y0:y1, x0:x1] < threshold).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    marks = sorted((i for i in range(1, count) if stats[i, cv2.CC_STAT_AREA] >= params.speck),
                   key=lambda i: stats[i, cv2.CC_STAT_LEFT])
    if not marks:
        return None
    # The leftmost ink is the candidate; what follows it, after a clear gap, is the line's
    # own text (the region reaches into the line's box, which may start inside its bullet).
    i = marks[0]
    end = stats[i, cv2.CC_STAT_LEFT] + stats[i, cv2.CC_STAT_WIDTH]
    if end >= ink.shape[1] or any(stats[j, cv2.CC_STAT_LEFT] < end + params.gap * h for j in marks[1:]):
        return None
    left, top, width, height = (int(stats[i, k]) for k in (cv2.CC_STAT_LEFT, cv2.CC_STAT_TOP,
                                                           cv2.CC_STAT_WIDTH, cv2.CC_STAT_HEIGHT))
    touches = left == 0 or top == 0 or top + height == h
    centred = abs(top + height / 2 - h / 2) <= params.level * h
    if touches or not centred or not params.min_size * h <= height <= params.max_size * h:
        return None
    glyph = classify(labels[top:top + height, left:left + width] == i)
    return None if glyph is None else (glyph, float(x0 + left))


def classify(mask: np.ndarray) -> str | None:
    """The bullet a mark is, by its shape, or None. Only solid marks count (every row and column
    of ink one unbroken run: letters have holes and several strokes); then a right-pointing
    triangle narrows steadily from a full-height left edge, a disc is round, a square is full."""
    height, width = mask.shape
    if not 0.6 <= width / height <= 1.6 or min(height, width) < 3 or not (_solid(mask) and _solid(mask.T)):
        return None
    fill = mask.mean()
    columns = mask.sum(axis=0).astype(np.float64)
    if fill >= 0.88:
        return SQUARE
    if 0.35 <= fill <= 0.7 and _narrows(columns) and columns[:max(1, width // 4)].mean() >= 0.6 * height:
        return TRIANGLE
    tallest = np.flatnonzero(columns >= columns.max() - 0.5)
    middle = width / 4 <= tallest.mean() <= 3 * width / 4
    if 0.62 <= fill < 0.88 and 0.75 <= width / height <= 1.33 and middle:
        return DISC
    return None


def _narrows(columns: np.ndarray) -> bool:
    """Column heights fall steadily from left to right (a stray pixel column at either end,
    from noise or anti-aliasing, is left out)."""
    kept = np.flatnonzero(columns >= 0.25 * columns.max())
    core = columns[kept[0]:kept[-1] + 1]
    return len(core) >= 3 and core.std() > 0 and np.corrcoef(np.arange(len(core)), core)[0, 1] <= -0.85


def _solid(mask: np.ndarray, share: float = 0.8) -> bool:
    """Every row of `mask` with ink has it in one run (allowing a pixel or two of noise)."""
    for row in mask:
        ink = np.flatnonzero(row)
        if len(ink) and len(ink) < share * (ink[-1] - ink[0] + 1):
            return False
    return True
