"""Reading order: text lines -> columns -> paragraph-sized blocks.

0. Margin notes (a narrow, sparse side column outside the text block) are taken out and
   woven back in next to the paragraph each stands beside once the body is ordered
   (margin_notes.py).
1. Cut the page into horizontal strips wherever no line crosses a y position.
2. Each strip gets its free vertical bands (gutters: wide enough, or any width where an open
   vertical rule runs down them, a \\columnseprule); consecutive strips whose gutters overlap
   are merged, so a two-column body made of many aligned rows becomes one region
   while a full-width title or footer stays its own strip.
3. A region with a gutter is read left part first, then right part (recursively; always where
   an open rule runs down the gutter), unless its two sides are row-aligned with short items
   on one side (tables of contents, table rows, label/value lists, code with aligned
   comments): those are read row by row. Aligned
   rows are still columns where the gutter is narrow for two columns of text alike in width
   (an index), where the two sides break into paragraphs at different heights (an index's
   letter groups), or where a bulleted or numbered list stands on each side.
   A region whose gutter has lines on both sides in three or more blank-separated pieces of
   a few rows each is a table of multi-line cells: it is read piece by piece (row by row).
   A gutter only a few rows deep between lines that run across it (a listing's aligned
   fields), or one with a single row on one side beside the other side's top row (the end of
   a long first line), is no column gutter either.
4. A region without a gutter between its boxes may still have one between its OCR lines' ink
   (padded boxes of a tight index touch): it is cut there only if text columns stand on both
   sides. Consecutive regions that such a gutter runs down are joined first (an index's
   headings and short rows cut it into fragments). Otherwise a region is read row by row into
   paragraph-sized blocks (paragraphs.py).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from model_cache.layout.geometry import (Group, Item, LayoutParams, Rect, extent, free_bands, interior,
                                         horizontal_rules, join_row, layout_unit, median_height, open_rules,
                                         rows_of, x_ends)
from model_cache.layout.paragraphs import entry_row, leaf_blocks
from outputs.enumeration import enumeration_label


@dataclass
class Region:
    items: list[Item]
    gutters: list[tuple[float, float]] = field(default_factory=list)


def horizontal_strips(items: list[Item]) -> list[list[Item]]:
    """Split at y positions no box crosses (boxes overlapping in y stay together)."""
    strips: list[list[Item]] = []
    bottom = -np.inf
    for it in sorted(items, key=lambda i: i.y0):
        # a small tolerance: skewed neighbours touching by a pixel or two are still separate rows
        if strips and it.y0 < bottom - 0.15 * it.h:
            strips[-1].append(it)
            bottom = max(bottom, it.y1)
        else:
            strips.append([it])
            bottom = it.y1
    return strips


def intersect_bands(a: list[tuple[float, float]], b: list[tuple[float, float]],
                    min_width: float) -> list[tuple[float, float]]:
    out = []
    for a0, a1 in a:
        for b0, b1 in b:
            lo, hi = max(a0, b0), min(a1, b1)
            if hi - lo >= min_width:
                out.append((lo, hi))
    return out


def merged_regions(items: list[Item], gutter: float, h: float,
                   column_rules: Sequence[Rect] = ()) -> list[Region]:
    """Strips joined while they keep a common gutter (or while neither has one). A strip with
    text on one side only joins a gutter region only if it follows closely: after a gap it
    is more likely a full-width section's heading than the rest of one column, unless it is
    centred over its own column (an index's letter heading). A block of centred lines (a
    title) ends at a gap. A free band however narrow is a gutter where an open rule runs down
    it (`column_rules`, `open_rules`)."""
    lo, hi = min(it.x0 for it in items), max(it.x1 for it in items)
    regions: list[Region] = []
    bands_of: list[list[tuple[float, float]]] = []
    for strip in horizontal_strips(items):
        bands = _strip_bands(strip, lo, hi, gutter, column_rules)
        # A detached superscript, accent or dot between rows neither ends nor starts a region;
        # a lone small page number a blank below the text is no such mark.
        if regions and _marks_only(strip, h) and _gap_above(strip, regions[-1].items) <= 0.8 * h:
            regions[-1].items = regions[-1].items + strip
            continue
        own = interior(bands, strip)  # the strip's own gutters
        if regions:
            region = regions[-1]
            common = [(a, b) for a, b in intersect_bands(bands_of[-1], bands, 0)
                      if _gutter_band(a, b, strip, gutter, column_rules)]
            common += _rule_beside_both(bands_of[-1], bands, strip, column_rules, 0.5 * h)
            joined = region.items + strip
            had_gutter = bool(region.gutters) or bool(own)
            gutters = interior(common, joined)
            after_gap = _gap_above(strip, region.items) > 0.8 * h
            if (after_gap and region.gutters and not own and not _column_heading(strip, region, h)
                    and not any(_ruled(a, b, strip, column_rules) for a, b in gutters)):
                gutters = []  # one-sided (unless a rule runs on down the gutter beside it)
            # A centred title block ends at a gap: the bands beside its lines are its margins,
            # not gutters that a line at one side below it could share. (A strip with a gutter
            # of its own, a table's row under its centred caption, joins as before, unless a
            # column rule runs down its own gutter and down none of the joined ones.)
            after_title = (after_gap and not region.gutters and _centred(region.items, lo, hi, h)
                           and (not own or (_ruled_any(own, strip, column_rules)
                                            and not _ruled_any(gutters, strip, column_rules))))
            if (gutters or not had_gutter) and not after_title:
                region.items, region.gutters, bands_of[-1] = joined, gutters, common
                continue
        regions.append(Region(list(strip), own))
        bands_of.append(bands)
    return regions


def _gap_above(strip: list[Item], region: list[Item]) -> float:
    return min(it.y0 for it in strip) - max(it.y1 for it in region)


def _rule_beside_both(upper: list[tuple[float, float]], lower: list[tuple[float, float]], strip: list[Item],
                      column_rules: Sequence[Rect], reach: float) -> list[tuple[float, float]]:
    """The column rules at the strip's height that run down a band of the strips above and a band
    of this strip which do not overlap: on a scan a line's padded box may cross the rule beside
    it, and the free bands beside the rule shift from row to row. The rule's own band is the gutter."""
    out = []
    for rule in _rules_at(strip, column_rules):
        x0, x1 = rule[0], rule[2]
        near = [any(_near(rule, a, b, reach) for a, b in bands) for bands in (upper, lower)]
        overlapping = any(min(x1, b, d) > max(x0, a, c) for a, b in upper for c, d in lower)
        if all(near) and not overlapping:
            out.append((float(x0), float(x1)))
    return out


def _rules_at(strip: list[Item], column_rules: Sequence[Rect]) -> list[Rect]:
    """The rules that run down through the strip's middle height."""
    middle = (min(it.y0 for it in strip) + max(it.y1 for it in strip)) / 2
    return [rule for rule in column_rules if rule[1] <= middle <= rule[3]]


def _near(rule: Rect, a: float, b: float, reach: float) -> bool:
    """Does the rule overlap the band a..b, or stop within `reach` of it?"""
    return rule[0] <= b + reach and rule[2] >= a - reach


def _ruled_any(bands: list[tuple[float, float]], strip: list[Item], column_rules: Sequence[Rect]) -> bool:
    return any(_ruled(a, b, strip, column_rules) for a, b in bands)


def _rule_down(lo: float, hi: float, items: list[Item], rules: Sequence[Rect]) -> bool:
    """Does one of `rules` run down the band lo..hi beside most of the items' height?"""
    top, bottom = min(it.y0 for it in items), max(it.y1 for it in items)
    return any(lo <= (x0 + x1) / 2 <= hi and min(y1, bottom) - max(y0, top) >= 0.5 * (bottom - top)
               for x0, y0, x1, y1 in rules)


def _strip_bands(strip: list[Item], lo: float, hi: float, gutter: float,
                 column_rules: Sequence[Rect]) -> list[tuple[float, float]]:
    """The strip's free bands at least `gutter` wide, and the narrower ones an open rule runs
    down through the strip's height."""
    if not column_rules:
        return free_bands(strip, lo, hi, gutter)
    return [(a, b) for a, b in free_bands(strip, lo, hi, 0) if _gutter_band(a, b, strip, gutter, column_rules)]


def _gutter_band(a: float, b: float, strip: list[Item], gutter: float, column_rules: Sequence[Rect]) -> bool:
    """Is the free band a..b a gutter at the strip's height: `gutter` wide, or an open rule down it?"""
    return b - a >= gutter or _ruled(a, b, strip, column_rules)


def _ruled(a: float, b: float, strip: list[Item], column_rules: Sequence[Rect]) -> bool:
    """Does one of the rules run down the band a..b at the strip's height? (It may reach over the
    band's edges, or stop a quarter of a line's height short of them: the boxes beside it are
    padded past their ink, and a leader's box may run over the rule.)"""
    reach = 0.25 * median_height(strip)
    return any(_near(rule, a, b, reach) for rule in _rules_at(strip, column_rules))


def _join_inked(regions: list[Region], params: LayoutParams, h: float,
                rules: Sequence[Rect] = ()) -> list[Region]:
    """Consecutive regions of OCR lines joined into one without a box gutter where a gutter runs
    down all of them between their lines' ink and parts columns of text (`_ink_split`): a tight
    index's padded boxes touch across its gutter on most rows, and its letter headings and
    short rows leave box gutters on a few, so its columns came apart in fragments a few rows
    deep, each too shallow to be read as columns. The joined region is cut by `_ink_column_split`.
    A rule between two regions (under a running head) or a blank wider than a paragraph gap
    beside a lone row (a page number) keeps them apart (`_apart`); so does a box gutter
    elsewhere that rows run down on both sides (`_agrees`). Where the longest run of such regions
    does not read as columns (a letter group at its top breaks at the same height on both
    sides, as a grid's rows do), shorter runs from the same start are tried."""
    out: list[Region] = []
    i = 0
    while i < len(regions):
        end = i + 1
        while (_inked(regions[i]) and end < len(regions) and _inked(regions[end])
               and not _apart(regions[end - 1].items, regions[end].items, rules, params, h)
               and _ink_bands([it for r in regions[i:end + 1] for it in r.items], params, h)):
            end += 1
        for stop in range(end, i + 1, -1):  # the longest run that reads as columns
            joined = [it for r in regions[i:stop] for it in r.items]
            bands = _ink_bands(joined, params, h) if stop - i > 1 else []
            band = _ink_gutter(joined, params, h, rules, bands) if bands else None
            if band is not None and all(_agrees(region, bands, params) for region in regions[i:stop]):
                out.append(Region(joined))
                i = stop
                break
        else:
            out.append(regions[i])
            i += 1
    return out


def _apart(upper: list[Item], lower: list[Item], rules: Sequence[Rect], params: LayoutParams, h: float) -> bool:
    """Are two consecutive regions parts of the page that an index's columns do not run
    through: a horizontal rule at least half as wide as both between them (under a running head,
    above footnotes), or a blank wider than a paragraph gap with a lone row on one side of it
    (a page number under the columns)?"""
    top, bottom = max(it.y1 for it in upper), min(it.y0 for it in lower)
    x0, x1 = min(it.x0 for it in upper + lower), max(it.x1 for it in upper + lower)
    lone = (bottom - top > params.para_gap * h
            and min(len(rows_of(upper, params)), len(rows_of(lower, params))) == 1)
    return lone or any(top <= (r[1] + r[3]) / 2 <= bottom and min(r[2], x1) - max(r[0], x0) >= 0.5 * (x1 - x0)
                       for r in horizontal_rules(rules))


def _agrees(region: Region, bands: list[tuple[float, float]], params: LayoutParams) -> bool:
    """May this region be read with the regions it is joined to, across their inked gutters
    `bands` (down all of them: a three-column index has two)? Each of its box gutters must be
    one of these, or have only a few rows on one side (a letter heading, a short entry beside
    the others). A box gutter elsewhere with rows down both sides (a listing's aligned fields,
    a table's columns) says how the region reads."""
    for lo, hi in region.gutters:
        if any(lo < b1 and hi > b0 for b0, b1 in bands):
            continue
        left, right = _sides(region.items, (lo + hi) / 2)
        if min(len(rows_of(left, params)), len(rows_of(right, params))) > params.fragment_rows:
            return False
    return True


def _inked(region: Region) -> bool:
    return all(it.ink is not None for it in region.items)


def _column_heading(strip: list[Item], region: Region, h: float) -> bool:
    """Is every line of the strip short and centred over one of the region's columns (within a
    line height), and none over the middle of the whole region, where a full-width heading
    stands? An index's letter heading whose neighbour in the next column was not read."""
    x0, x1 = min(it.x0 for it in region.items), max(it.x1 for it in region.items)
    edges = [x0] + [v for lo, hi in sorted(region.gutters) for v in (lo, hi)] + [x1]
    columns = list(zip(edges[::2], edges[1::2]))  # the spans between the region's gutters

    def over_its_column(it: Item) -> bool:
        mid = (it.x0 + it.x1) / 2
        home = next(((a, b) for a, b in columns if a <= mid <= b), None)
        return (home is not None and abs(mid - (x0 + x1) / 2) > 2 * h
                and abs(mid - (home[0] + home[1]) / 2) <= h and it.x1 - it.x0 <= 0.5 * (home[1] - home[0]))

    return all(over_its_column(it) for it in strip)


def _centred(items: list[Item], lo: float, hi: float, h: float) -> bool:
    """Are all the lines centred between lo and hi (within a line height), none from edge to
    edge (a title block)? A line is its row's boxes together: a detector may box a heading's
    words apart."""
    mid = (lo + hi) / 2
    rows = [(min(it.x0 for it in row), max(it.x1 for it in row)) for row in horizontal_strips(items)]
    return all(abs((x0 + x1) / 2 - mid) <= h and x0 - lo > 2 * h for x0, x1 in rows)


def _join_sandwiched(regions: list[Region], params: LayoutParams, h: float) -> list[Region]:
    """A gutter only a few rows deep, with rows running across it just above and just below
    (a blank line apart at most), parts the aligned fields of a listing's or a table's rows,
    not two columns: a column's text does not start and stop between lines that cross its
    gutter. Such a region is joined with the gutter-free regions around it and read row by row.
    (A region of one row reads the same either way.)"""
    out: list[Region] = []
    i = 0
    while i < len(regions):
        if out and i + 1 < len(regions) and _sandwiched(out[-1], regions[i], regions[i + 1], params, h):
            out[-1] = Region(out[-1].items + regions[i].items + regions[i + 1].items)
            i += 2
            continue
        out.append(regions[i])
        i += 1
    return out


def _sandwiched(above: Region, region: Region, below: Region, params: LayoutParams, h: float) -> bool:
    """The cheap tests first: rows are only counted for a gutter region between gutter-free ones."""
    if not region.gutters or above.gutters or below.gutters:
        return False
    if not 1 < len(rows_of(region.items, params)) <= params.sandwich_rows:
        return False
    return (_crossed_by_neighbour(above.items, region, above=True, h=h, params=params)
            and _crossed_by_neighbour(below.items, region, above=False, h=h, params=params))


def _crossed_by_neighbour(items: list[Item], region: Region, above: bool, h: float, params: LayoutParams) -> bool:
    """Does one line of the row of `items` nearest the region (its last row when above, first
    when below) run across every gutter of the region, a blank line away at most? Two lines
    that stand a word gap apart across it are two cells, and say nothing."""
    rows = rows_of(items, params)
    row = rows[-1] if above else rows[0]
    if above:
        gap = min(it.y0 for it in region.items) - max(it.y1 for it in row)
    else:
        gap = min(it.y0 for it in row) - max(it.y1 for it in region.items)
    return gap < params.sandwich_gap * h and all(any(x0 < lo and x1 > hi for x0, x1 in _line_spans(row))
                                                 for lo, hi in region.gutters)


def _line_spans(row: list[Item]) -> list[tuple[float, float]]:
    """The x span of each OCR line in the row, its pieces together (the crossing cut may have
    split one line at a word gap inside a gutter: it still ran across it)."""
    spans: dict[tuple[int, ...], tuple[float, float]] = {}
    for it in row:
        x0, x1 = spans.get(it.ids, (it.x0, it.x1))
        spans[it.ids] = (min(x0, it.x0), max(x1, it.x1))
    return list(spans.values())


def _is_mark(it: Item, h: float) -> bool:
    """A detached superscript, subscript, accent or symbol: one or two characters smaller than a
    line of text (a code listing's small line numbers are more, and do count)."""
    return it.h < 0.7 * h and it.x1 - it.x0 < 2 * h and len(it.line.output_text.strip()) <= 2


def _marks_only(strip: list[Item], h: float) -> bool:
    return all(_is_mark(it, h) for it in strip)


def _words(items: list[Item], h: float) -> list[Item]:
    kept = [it for it in items if not _is_mark(it, h)]
    return kept or items


def is_row_structured(left: list[Item], right: list[Item], params: LayoutParams) -> bool:
    """Do the two sides of a gutter pair up row by row with short items (TOC, table, form)?
    Pairing is loose (a partial y-overlap) so a two-level table header pairs as well. Items
    whose middle lies above or below everything on the other side (a closing brace under
    indented code, a page number over a two-column index, a name over a form's rows whose
    padded box on a scan reaches into the row under it) stand beside nothing and are left out;
    if nothing is left the sides are stacked, not columns. Unless there are too few rows to
    tell (fewer than `column_rows` rows on the short side: a two-level table header's cells stand
    between the rows beside them), most of the short side's items must stand level with one of
    the other's (a table's cells share their rows' baselines; two columns set at different line
    pitches do not: a slide's list beside its paragraph)."""
    h = median_height(left + right)
    left, right = _words(left, h), _words(right, h)  # detached marks say nothing of the layout
    short, other = (left, right) if len(left) <= len(right) else (right, left)
    top, bottom = min(it.y0 for it in other), max(it.y1 for it in other)
    short = [it for it in short if top <= it.cy <= bottom]
    if not short:
        return True
    h = layout_unit(short + other)
    paired = _count_beside(short, other, params)
    narrow = min(np.median([it.x1 - it.x0 for it in side]) for side in (left, right))
    few_rows = max(len(left), len(right)) <= 3  # too few lines to tell columns from a table
    tail = _tail_of_top_row(short, other, params)
    flows = len(rows_of(short, params)) >= params.column_rows and not tail  # rows enough to tell
    if flows and _level_with(short, other, params.level_tol * h) < params.level_share * len(short):
        return False  # two flows of lines at their own pitches: columns, however short their lines
    return paired >= params.aligned_share * len(short) and (narrow < params.short_item * h or few_rows or tail)


def _level_with(short: list[Item], other: list[Item], tol: float) -> int:
    """How many of `short` stand level with an item of `other`: middles within `tol` (a table's
    cells share their row's baseline)."""
    middles = sorted(o.cy for o in other)
    return sum(1 for it in short if bisect_right(middles, it.cy + tol) > bisect_left(middles, it.cy - tol))


def _tail_of_top_row(short: list[Item], other: list[Item], params: LayoutParams) -> bool:
    """Is `short` one row, beside the other side's top row (the end of a line that runs on past
    where the lines under it stop: a listing's long first line, a paragraph's first line cut
    at a wide gap)?"""
    if len(rows_of(short, params)) != 1:
        return False
    top = rows_of(other, params)[0]
    return any(_beside(it, o, params) for it in short for o in top)


def _count_beside(short: list[Item], other: list[Item], params: LayoutParams) -> int:
    """How many of `short` have an item of `other` beside them. Only items starting within the
    tallest one's height above an item, and no lower than its bottom, can overlap it, so only
    those are tried (a table of thousands of cells would otherwise cost |short| x |other|)."""
    ordered = sorted(other, key=lambda o: o.y0)
    starts = [o.y0 for o in ordered]
    tallest = max(o.y1 - o.y0 for o in ordered)
    return sum(1 for it in short
               if any(_beside(it, o, params)
                      for o in ordered[bisect_left(starts, it.y0 - tallest):bisect_right(starts, it.y1)]))


def _beside(a: Item, b: Item, params: LayoutParams) -> bool:
    """Looser than one row: enough to pair a cell with a row of a two-level table header."""
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return overlap >= params.pair_overlap * min(a.y1 - a.y0, b.y1 - b.y0)


def ordered_blocks(items: list[Item], params: LayoutParams, h: float, rules: Sequence[Rect] = ()) -> list[Group]:
    """Blocks in reading order: regions top to bottom, columns left to right. `rules`: the
    page's rules, horizontal and vertical (x0, y0, x1, y1), where its pixels were looked at."""
    if not items:
        return []
    blocks: list[Group] = []
    columns = open_rules(rules, h)
    regions = _join_sandwiched(merged_regions(items, params.gutter * h, h, columns), params, h)
    for region in _join_inked(regions, params, h, rules):
        pieces = table_rows(region, params, h, rules)
        if pieces is None:
            pieces = ruled_table_pieces(region, rules)
        if pieces is not None:
            for piece in pieces:
                blocks.extend(ordered_blocks(piece, params, h, rules))
            continue
        split = _column_split(region, params, rules, columns) or _ink_column_split(region, params, h, rules)
        if split is None:
            blocks.extend(leaf_blocks(region.items, params))
        else:
            blocks.extend(ordered_blocks(split[0], params, h, rules))
            blocks.extend(ordered_blocks(split[1], params, h, rules))
    return blocks


def table_rows(region: Region, params: LayoutParams, h: float, rules: Sequence[Rect] = ()) -> list[list[Item]] | None:
    """The rows of a table whose cells run to several lines, or None. Blank bands across the
    whole region (wider than a paragraph gap) cut it into pieces; when at least three pieces
    hold lines on both sides of the same gutter, the gutter parts table cells, not columns of
    text (two columns of running text rarely break at the same height, and never row after
    row, every few lines): the region is read piece by piece, each piece's cells left to right.
    One piece in five may run deeper than a cell usually does (an option explained at length).
    Not at a gutter between two sides that rules frame each on its own (`_ruled_apart`): panels
    side by side whose contents are laid out alike break at the same heights, too."""
    if not region.gutters:
        return None
    pieces = _blank_separated(region.items, params.para_gap * h)
    deep = sum(1 for piece in pieces if len(rows_of(piece, params)) > params.cell_rows)
    if len(pieces) < params.table_pieces or deep > len(pieces) // params.deep_cell_share:
        return None  # pieces as deep as a column's paragraphs are no table rows
    for lo, hi in region.gutters:
        cut = (lo + hi) / 2
        if _ruled_apart(*_sides(region.items, cut), rules):
            continue  # two boxes side by side, each framed on its own (subfigures), not cells
        both = sum(1 for piece in pieces if any(it.x1 <= cut for it in piece) and any(it.x0 >= cut for it in piece))
        if both >= params.table_pieces and both >= len(pieces) - 1:
            return pieces
    return None


def _blank_separated(items: list[Item], gap: float) -> list[list[Item]]:
    """The items in pieces cut at blank bands across all of them more than `gap` deep."""
    pieces: list[list[Item]] = []
    bottom = -np.inf
    for strip in horizontal_strips(items):
        if pieces and min(it.y0 for it in strip) - bottom <= gap:
            pieces[-1].extend(strip)
        else:
            pieces.append(list(strip))
        bottom = max(bottom, max(it.y1 for it in strip))
    return pieces


def _column_split(region: Region, params: LayoutParams, rules: Sequence[Rect] = (),
                  column_rules: Sequence[Rect] = ()) -> tuple[list[Item], list[Item]] | None:
    """The region's two sides at its first gutter that parts columns, or None. `column_rules`:
    the page's open rules (`open_rules`)."""
    for lo, hi in region.gutters:  # leftmost gutter first; the right part recurses
        left, right = _sides(region.items, (lo + hi) / 2)
        if not left or not right or ruled_across(left, right, rules):
            continue
        if _rule_down(lo, hi, region.items, column_rules):
            return left, right  # a rule between columns (\\columnseprule) parts them, rows or not
        if _ruled_apart(left, right, rules):
            return left, right  # two ruled tables side by side
        if _entries(left, params) and _entries(right, params):
            return left, right  # a contents or an index in two columns: its rows pair up like a table's
        # Beside an OCR region's gutter, the nearest column may be found between the lines' ink
        # only: a tight index's padded boxes touch across its other gutters.
        narrow = _narrow_gutter(left, right, hi - lo, params) or (
            _inked(region) and _narrow_gutter(left, right, hi - lo, params, ink=True))
        if narrow or not is_row_structured(left, right, params) or _breaks_apart(left, right, params, rules):
            return left, right
    return None


def _entries(side: list[Item], params: LayoutParams, least: int = 3) -> bool:
    """Do at least half of the side's rows (and `least` of them) read as contents or index
    entries (`entry_row`)? A table's cells end in numbers too, but not every row of both sides
    after words (a side of numbers alone has none)."""
    rows = rows_of(side, params)
    entries = sum(1 for row in rows if entry_row(row))
    return entries >= least and 2 * entries >= len(rows)


def _breaks_apart(left: list[Item], right: list[Item], params: LayoutParams,
                  rules: Sequence[Rect] = ()) -> bool:
    """Do the two sides break into paragraphs at different heights? A column of text (an
    index's letter groups, a list's sections) has blank bands of its own, several rows deep on
    each side, across which the other side's rows run on; a table's rows, however short its
    cells, leave their blanks across both sides, and a label beside a long cell is one row.
    Both sides' lines must be more than labels wide, and the two not framed as a table's body.
    """
    if _framed(left, right, rules):
        return False  # a ruled table's empty cells leave blanks on one side only, as a column's breaks do
    h = layout_unit(left + right)
    if min(np.median([it.x1 - it.x0 for it in side]) for side in (left, right)) < params.label_width * h:
        return False  # a listing's line numbers, a list's labels: their code or text may lack lines
    if all(_listed(side, params) for side in (left, right)):
        return True  # a bulleted list on each side: two lists, as a table's cells rarely are
    return any(_gaps_filled(side, other, params) >= 2 for side, other in ((left, right), (right, left)))


def _listed(side: list[Item], params: LayoutParams) -> bool:
    """Is the side a list: column_rows or more rows start with a bullet or an enumeration's
    label ("1.", "b)", "iv.", "2A."), and nearly all its other rows do too, but for an item's
    further lines (indented to its text, up to 2.5 line heights from the side's left edge)?"""
    rows = rows_of(side, params)
    edge, h = min(row[0].x0 for row in rows), layout_unit(side)
    marked = [bool(row[0].line.bullet or enumeration_label(row[0].line.text)) for row in rows]
    # (labels set flush right, "9." beside "10.", stand in that band too: a marked row counts)
    counted = [m for row, m in zip(rows, marked) if m or not 0.5 * h <= row[0].x0 - edge <= 2.5 * h]
    bulleted = sum(counted)
    return bulleted >= params.column_rows and bulleted >= 0.8 * len(counted)


def _gaps_filled(side: list[Item], other: list[Item], params: LayoutParams) -> int:
    """How many of `side`'s blank bands (deeper than a paragraph gap) hold a row of `other`; 0
    unless `side`'s pieces between them average `column_rows` rows or more."""
    h = layout_unit(side + other)
    pieces = _blank_separated(side, params.para_gap * h)
    rows = len(rows_of(side, params))
    if len(pieces) < 2 or rows < params.column_rows * len(pieces):
        return 0
    filled = 0
    for upper, lower in zip(pieces, pieces[1:]):
        top, bottom = max(it.y1 for it in upper), min(it.y0 for it in lower)
        if any(top < it.cy < bottom for it in other):
            filled += 1
    return filled


def _sides(items: list[Item], cut: float) -> tuple[list[Item], list[Item]]:
    """The items left of x = cut and those right of it. A free band's cut crosses no box; a column
    rule's may cross a scanned line's padded box, which goes to the side its centre is on."""
    left = [it for it in items if (it.x0 + it.x1) / 2 < cut]
    return left, [it for it in items if (it.x0 + it.x1) / 2 >= cut]


def ruled_table_pieces(region: Region, rules: Sequence[Rect], reach: float = 1.5) -> list[list[Item]] | None:
    """A ruled table (`ruled_across`) that fills only part of a region, cut out of it: the lines
    above it, the table, and the lines below it, each read on its own (a full-width table whose
    column gap lines up with a two-column page's gutter must not make the columns below it one
    table). The table reaches from its top rule (or the row just over its first rule set between
    rows: a header row, where the top rule lies above the region) to its bottom rule. None where
    the table fills the region."""
    h = layout_unit(region.items)
    y_lo, y_hi = min(it.y0 for it in region.items) - reach * h, max(it.y1 for it in region.items) + reach * h
    for lo, hi in region.gutters:
        left, right = _sides(region.items, (lo + hi) / 2)
        if not left or not right:
            continue
        tight, boxes = _table_rules(left, right, rules, reach)
        if not tight and not boxes:
            continue
        spans = _spans(left, right)
        crossing = [r for r in horizontal_rules(rules) if _over_both(r, spans) and y_lo <= (r[1] + r[3]) / 2 <= y_hi]
        top = min([r[1] for r in crossing] + [r[1] - reach * h for r in tight] + [y0 for y0, _ in boxes])
        bottom = max([r[3] for r in crossing] + [y1 for _, y1 in boxes])
        above = [it for it in region.items if it.cy < top]
        below = [it for it in region.items if it.cy > bottom]
        inside = [it for it in region.items if top <= it.cy <= bottom]
        if (above or below) and inside:
            return [piece for piece in (above, inside, below) if piece]
    return None


def ruled_across(left: list[Item], right: list[Item], rules: Sequence[Rect], reach: float = 1.5) -> bool:
    """Are the two sides of a gutter the cells of one ruled table, not two columns of text? A
    horizontal rule runs over most of both sides, with lines of both sides just above it and just
    below it (within `reach` line heights: its rule under the header row, between its rows), or a
    closed vertical rule runs down the gutter (`_boxes`). A page's columns are not crossed by a
    rule set tight between their lines (a rule under a running head stands apart from the columns
    below it)."""
    tight, boxes = _table_rules(left, right, rules, reach)
    return bool(tight or boxes)


def _table_rules(left: list[Item], right: list[Item], rules: Sequence[Rect],
                 reach: float) -> tuple[list[Rect], list[tuple[float, float]]]:
    """The horizontal rules set tight between rows of both sides, and the closed vertical rules
    down the gutter (their top and bottom)."""
    spans = _spans(left, right)
    tight = [r for r in horizontal_rules(rules) if _over_both(r, spans) and _between_rows(r, left, right, reach)]
    return tight, _boxes(left, right, rules)


def _spans(left: list[Item], right: list[Item]) -> list[tuple[float, float]]:
    return [(min(it.x0 for it in side), max(it.x1 for it in side)) for side in (left, right)]


def _over_both(rule: Rect, spans: list[tuple[float, float]]) -> bool:
    """Does the rule run over at least half of each side's width?"""
    x0, _, x1, _ = rule
    return all(min(x1, b) - max(x0, a) >= 0.5 * (b - a) for a, b in spans)


def _between_rows(rule: Rect, left: list[Item], right: list[Item], reach: float) -> bool:
    """Lines of both sides just above the rule and just below it (within `reach` line heights)."""
    _, y0, _, y1 = rule
    h = layout_unit(left + right)
    return all(any(y0 - reach * h <= it.y1 <= y1 + 0.5 * h for it in side) and
               any(y0 - 0.5 * h <= it.y0 <= y1 + reach * h for it in side) for side in (left, right))


def _framed(left: list[Item], right: list[Item], rules: Sequence[Rect], reach: float = 1.5) -> bool:
    """Do rules over both sides close them, one just above each side's first line and one just
    below each side's last (within `reach` line heights): a table's body between its rules?"""
    h = layout_unit(left + right)
    across = [r for r in horizontal_rules(rules) if _over_both(r, _spans(left, right))]
    tops = [min(it.y0 for it in side) for side in (left, right)]
    bottoms = [max(it.y1 for it in side) for side in (left, right)]
    above = any(all(0 <= top - r[3] <= reach * h for top in tops) for r in across)
    below = any(all(0 <= r[1] - bottom <= reach * h for bottom in bottoms) for r in across)
    return above and below


def _ruled_apart(left: list[Item], right: list[Item], rules: Sequence[Rect], least: int = 2) -> bool:
    """Is each side ruled on its own: `least` horizontal rules or more run over most of one
    side and stop short of the other, on both sides (two tables side by side, each with its own
    rules)? Called where no rule runs over both (`ruled_across`)."""
    (l0, l1), (r0, r1) = _spans(left, right)
    own = [0, 0]
    for x0, _, x1, _ in horizontal_rules(rules):
        if min(x1, l1) - max(x0, l0) >= 0.5 * (l1 - l0) and x1 < r0:
            own[0] += 1
        elif min(x1, r1) - max(x0, r0) >= 0.5 * (r1 - r0) and x0 > l1:
            own[1] += 1
    return min(own) >= least


def _boxes(left: list[Item], right: list[Item], rules: Sequence[Rect]) -> list[tuple[float, float]]:
    """The top and bottom of each vertical rule down the gutter between the two sides that starts
    and ends on horizontal rules running over both (a boxed grid's inner line), with lines of both
    sides beside it: a table's cells. A rule between two columns of text (`\\columnseprule`) is
    not closed so."""
    h = layout_unit(left + right)
    near_x0, near_x1 = max(it.x1 for it in left) - h, min(it.x0 for it in right) + h
    across = [r for r in horizontal_rules(rules) if _over_both(r, _spans(left, right))]
    boxes = []
    for x0, y0, x1, y1 in rules:
        if y1 - y0 <= x1 - x0 or not near_x0 <= (x0 + x1) / 2 <= near_x1:
            continue
        closed = all(any(abs((r[1] + r[3]) / 2 - end) <= 0.5 * h for r in across) for end in (y0, y1))
        if closed and all(any(y0 <= it.cy <= y1 for it in side) for side in (left, right)):
            boxes.append((y0, y1))
    return boxes


def _ink_column_split(region: Region, params: LayoutParams, h: float,
                      rules: Sequence[Rect] = ()) -> tuple[list[Item], list[Item]] | None:
    """A region with no gutter between its boxes, cut where one runs between its lines' ink and
    text columns stand on both sides (`_narrow_gutter`): a detector's padded boxes of a tight
    index or glossary touch across a gutter that the ink leaves open. Nothing else is cut on
    the ink's evidence alone (label/description lists and aligned code sit as close)."""
    if region.gutters or not _inked(region):
        return None
    return _ink_split(region.items, params, h, rules)


def _ink_bands(items: list[Item], params: LayoutParams, h: float) -> list[tuple[float, float]]:
    """Gutters between the items' ink (interior bands at least a gutter wide)."""
    return interior(free_bands(items, min(i.gx0 for i in items), max(i.gx1 for i in items),
                               params.gutter * h, ink=True), items, ink=True)


def _ink_split(items: list[Item], params: LayoutParams, h: float,
               rules: Sequence[Rect] = ()) -> tuple[list[Item], list[Item]] | None:
    """The two sides of `_ink_gutter`, or None."""
    band = _ink_gutter(items, params, h, rules)
    if band is None:
        return None
    cut = (band[0] + band[1]) / 2
    return [it for it in items if it.gx1 <= cut], [it for it in items if it.gx0 >= cut]


def _ink_gutter(items: list[Item], params: LayoutParams, h: float, rules: Sequence[Rect] = (),
                bands: list[tuple[float, float]] | None = None) -> tuple[float, float] | None:
    """The first gutter between the items' ink that parts columns of text (`_narrow_gutter`).
    Not the cells of a ruled table (`ruled_across`), however close, nor sides that a blank band
    runs across more than once: two columns of text rarely break at the same height, a grid of
    examples does (a heading over the columns is one side's piece; a running head alone on its
    row, over both, is no piece of either). A side of contents or index entries is a column
    wherever it breaks (tikz-planets' contents beside its first sections, both after a blank
    at one height). `bands`: the items'
    `_ink_bands`, where the caller has them."""
    pieces = _blank_separated(items, params.para_gap * h)
    for lo, hi in _ink_bands(items, params, h) if bands is None else bands:
        cut = (lo + hi) / 2
        left = [it for it in items if it.gx1 <= cut]
        right = [it for it in items if it.gx0 >= cut]
        if not left or not right or ruled_across(left, right, rules):
            continue
        both = sum(1 for piece in pieces if len(rows_of(piece, params)) > 1
                   and any(it.gx1 <= cut for it in piece) and any(it.gx0 >= cut for it in piece))
        if (both <= 1 or _entries(left, params) or _entries(right, params)) and _narrow_gutter(
                left, right, hi - lo, params, ink=True):
            return lo, hi
    return None


def _narrow_gutter(left: list[Item], right: list[Item], gutter: float, params: LayoutParams,
                   ink: bool = False) -> bool:
    """Columns of text are set close together for their width (a gutter of 1-2 em beside a
    column of 20-40), table cells apart for theirs: a gutter this narrow for the columns on both
    sides of it, each several rows deep and filled with text, parts columns even where their
    rows line up (an index, a glossary in three columns). Text fills its column: one line per
    row, lines a good part of the column's width, where table cells stand beside other cells."""
    near = (_next_column(left, params, True, ink), _next_column(right, params, False, ink))
    if min(len(rows_of(side, params)) for side in near) < params.column_rows:
        return False
    for side in near:
        rows = [join_row(row, params) for row in rows_of(side, params)]
        single = sum(1 for row in rows if len(row) == 1)
        width = float(np.median([it.x1 - it.x0 for row in rows for it in row]))
        if single < 0.8 * len(rows) or width < params.column_fill * extent(side):
            return False
    widths = [extent(side) for side in near]
    if max(widths) > params.column_ratio * min(widths):
        return False  # a table's columns are as wide as their cells; close columns of text are alike
    return gutter < params.column_gutter * min(widths)


def _next_column(items: list[Item], params: LayoutParams, last: bool, ink: bool = False) -> list[Item]:
    """The items of the column nearest a gutter: the side's last (or first) column."""
    h = layout_unit(items)
    ends = [x_ends(it, ink) for it in items]
    lo, hi = min(x0 for x0, _ in ends), max(x1 for _, x1 in ends)
    bands = interior(free_bands(items, lo, hi, params.gutter * h, ink), items, ink)
    if not bands:
        return items
    if last:
        edge = bands[-1][1]
        return [it for it, (x0, _) in zip(items, ends) if x0 >= edge]
    edge = bands[0][0]
    return [it for it, (_, x1) in zip(items, ends) if x1 <= edge]
