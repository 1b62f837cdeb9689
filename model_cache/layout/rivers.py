"""A column gutter that runs between the words of many lines (a river) is cut open.

A text detector sometimes boxes a whole row of a narrow-gutter page as one line: the two
columns of a paper, or the cells of a table row, become "Lorem ipsum ... consectetuer lacinia
nulla vitae enim". Where it does so on most rows, no lines stop and start around the gutter
(crossing.py needs them to), and the boxes it did cut apart reach into the gutter with their
padding. No rule that looks for free vertical bands between boxes then sees a gutter.

The words still show it: an x band no word's ink covers, wider than a gutter, that runs down
many rows with words on both sides of it, several of them inside one line. Such a band is
a gutter: over the rows it runs down, each line crossing it is cut at its word gap there,
and each box reaching into it with its padding is trimmed to its ink. Word gaps of running
text, wide as they get in a justified line, do not line up row after row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from model_cache.layout.crossing import split_at
from model_cache.layout.geometry import Item, LayoutParams, layout_unit, make_item, word_extents

Span = tuple[float, float]
# How far (line heights) past a band a line's box may reach and still be one column's line
# reaching into the gutter: its end word's box is the line box's, padding and all.
BOX_REACH = 0.25


@dataclass
class River:
    lo: float  # the band no word's ink covers
    hi: float
    top: float  # the rows it runs down
    bottom: float


def cut_at_rivers(items: list[Item], params: LayoutParams, skew: float) -> list[Item]:
    """`items` with every line crossing a river cut at it and every box reaching into one
    trimmed to the river's edge. A gap overlapping a river already found (at any height) starts
    no second one."""
    h = layout_unit(items)
    for river in find_rivers(items, params, h):
        items = _open(items, river, skew)
    return items


def word_spans(it: Item) -> list[Span]:
    """The x extents of the line's words (its ink as one span where it has no word boxes)."""
    if it.ink is None or not it.line.words:
        return [(it.gx0, it.gx1)]
    return sorted(word_extents(it))


def find_rivers(items: list[Item], params: LayoutParams, h: float) -> list[River]:
    """Bands at least a gutter wide that no word's ink covers over a run of rows, with words on
    both sides of the band in `params.river_rows` of those rows and inside one line in
    `params.river_lines` of them."""
    width = params.gutter * h
    run = sorted(items, key=lambda i: i.cy)
    gaps = [_gaps(it) for it in run]  # once: every candidate walks the same lines
    rivers: list[River] = []
    for lo, hi, seed in _candidate_bands(gaps, width):
        if any(r.lo < hi and lo < r.hi for r in rivers):
            continue
        river = _run_down(run, gaps, seed, (lo, hi), h, params)
        if river is not None:
            rivers.append(river)
    return rivers


def _candidate_bands(gaps: list[list[Span]], width: float) -> list[tuple[float, float, int]]:
    """Word gaps at least `width` wide inside OCR lines (with the line's index), widest first."""
    found = [(a, b, k) for k, line_gaps in enumerate(gaps) for a, b in line_gaps if b - a >= width]
    return sorted(found, key=lambda g: g[0] - g[1])


def _run_down(run: list[Item], gaps: list[list[Span]], at: int, band: Span, h: float,
              params: LayoutParams) -> River | None:
    """The run of rows around line `at`'s gap `band` that it runs down, if it is a river. A line
    crossing the band narrows it to its own word gap there; a line whose box ends or starts
    inside the band is one column's (its end words carry the box's padding) and leaves it as
    it is; a line whose words cover the band blocks it. One blocking line alone (a stray
    character, a word box too wide) is passed over; two in a row, or a blank three lines
    deep, end the run."""
    seed = run[at]
    kept, blocked = [seed], 0
    for step in (-1, 1):
        k, pending = at + step, 0
        while 0 <= k < len(run) and pending < 2:
            it, line_gaps = run[k], gaps[k]
            k += step
            if it.x1 <= band[0] or it.x0 >= band[1]:
                continue  # beside the band, not across it
            edge = kept[-1] if step > 0 else kept[0]
            if abs(it.cy - edge.cy) > 3 * h:
                break
            narrowed = _crossing_gap(it, line_gaps, band, params.gutter * h)
            if narrowed is None:
                pending += 1
                continue
            blocked += pending
            pending = 0
            band = narrowed
            kept.insert(len(kept) if step > 0 else 0, it)
    both = _two_sided_rows(kept, band, h)
    inside = sum(1 for it in kept if _spans(it, band))
    if both < params.river_rows or inside < params.river_lines or blocked > 0.2 * len(kept):
        return None
    return River(band[0], band[1], min(it.y0 for it in kept), max(it.y1 for it in kept))


def _spans(it: Item, band: Span) -> bool:
    """Does the line's box run across the band (by more than its padding on the far side)?"""
    pad = BOX_REACH * it.h
    return it.x0 < band[0] - pad and it.x1 > band[1] + pad


def _crossing_gap(it: Item, gaps: list[Span], band: Span, width: float) -> Span | None:
    """The band as the line leaves it: narrowed to the line's word gap (of `gaps`) inside it if
    the line crosses it, as it is if the line only reaches into it, None if its words block it."""
    if not _spans(it, band):
        return band
    for a, b in gaps:
        lo, hi = max(a, band[0]), min(b, band[1])
        if hi - lo >= width:
            return (lo, hi)
    return None


def _gaps(it: Item) -> list[Span]:
    """The gaps between the line's words; not the one after a list bullet (a hanging indent
    lines up row after row, and is no gutter)."""
    spans = word_spans(it)
    gaps = [(a1, b0) for (_, a1), (b0, _) in zip(spans, spans[1:])]
    words = it.line.words
    led = bool(it.line.bullet and words and gaps and words[0].text.strip() == it.line.bullet)
    return gaps[1:] if led else gaps


def _two_sided_rows(kept: list[Item], band: Span, h: float) -> int:
    """Rows (lines grouped by their centres, half a line height apart) with words on both
    sides of the band."""
    rows: list[list[Item]] = []
    for it in sorted(kept, key=lambda i: i.cy):
        if rows and abs(it.cy - rows[-1][0].cy) < 0.5 * h:
            rows[-1].append(it)
        else:
            rows.append([it])
    lo, hi = band
    return sum(1 for row in rows
               if any(a < lo for it in row for a, _ in word_spans(it))
               and any(b > hi for it in row for _, b in word_spans(it)))


def _open(items: list[Item], river: River, skew: float) -> list[Item]:
    out: list[Item] = []
    for it in items:
        if it.y1 < river.top or it.y0 > river.bottom or it.x1 <= river.lo or it.x0 >= river.hi:
            out.append(it)
            continue
        gaps = _gaps(it)
        skipped = len(word_spans(it)) - 1 - len(gaps)  # the bullet's gap, left out of _gaps
        cut = next((k + 1 + skipped for k, (a1, b0) in enumerate(gaps)
                    if a1 <= river.lo + 1 and b0 >= river.hi - 1), None)
        if cut is not None and it.line.words:
            left, right = split_at(it, cut)
            out.extend([_trimmed(make_item(left, skew, it.ids), river),
                        _trimmed(make_item(right, skew, it.ids), river)])
        else:
            out.append(_trimmed(it, river))
    return out


def _trimmed(it: Item, river: River) -> Item:
    """A line of one column with its box's padding out of the river."""
    pad = BOX_REACH * it.h
    if it.x0 < river.lo < it.x1 <= river.hi + pad:
        return replace(it, x1=river.lo)
    if river.lo - pad <= it.x0 < river.hi < it.x1:
        return replace(it, x0=river.hi)
    return it
