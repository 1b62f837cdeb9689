"""Lines that run across a column gutter are cut at it.

In a tight index, a glossary or a paper with a narrow gutter, a text detector now and then
boxes two columns' lines of one row as one line ("\\EnableCrossrefs . 24 \\opening ... 4, 111").
Such a line closes the gutter for every rule that looks for free vertical bands, and its
words are read across the columns. The evidence that it is two lines is around it: the
lines above it and below it stop short of one x position and start again after it (the
detector cut them there), and the line has a word gap at that position. It is cut there;
nothing is cut where a line above or below runs through the gap, nor without lines on
both sides of the gap above it or below it. Those lines are looked for within the line's span,
then up to `cross_reach` line heights past its ends, where they must leave a gutter no wider
than `cross_wide` (an index's row whose page number stands out past its column's lines). Only
lines of the crossing line's own run close a gap: a paragraph a blank above an index does not
keep the index's first row whole.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from model_cache.layout.geometry import (Item, LayoutParams, layout_unit, make_item, median_height, pitch,
                                         word_extents, x_span)
from model_cache.layout.lines import OCR, LayoutLine
from outputs.model import Word

Gap = tuple[float, float]  # x extent of a gap between two words, in the deskewed frame


def split_crossing(items: list[Item], params: LayoutParams, skew: float) -> list[Item]:
    """`items` with every OCR line that crosses a gutter of its neighbours cut into pieces."""
    h = layout_unit(items)
    gaps = _GapCache()
    out: list[Item] = []
    for it in items:
        queue = [it]
        while queue:
            piece = queue.pop(0)
            cut = _gutter_cut(piece, items, params, h, gaps)
            if cut is None:
                out.append(piece)
                continue
            left, right = split_at(piece, cut)
            queue[:0] = [make_item(left, skew, piece.ids), make_item(right, skew, piece.ids)]
    return out


class _GapCache:
    """Each line's word gaps, worked out once per page: every line is a neighbour of many."""

    def __init__(self) -> None:
        self._gaps: dict[int, tuple[Item, list[Gap]]] = {}

    def __call__(self, it: Item) -> list[Gap]:
        found = self._gaps.get(id(it))
        if found is None or found[0] is not it:
            found = self._gaps[id(it)] = (it, word_gaps(it))
        return found[1]


def _gutter_cut(it: Item, items: list[Item], params: LayoutParams, h: float,
                gaps_of: _GapCache) -> int | None:
    """The word index (first word of the right piece) at which `it` crosses a gutter."""
    line = it.line
    if line.origin != OCR or it.gx1 - it.gx0 < 4 * h:
        return None
    gaps = gaps_of(it)
    if not gaps:
        return None
    near = _neighbours(it, items, params.cross_reach * h)
    if _set_larger(it, near, params):
        return None  # a title set larger than its neighbours spans their columns
    above, below = [o for o in near if o.cy < it.cy], [o for o in near if o.cy > it.cy]
    cut = _cut_between(it, gaps, above, below, h, params, gaps_of)
    if cut is None and not (above and below):
        # The last row of a column block (the page's end, a heading or a blank next to it) may
        # have one or two lines near it on one side: twice as far there, where the lines must
        # stop and start within `cross_hug` line heights of each other (a column gutter, not
        # the space between a figure's labels above a caption).
        far = _neighbours(it, items, 2 * params.cross_reach * h)
        if _set_larger(it, far, params):
            return None
        cut = _cut_between(it, gaps, [o for o in far if o.cy < it.cy], [o for o in far if o.cy > it.cy],
                           h, params, gaps_of, params.cross_hug)
    return cut


def _set_larger(it: Item, near: list[Item], params: LayoutParams) -> bool:
    """Is the line a title set larger than the lines around it: a box `cross_title` times as
    tall, and type as large (its words' characters `cross_pitch` times as wide)? A scan's
    detector boxes a long line crossing three columns a little taller than the lines it
    crosses, in their own type."""
    if it.h <= params.cross_title * median_height(near or [it]):
        return False
    pitches = [p for p in map(pitch, near) if p]
    return not pitches or pitch(it) > params.cross_pitch * float(np.median(pitches))


def _cut_between(it: Item, gaps: list[Gap], above: list[Item], below: list[Item], h: float,
                 params: LayoutParams, gaps_of: _GapCache, hug: float | None = None) -> int | None:
    """The widest word gap of `it` where no line of its run above or below runs through (`_blocked`) and the
    lines above and below leave a gutter (`_gutter_at`): those in its span or, failing them,
    those beside its ends too."""
    # Each side's lines within `it`'s span, and those of its run, once for every gap tried;
    # and its lines up to `cross_reach` line heights past the span's ends.
    spans = [_within(side, it.gx0, it.gx1) for side in (above, below)]
    sides = [(span, _run_of(it, span, up, h, params)) for span, up in zip(spans, (True, False))]
    reach = params.cross_reach * h
    wide = [_within(side, it.gx0 - reach, it.gx1 + reach) for side in (above, below)]
    wide_hug = params.cross_wide if hug is None else min(hug, params.cross_wide)
    # The widest gap first: a leader's dots, unread, leave a gap of their own just before a gutter.
    for k, (a, b) in sorted(enumerate(gaps), key=lambda kg: kg[1][0] - kg[1][1]):
        if b - a < params.cross_gap * h or (k == 0 and it.line.bullet):
            continue  # (a list item's bullet stands apart from its text, in no column of its own)
        # A word box's end is where the recogniser put it, a few pixels either way of the ink:
        # the gutter may stand anywhere in the gap, not only at its centre.
        for x in _positions(a, b):
            if any(_blocked(x, run, h, gaps_of) for _, run in sides):
                continue
            if (any(_gutter_at(x, span, h, params, hug) for span, _ in sides)
                    or any(_gutter_at(x, near, h, params, wide_hug) for near in wide)):
                return k + 1
    return None


def _within(side: list[Item], x0: float, x1: float) -> list[Item]:
    return [o for o in side if o.gx1 > x0 and o.gx0 < x1]


def _neighbours(it: Item, items: list[Item], reach: float) -> list[Item]:
    """Lines above or below `it` (not beside it) within `reach` of its centre."""
    return [o for o in items if o is not it and abs(o.cy - it.cy) <= reach
            and min(o.y1, it.y1) - max(o.y0, it.y0) < 0.5 * min(o.h, it.h)]


def _positions(a: float, b: float) -> list[float]:
    """Points across a gap, its centre first."""
    return [a + t * (b - a) for t in (0.5, 0.25, 0.75, 0.0, 1.0)]


def _blocked(x: float, run: list[Item], h: float, gaps_of: _GapCache) -> bool:
    """Does a line of the crossing line's run (`_run_of`) run through x (not through a word gap
    of its own: another crossing line)?"""
    return any(o.gx0 < x < o.gx1 and not _gap_at(gaps_of(o), x, h) for o in run)


def _gutter_at(x: float, span: list[Item], h: float, params: LayoutParams, hug: float | None = None) -> bool:
    """Do lines on this side of the crossing line (`span`) stop before x and others start after
    it, at least two each (with `hug`, within that many line heights of each other)?"""
    left = [o.gx1 for o in span if o.gx1 <= x]
    right = [o.gx0 for o in span if o.gx0 >= x]
    if min(len(left), len(right)) < 2:
        return False
    gutter = min(right) - max(left)
    return gutter >= params.cross_gap * h and (hug is None or gutter <= hug * h)


def _run_of(it: Item, side: list[Item], up: bool, h: float, params: LayoutParams) -> list[Item]:
    """The lines of `side` (all above `it` if `up`, else all below it) in one run with `it`: up
    to the first blank deeper than `cross_blank` line heights."""
    run: list[Item] = []
    edge = it.y0 if up else it.y1
    for o in sorted(side, key=lambda o: -o.y1 if up else o.y0):
        if (edge - o.y1 if up else o.y0 - edge) > params.cross_blank * h:
            break
        run.append(o)
        edge = min(edge, o.y0) if up else max(edge, o.y1)
    return run


def _gap_at(gaps: list[Gap], x: float, h: float) -> bool:
    return any(a - 0.15 * h <= x <= b + 0.15 * h for a, b in gaps)


def word_gaps(it: Item) -> list[Gap]:
    """The gaps between the line's words: from its word boxes where it has them, else guessed
    from the text, each character taking an equal share of the ink's width."""
    line = it.line
    if line.words and len(line.words) >= 2:
        spans = word_extents(it)
        return [(spans[k][1], spans[k + 1][0]) for k in range(len(spans) - 1)]
    text = line.text
    if " " not in text.strip():
        return []
    unit = (it.gx1 - it.gx0) / max(len(text), 1)
    return [(it.gx0 + k * unit, it.gx0 + (k + 1) * unit) for k, ch in enumerate(text) if ch == " "]


def split_at(it: Item, cut: int) -> tuple[LayoutLine, LayoutLine]:
    """The line's words before and after word `cut`, each with the part of the box it covers."""
    line = it.line
    if line.words and len(line.words) >= 2:
        first, rest = line.words[:cut], line.words[cut:]
        left_text, right_text = " ".join(w.text for w in first), " ".join(w.text for w in rest)
        left_end, right_start = x_span(first[-1].box)[1], x_span(rest[0].box)[0]
        words: tuple[list[Word] | None, list[Word] | None] = (first, rest)
    else:
        spaces = [k for k, ch in enumerate(line.text) if ch == " "]
        at = spaces[cut - 1]
        left_text, right_text = line.text[:at].rstrip(), line.text[at + 1:].lstrip()
        unit = (it.gx1 - it.gx0) / max(len(line.text), 1)
        left_end, right_start = it.gx0 + at * unit, it.gx0 + (at + 1) * unit
        words = (None, None)
    box = np.asarray(line.box, dtype=np.float64)
    x0, x1 = float(box[:, 0].min()), float(box[:, 0].max())
    pad = 0.1 * it.h
    t_left = min(1.0, max(0.0, (left_end + pad - x0) / max(x1 - x0, 1.0)))
    t_right = min(1.0, max(0.0, (right_start - pad - x0) / max(x1 - x0, 1.0)))
    top = lambda t: (box[0] + t * (box[1] - box[0])).tolist()  # noqa: E731
    bottom = lambda t: (box[3] + t * (box[2] - box[3])).tolist()  # noqa: E731
    left_box = [box[0].tolist(), top(t_left), bottom(t_left), box[3].tolist()]
    right_box = [top(t_right), box[1].tolist(), box[2].tolist(), bottom(t_right)]
    left = replace(line, text=left_text, box=left_box, leader=False, words=words[0], joined=None)
    right = replace(line, text=right_text, box=right_box, bullet=None, words=words[1], joined=None)
    return left, right
