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
cells of one table, not two columns. A long open rule down a gutter (a \\columnseprule) is the
page's, not a drawing's: charts set down the column beside it are figures of their own."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from model_cache.layout.geometry import Rect, centre_in, open_rules
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
    page_rule: float = 12.0  # an open vertical rule this long (line heights) may be a column's...
    own_rule: float = 1.5  # ...unless at most this many times the length of the drawing it touches


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
    rules = across + down
    return _figures(ink * (1 - text), text, h, params, rules), rules


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


def _figures(ink: np.ndarray, text: np.ndarray, h: float, params: FigureParams,
             rules: list[Rect] = ()) -> list[Rect]:
    """Figure regions. Where a long open rule runs down a region (a column's rule beside charts
    set down the column), the region is looked at again without it: if it falls into regions
    that stand apart, those are the figures (maybe none); if they overlap, the rule was the
    drawing's own (a table's or a diagram's line) and the region stays whole; so it does where
    one drawing is left, unless the rule had made it more than twice as large."""
    s = params.scale
    long_rules = [r for r in open_rules(rules, h * s) if r[3] - r[1] >= params.page_rule * h * s]
    whole = _regions(ink, text, h, params)
    if not long_rules:
        return whole
    cut = ink.copy()
    for x0, y0, x1, y1 in long_rules:
        cut[int(y0 // s):int(np.ceil(y1 / s)), int(x0 // s):int(np.ceil(x1 / s))] = 0
    parts = _regions(cut, text, h, params, long_rules)
    out = []
    for region in whole:
        inside = [p for p in parts if centre_in(p, region)]
        ruled = any(centre_in(r, region) for r in long_rules)
        apart = all(not _overlap(a, b) for i, a in enumerate(inside) for b in inside[i + 1:])
        if len(inside) == 1:  # one drawing beside the rule: cut only if the rule made it much larger
            apart = _area(inside[0]) < 0.5 * _area(region)
        out.extend(inside if ruled and apart else [region])
    return out


def _area(r: Rect) -> float:
    return (r[2] - r[0]) * (r[3] - r[1])


def _overlap(a: Rect, b: Rect) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _regions(ink: np.ndarray, text: np.ndarray, h: float, params: FigureParams,
             erased: list[Rect] = ()) -> list[Rect]:
    """Regions of the ink that pass as drawings; each takes back the `erased` rules that are its
    own (`_with_own_rules`)."""
    s = params.scale
    k = max(1, int(round(params.join * h)))
    grown = cv2.dilate(ink, np.ones((k, k), np.uint8))
    g = (k // 2) * s  # the rules grown as the ink was
    grown_rules = [(x0 - g, y0 - g, x1 + g, y1 + g) for x0, y0, x1, y1 in erased]
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
            drawing = _with_own_rules((x * s, y * s, (x + w) * s, (y + hh) * s), grown_rules, params.own_rule)
            m = params.join * h * s  # take in labels set just outside the drawing (axis titles)
            regions.append((float(drawing[0] - m), float(drawing[1] - m), float(drawing[2] + m),
                            float(drawing[3] + m)))
    return regions


def _with_own_rules(region: Rect, rules: list[Rect], own: float) -> Rect:
    """The region grown over the (vertical) rules it touches that are its own: a chart's axis,
    about as tall as the drawing, where a column's rule runs on far past it."""
    x0, y0, x1, y1 = region
    for r0, s0, r1, s1 in rules:
        if r0 <= x1 and r1 >= x0 and s0 <= y1 and s1 >= y0 and s1 - s0 <= own * (y1 - y0):
            x0, y0, x1, y1 = min(x0, r0), min(y0, s0), max(x1, r1), max(y1, s1)
    return x0, y0, x1, y1


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
