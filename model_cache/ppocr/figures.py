"""Non-text regions (figures, charts, diagrams, photos) and rules found from the page's ink.

Ink left after the recognised lines are erased is grouped into regions; a region is a figure
when it is large (several line heights each way), holds a drawn stroke and ink inside, not only
a frame around text or a shaded background behind it, and little text (a ruled table's grid
holds rows of text; a chart's labels are sparse). The regions go to the layout stage, which reads the
lines inside one (a chart's labels) together as a `figure` block instead of letting them break
the page's columns.

A rule is a long, thin stroke of that ink, horizontal (a table's top, middle or bottom rule, a
row's line in a ruled grid) or vertical (a grid's inner line); the layout stage takes one that runs
across a gutter between rows of text, or a closed one down it, as a sign that the two sides are
cells of one table, not two columns."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from model_cache.layout.geometry import Rect
from model_cache.layout.lines import LayoutLine, line_bounds


@dataclass(frozen=True)
class FigureParams:
    scale: int = 4  # work on the page shrunk this much
    min_size: float = 3.0  # a region's width and height, in median line heights...
    min_ink: float = 0.02  # ...with this share of its inside (frame left out) inked...
    max_ink: float = 0.7  # ...but not this much (a shaded box behind text)
    max_page: float = 0.6  # a region over this share of the page is a page frame, not a figure
    max_text: float = 0.25  # text over this share of it: a ruled table or a boxed text, not a figure
    join: float = 1.0  # ink closer than this (line heights) is one region
    stroke: float = 2.0  # a drawing has a connected stroke this wide and high (line heights)
    rule_length: float = 4.0  # a horizontal rule: a stroke at least this long...
    rule_width: float = 0.3  # ...and at most this thick (line heights)


def figure_regions(rgb: np.ndarray, lines: list[LayoutLine],
                   params: FigureParams = FigureParams()) -> list[Rect]:
    return non_text(rgb, lines, params)[0]


def non_text(rgb: np.ndarray, lines: list[LayoutLine],
             params: FigureParams = FigureParams()) -> tuple[list[Rect], list[Rect]]:
    """(figure regions, rules) of the page, from one pass over its ink: the rules horizontal
    (wider than high) and vertical (higher than wide)."""
    if not lines:
        return [], []
    ink, text, h = _ink_beside_text(rgb, lines, params)
    across = _rules(ink, text, h, params)
    down = [(y0, x0, y1, x1) for x0, y0, x1, y1 in _rules(ink.T, text.T, h, params)]
    return _figures(ink * (1 - text), text, h, params), across + down


def _ink_beside_text(rgb: np.ndarray, lines: list[LayoutLine],
                     params: FigureParams) -> tuple[np.ndarray, np.ndarray, float]:
    """The page's ink shrunk `scale` times (thin strokes kept); the recognised lines' mask (their
    boxes, a little grown); the median line height in shrunk pixels."""
    s = params.scale
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    threshold, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    full = (gray < min(max(threshold, 100), 200)).astype(np.uint8)  # Otsu says 0 on pure black and white
    rows, cols = full.shape[0] // s, full.shape[1] // s  # shrink keeping thin strokes: max-pool,
    # as a dilation by an s x s block anchored at its corner, sampled every s pixels (OpenCV's
    # is ~30x numpy's reshape-and-max here, ~20 ms a page at 200 dpi, with the same result)
    block = np.ascontiguousarray(full[:rows * s, :cols * s])
    ink = cv2.dilate(block, np.ones((s, s), np.uint8), anchor=(0, 0))[::s, ::s].copy()
    heights = [y1 - y0 for _, y0, _, y1 in map(line_bounds, lines)]
    h = float(np.median(heights)) / s
    text = np.zeros_like(ink)
    for line in lines:  # the text, with a small margin
        x0, y0, x1, y1 = (v / s for v in line_bounds(line))
        pad = 0.15 * (y1 - y0)
        text[max(0, int(y0 - pad)):int(np.ceil(y1 + pad)), max(0, int(x0 - pad)):int(np.ceil(x1 + pad))] = 1
    return ink, text, h


def _rules(ink: np.ndarray, text: np.ndarray, h: float, params: FigureParams) -> list[Rect]:
    """Horizontal strokes (vertical ones, given the transposed ink) at least `rule_length` line
    heights long and at most `rule_width` of one thick (in page pixels: x0, y0, x1, y1), found with
    the text left in (a rule often runs
    through the padded boxes of the rows beside it), but not lying wholly inside text boxes (the
    touching serifs of a typewriter line, shrunk, make such a run). The ink is first thickened by
    a pixel up and down, so that a scanned page's rule, a degree or two off level, still runs
    unbroken: its box is then a little taller than the rule, its thickness its area per column."""
    s = params.scale
    length = max(3, int(round(params.rule_length * h)))
    band = cv2.dilate(ink, np.ones((3, 1), np.uint8))
    runs = cv2.morphologyEx(band, cv2.MORPH_OPEN, np.ones((1, length), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(runs, connectivity=8)
    rules = []
    for i in range(1, count):
        x, y, w, hh, area = (int(stats[i, j]) for j in (cv2.CC_STAT_LEFT, cv2.CC_STAT_TOP, cv2.CC_STAT_WIDTH,
                                                        cv2.CC_STAT_HEIGHT, cv2.CC_STAT_AREA))
        thick = area / w - 2  # less the thickening
        if thick <= max(1.0, params.rule_width * h) and text[y:y + hh, x:x + w].mean() < 0.9:
            rules.append((float(x * s), float(y * s), float((x + w) * s), float((y + hh) * s)))
    return rules


def _figures(ink: np.ndarray, text: np.ndarray, h: float, params: FigureParams) -> list[Rect]:
    s = params.scale
    k = max(1, int(round(params.join * h)))
    grown = cv2.dilate(ink, np.ones((k, k), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    strokes = _stroke_regions(ink, labels, params.stroke * h)
    page = ink.shape[0] * ink.shape[1]
    regions = []
    for i in range(1, count):
        x, y, w, hh = (int(stats[i, j]) for j in (cv2.CC_STAT_LEFT, cv2.CC_STAT_TOP,
                                                  cv2.CC_STAT_WIDTH, cv2.CC_STAT_HEIGHT))
        if w < params.min_size * h or hh < params.min_size * h or w * hh > params.max_page * page:
            continue
        if i not in strokes:
            continue  # only specks, dots and short marks: dot leaders, noise, stray symbols
        # The grown region reaches k/2 past its ink: leave that out, then an eighth each way,
        # so that a frame's own border is not counted as ink inside it.
        dy, dx = k // 2 + 1 + hh // 8, k // 2 + 1 + w // 8
        window = (slice(y + dy, y + hh - dy), slice(x + dx, x + w - dx))
        free = text[window] == 0  # the share is of what is not text
        share = float(ink[window][free].mean()) if free.any() else 0.0
        worded = 1.0 - float(free.mean()) if free.size else 1.0
        if params.min_ink <= share <= params.max_ink and worded <= params.max_text:
            m = params.join * h  # take in labels set just outside the drawing (axis titles)
            regions.append((float((x - m) * s), float((y - m) * s), float((x + w + m) * s),
                            float((y + hh + m) * s)))
    return regions


def _stroke_regions(ink: np.ndarray, labels: np.ndarray, size: float) -> set[int]:
    """Labels of the grown regions that hold one connected stroke at least `size` wide and
    high (an axis pair, a box, a curve, a photo), as drawings do and rows of dots do not."""
    count, parts, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    big = np.flatnonzero((stats[1:, cv2.CC_STAT_WIDTH] >= size) & (stats[1:, cv2.CC_STAT_HEIGHT] >= size)) + 1
    out = set()
    for j in big:
        ys, xs = np.nonzero(parts == j)
        out.add(int(labels[ys[0], xs[0]]))
    return out
