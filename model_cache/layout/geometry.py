"""Geometry shared by the reading-order steps: line boxes in the page's deskewed frame, rows
(with spanning table-header rows merged), boxes of one row joined, free vertical bands."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from model_cache.layout.lines import LEADER_TEXT, OCR, LayoutLine


Rect = tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels


@dataclass(frozen=True)
class LayoutParams:
    gutter: float = 0.6  # minimum column gutter, in median line heights (0.25 in at 10 pt is ~1.3)
    row_overlap: float = 0.5  # y-overlap (share of the smaller height) for two boxes to share a row
    aligned_share: float = 0.7  # rows-not-columns: share of short-side items with a partner
    short_item: float = 8.0  # rows-not-columns: median width of the short side, in line heights
    para_gap: float = 0.8  # a vertical gap above this (line heights) starts a new block
    para_pitch: float = 0.3  # ...and so does a line pitch this share above the region's usual one
    pitch_pairs: int = 3  # ...when that is the median of at least this many pairs of lines
    size_change: float = 1.3  # a height ratio above this starts a new block...
    same_type: float = 1.15  # ...unless both rows' mean character widths are within this ratio
    indent: float = 1.0  # first-line indent, in line heights
    short_line: float = 3.0  # slack (quarter line heights) on top of the next line's first word
    margin_band: float = 0.07  # margin notes: lines this near the top/bottom edge may cross the band
    running_band: float = 0.1  # header/footer: a single line within this share of the page height
    join_gap: float = 2.5  # boxes of one row closer than this (line heights) are one line
    note_width: float = 0.4  # margin notes: a side column this narrow relative to the body...
    note_share: float = 0.6  # ...with at most this many lines per body line...
    note_gap: float = 0.2  # ...apart from the body by a band this wide (line heights)...
    note_label: float = 2.5  # ...whose lines are wider than list labels (median, line heights)
    note_cut_reach: float = 1.0  # a line from the margin is cut at a word gap ending this near the body's edge
    note_baseline: float = 0.15  # a note line this close to a body line's centre (its height)...
    note_size: float = 0.8  # ...and at least this tall against it is read in the body line's row
    note_overrun: float = 0.5  # a note reaching this far below its paragraph is read before it
    pair_overlap: float = 0.25  # rows-not-columns: y-overlap for a short-side item to pair
    level_tol: float = 0.2  # rows-not-columns: middles this near (line heights) are level...
    level_share: float = 0.5  # ...as this share of the short side's items must be
    span_overlap: float = 0.4  # side-by-side rows overlapping this much are one (spanning) row
    column_gutter: float = 0.12  # a gutter narrower than this share of both sides' widths...
    column_rows: int = 4  # ...with this many rows on each side parts columns, rows aligned or not,
    column_fill: float = 0.2  # ...when each side's lines are this wide for its width (text)
    column_ratio: float = 2.0  # ...and neither side's column is more than this many times as wide
    label_width: float = 2.0  # sides that break apart at their own blanks: lines this wide (line heights), not labels
    fragment_rows: int = 3  # a box gutter with this few rows on one side (a letter heading) may be read across
    title_size: float = 1.25  # a short block set this much larger than the body is a title...
    numbered_title_size: float = 1.1  # ...and a numbered line ("2.4 Results") set this much larger
    title_pitch: float = 1.25  # ...or boxed that much taller with characters this much wider than the body's
    bold_stroke: float = 1.25  # ...and a short block drawn with strokes this much wider than the body's
    item_align: float = 0.5  # a line counting on a block's enumeration starts this near its first (line heights)
    cell_table_rows: int = 3  # a paragraph of this many lines, one a row...
    cell_gap: float = 1.0  # ...with bands this wide (line heights) free of words down it...
    cell_words: int = 4  # ...between cells of at most this many words (median) is a table
    header_gap: float = 2.0  # ...headed by a line this near above it (line heights) that its bands cut cleanly
    table_pieces: int = 3  # a gutter with lines on both sides in this many blank-separated pieces...
    cell_rows: int = 6  # ...none deeper than this many rows, parts table cells, not columns...
    deep_cell_share: int = 5  # ...save one piece in this many (a cell explained at length)
    sandwich_rows: int = 5  # a gutter this few rows deep between rows that cross it parts fields
    sandwich_gap: float = 1.5  # ...when those rows are this near (line heights: a blank line)
    tab_lines: int = 8  # a tab stop: this many OCR lines' ink starting at one x...
    tab_tol: float = 0.25  # ...within this many line heights
    index_tails: float = 0.5  # a column whose rows end in page numbers this often is an index's
    cross_reach: float = 4.0  # a line crossing a gutter: neighbours this near (line heights)...
    cross_gap: float = 0.3  # ...leave a gap this wide where the line has a word gap as wide
    cross_blank: float = 1.0  # ...where no line of their run (to a blank this deep) runs through it
    cross_hug: float = 2.0  # ...and, looked for twice as far, a gap no wider than this
    cross_wide: float = 3.0  # ...or, with lines beside its ends, a gap no wider than this
    cross_title: float = 1.2  # ...unless it is a title: a box this much taller than theirs...
    cross_pitch: float = 1.1  # ...with characters this much wider (larger type, not a taller box)
    river_rows: int = 8  # a band no word covers, a gutter wide, with words both sides on this many rows...
    river_lines: int = 3  # ...and inside one line on this many, is a gutter the detector ran across


@dataclass
class Item:
    line: LayoutLine
    x0: float
    y0: float
    x1: float
    y1: float
    h: float
    ids: tuple[int, ...] = ()  # the input lines this item stands for (several once joined)
    leaders: int = 0  # dot leaders inside it (a joined table-of-contents row)
    # The x extent of the line's ink: a detector pads its boxes (by ~0.1 of a line height each
    # side), so in a tight index two columns' boxes touch across the gutter. None: the box is ink.
    ink: tuple[float, float] | None = None

    @property
    def gx0(self) -> float:
        return self.ink[0] if self.ink else self.x0

    @property
    def gx1(self) -> float:
        return self.ink[1] if self.ink else self.x1

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


@dataclass
class Group:
    """A block in the making: items in reading order and the kind found for them."""
    items: list[Item]
    kind: str = "text"
    rows: list[list[Item]] | None = None  # a table's rows of cells


def page_skew(lines: list[LayoutLine]) -> float:
    """Median baseline angle (radians) of the longer lines, weighted by length."""
    angles, weights = [], []
    for line in lines:
        pts = np.asarray(line.box, dtype=np.float64)
        dx, dy = pts[1] - pts[0]
        height = np.linalg.norm(pts[3] - pts[0])
        if dx > 4 * max(height, 1.0):
            angles.append(np.arctan2(dy, dx))
            weights.append(dx)
    if not angles:
        return 0.0
    order = np.argsort(angles)
    cum = np.cumsum(np.asarray(weights)[order])
    return float(np.asarray(angles)[order][np.searchsorted(cum, cum[-1] / 2)])


def set_vertically(line: LayoutLine) -> bool:
    """A line of several characters whose box is much taller than wide: set vertically among
    rows (a turned caption; a running head once the page is turned for such captions)."""
    xs, ys = [p[0] for p in line.box], [p[1] for p in line.box]
    return len(line.text.strip()) >= 3 and max(ys) - min(ys) > 2 * (max(xs) - min(xs))


def make_item(line: LayoutLine, skew: float = 0.0, ids: tuple[int, ...] = ()) -> Item:
    """Geometry of a line in the page's deskewed frame (the line keeps its real box), so
    rows and columns of a slightly rotated scan line up as on the original."""
    pts = np.asarray(line.box, dtype=np.float64)
    if skew:
        c, s = np.cos(-skew), np.sin(-skew)
        pts = pts @ np.array([[c, s], [-s, c]])
    h = float((np.linalg.norm(pts[3] - pts[0]) + np.linalg.norm(pts[2] - pts[1])) / 2)
    x0, y0 = pts.min(0)
    x1, y1 = pts.max(0)
    if set_vertically(line):  # its text is as high as its box is wide, not as its box is tall
        h = float(x1 - x0)
    return Item(line, float(x0), float(y0), float(x1), float(y1), max(h, 1.0), ids,
                ink=_ink_extent(line, float(x0), float(x1), h, skew))


def centre_in(rect: Rect, region: Rect) -> bool:
    """Does the rectangle's centre lie in the region?"""
    return region[0] <= (rect[0] + rect[2]) / 2 <= region[2] and region[1] <= (rect[1] + rect[3]) / 2 <= region[3]


def deskewed_rule(rule: Rect, skew: float) -> Rect:
    """A rule's box (found in the page's pixels) in the deskewed frame of `make_item`. A rule of
    a turned scan runs along a diagonal of its box: the one that turns level (or upright); the
    box then keeps only the rule's own thickness."""
    if not skew:
        return rule
    x0, y0, x1, y1 = rule
    c, s = np.cos(-skew), np.sin(-skew)
    turn = np.array([[c, s], [-s, c]])
    upright = y1 - y0 > x1 - x0
    axis = 0 if upright else 1  # the coordinate that stays constant along the turned rule
    ends = min((np.array([[x0, y0], [x1, y1]]) @ turn, np.array([[x1, y0], [x0, y1]]) @ turn),
               key=lambda e: abs(e[1, axis] - e[0, axis]))
    length = (y1 - y0) if upright else (x1 - x0)
    thick = max(1.0, ((x1 - x0) if upright else (y1 - y0)) - length * abs(np.tan(skew)))
    lo, hi = ends.min(0), ends.max(0)
    middle = (lo[axis] + hi[axis]) / 2
    lo[axis], hi[axis] = middle - thick / 2, middle + thick / 2
    return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])


# A detector's box reaches this far (line heights) past the ink on each side where the line
# carries no word boxes to say where its ink is (measured: median 0.10-0.12 on the corpus).
BOX_PAD = 0.1


def _ink_extent(line: LayoutLine, x0: float, x1: float, h: float, skew: float) -> tuple[float, float] | None:
    """The x extent of an OCR line's ink: its word boxes' where it has them, else its box less
    the detector's padding. None for a text layer's line (its box is the glyphs')."""
    if line.origin != OCR:
        return None
    if line.words:
        pts = np.asarray([p for w in line.words for p in w.box], dtype=np.float64)
        if skew:
            c, s = np.cos(-skew), np.sin(-skew)
            pts = pts @ np.array([[c, s], [-s, c]])
        lo, hi = float(pts[:, 0].min()), float(pts[:, 0].max())
        if x0 <= lo < hi <= x1:
            return lo, hi
    pad = min(BOX_PAD * h, 0.1 * (x1 - x0))
    return x0 + pad, x1 - pad


def word_extents(it: Item) -> list[tuple[float, float]] | None:
    """The x extents of the line's recognised words in the deskewed frame of `make_item`, or
    None without word boxes. Word boxes are the page's pixels: on a scan turned a degree, a
    row's x shifts by its height on the page times the angle (30 px at the foot of a page),
    which the line's box, deskewed in its item, tells."""
    words = it.line.words
    if not words:
        return None
    shift = it.x0 - min(p[0] for p in it.line.box)
    return [(a + shift, b + shift) for a, b in (x_span(w.box) for w in words)]


def median_height(items: list[Item]) -> float:
    """The lines' median box height: what a line's size is compared with."""
    return float(np.median([it.h for it in items])) if items else 1.0


def layout_unit(items: list[Item]) -> float:
    """The unit the layout measures gaps and distances in: the lines' median box height, but
    never more than the median pitch of their rows (a blurred scan's boxes grow ~10 % taller
    than the born page's, its rows do not)."""
    height = median_height(items)
    pitch = row_pitch(items) if items else None
    return min(height, pitch) if pitch is not None else height


def row_pitch(items: list[Item], min_pairs: int = 5) -> float | None:
    """The median distance from a line's centre down to the next line below it that it
    overlaps in x; None with fewer than `min_pairs` such pairs."""
    if len(items) <= min_pairs:
        return None
    cy = np.array([it.cy for it in items])
    x0 = np.array([it.x0 for it in items])
    x1 = np.array([it.x1 for it in items])
    h = np.array([it.h for it in items])
    down = cy[None, :] - cy[:, None]
    below = (down > 0.5 * h[:, None]) & (np.minimum(x1[:, None], x1[None, :]) > np.maximum(x0[:, None], x0[None, :]))
    nearest = np.where(below, down, np.inf).min(axis=1)
    nearest = nearest[np.isfinite(nearest)]
    return float(np.median(nearest)) if len(nearest) >= min_pairs else None


def free_bands(items: list[Item], lo: float, hi: float, min_width: float,
               ink: bool = False) -> list[tuple[float, float]]:
    """x-intervals of [lo, hi] that no box (with `ink`, no line's ink) covers, at least
    min_width wide (edges included)."""
    return free_spans([x_ends(it, ink) for it in items], lo, hi, min_width)


def free_spans(spans: list[tuple[float, float]], lo: float, hi: float,
               min_width: float) -> list[tuple[float, float]]:
    """x-intervals of [lo, hi] that none of the (x0, x1) spans covers, at least min_width wide."""
    bands, reach = [], lo
    for x0, x1 in sorted(spans):
        if x0 - reach >= min_width:
            bands.append((reach, x0))
        reach = max(reach, x1)
    if hi - reach >= min_width:
        bands.append((reach, hi))
    return bands


def interior(bands: list[tuple[float, float]], items: list[Item],
             ink: bool = False) -> list[tuple[float, float]]:
    """The bands with boxes (or inks) on both sides: column gutters, not margins."""
    ends = [x_ends(it, ink) for it in items]
    return [(lo, hi) for lo, hi in bands if any(x1 <= lo for _, x1 in ends) and any(x0 >= hi for x0, _ in ends)]


def x_ends(it: Item, ink: bool = False) -> tuple[float, float]:
    """The item's x extent: its box's, or with `ink` its ink's."""
    return (it.gx0, it.gx1) if ink else (it.x0, it.x1)


def extent(items: list[Item], ink: bool = False) -> float:
    """The items' width together: of their boxes, or with `ink` of their ink."""
    ends = [x_ends(it, ink) for it in items]
    return max(x1 for _, x1 in ends) - min(x0 for x0, _ in ends)


def same_row(a: Item, b: Item, params: LayoutParams) -> bool:
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return overlap >= params.row_overlap * min(a.y1 - a.y0, b.y1 - b.y0)


def rows_of(items: list[Item], params: LayoutParams) -> list[list[Item]]:
    """Group items into rows against each row's first (reference) item, so one tall box
    (a merged table cell, a vertical label) cannot chain two rows together."""
    rows: list[list[Item]] = []
    for it in sorted(items, key=lambda i: i.cy):
        ref = rows[-1][0] if rows else None
        if ref is not None and same_row(it, ref, params) and ref.y0 <= it.cy <= ref.y1:
            rows[-1].append(it)
        else:
            rows.append([it])
    return [sorted(r, key=lambda i: i.x0) for r in _merge_spanning(rows, params)]


def _merge_spanning(rows: list[list[Item]], params: LayoutParams) -> list[list[Item]]:
    """A row that overlaps the row above and stands beside it (no box of one above a box of
    the other) is one row with it: in a two-level table header, the cells centred on both
    levels are read with the upper level ('Name | Count | Support' then 'utf8 | gbk')."""
    out: list[list[Item]] = []
    for row in rows:
        if out and _spans_into(out[-1], row, params):
            out[-1] = out[-1] + row
        else:
            out.append(row)
    return out


def _spans_into(upper: list[Item], row: list[Item], params: LayoutParams) -> bool:
    top, bottom = max(min(i.y0 for i in upper), min(i.y0 for i in row)), min(
        max(i.y1 for i in upper), max(i.y1 for i in row))
    height = min(max(i.y1 for i in r) - min(i.y0 for i in r) for r in (upper, row))
    beside = all(a.x1 <= b.x0 or b.x1 <= a.x0 for a in upper for b in row)
    return beside and bottom - top >= params.span_overlap * height


def join_row(row: list[Item], params: LayoutParams) -> list[Item]:
    """Join boxes of one row that are one text line split by the detector (a small gap) or
    that a dot leader connects ("Title ... 29"); table cells further apart stay apart."""
    out = [row[0]]
    for it in row[1:]:
        prev = out[-1]
        unit = max(prev.h, it.h)
        across = set_vertically(prev.line) != set_vertically(it.line)  # never one line
        if not across and (prev.line.leader or it.x0 - prev.x1 < params.join_gap * unit):
            out[-1] = _joined(prev, it)
        else:
            out.append(it)
    return out


def join_leaders(items: list[Item], params: LayoutParams) -> list[Item]:
    """Each item a dot leader leads from joined with the nearest item right of it on its row,
    before any column is looked for: the dots fill the gap, which is no gutter."""
    out = sorted(items, key=lambda i: i.x0)
    k = 0
    while k < len(out):
        it = out[k]
        if it.line.leader:
            right = [o for o in out if o is not it and o.x0 >= it.x1 - 0.5 * it.h and same_row(it, o, params)]
            if right:
                target = min(right, key=lambda o: o.x0)
                out.remove(target)
                out[k] = _joined(it, target)
                continue  # the joined item may lead on to the next (a leader after the number)
        k += 1
    return out


def _joined(a: Item, b: Item) -> Item:
    la, lb = a.line, b.line
    weights = [len(la.text), len(lb.text)]
    conf = (la.conf * weights[0] + lb.conf * weights[1]) / max(sum(weights), 1)
    box = [list(la.box[0]), list(lb.box[1]), list(lb.box[2]), list(la.box[3])]
    glue = f" {LEADER_TEXT} " if la.leader else " "
    line = LayoutLine(la.text + glue + lb.output_text, conf, box, la.origin, la.bullet, lb.leader,
                      la.font_size, la.stroke, la.bold, _words(la, lb))
    return Item(line, min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1),
                max(a.h, b.h), a.ids + b.ids, a.leaders + b.leaders + la.leader,
                (min(a.gx0, b.gx0), max(a.gx1, b.gx1)) if a.ink or b.ink else None)


def _words(a: LayoutLine, b: LayoutLine):
    if a.words is None or b.words is None:
        return None
    return a.words + b.words


def horizontal_rules(rules: Sequence[Rect]) -> list[Rect]:
    """The rules wider than high."""
    return [r for r in rules if r[2] - r[0] > r[3] - r[1]]


def open_rules(rules: Sequence[Rect], h: float, tall: float = 5.0, reach: float = 0.5) -> list[Rect]:
    """Vertical rules at least `tall` line heights long that do not end on a horizontal rule
    (within `reach` line heights): a rule between columns, not a boxed table's inner line."""
    across = horizontal_rules(rules)
    out = []
    for x0, y0, x1, y1 in rules:
        if y1 - y0 <= x1 - x0 or y1 - y0 < tall * h:
            continue
        x = (x0 + x1) / 2
        ends = [r for r in across if r[0] - reach * h <= x <= r[2] + reach * h
                and min(abs((r[1] + r[3]) / 2 - y) for y in (y0, y1)) <= reach * h]
        if not ends:
            out.append((x0, y0, x1, y1))
    return out


def x_span(box) -> tuple[float, float]:
    xs = [p[0] for p in box]
    return min(xs), max(xs)


def pitch(it: Item) -> float:
    """The width of the line's characters: the median over its words of three characters or more
    (a dot leader's spread dots and the spaces between words left out), else over its ink. A
    wide character (a Chinese or Japanese one, a full-width form) counts as two: set in one
    size, a Chinese line and a Latin one then have about one pitch."""
    words = [w for w in it.line.words or () if len(w.text) >= 3 and any(ch.isalnum() for ch in w.text)]
    if words:
        return float(np.median([(x_span(w.box)[1] - x_span(w.box)[0]) / _cells(w.text) for w in words]))
    chars = _cells(it.line.text.replace(" ", ""))
    return (it.gx1 - it.gx0) / chars if chars >= 3 else 0.0


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
