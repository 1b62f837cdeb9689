"""The layout stage: typed lines in, ordered typed blocks out. Every engine calls it.

    blocks = layout_page(lines, width, height)                      # OCR: order from geometry
    blocks = layout_page(lines, width, height, keep_order=True)     # text layer: its own order,
                                                                    # where that order reads right
0. An OCR line the detector ran across a column gutter (its word gap where the lines above and
   below stop and start again) is cut there (crossing.py); so is one crossing a band that no
   word covers down many rows, where the detector boxed most rows across the gutter (rivers.py).
1. Lines inside a non-text region found from the page's ink (a figure and its labels) are
   taken out and read together as one `figure` block; the rules inside it are the drawing's,
   not the page's. A rule from the ink that runs across a gutter between rows of text, or a
   closed one down it, makes the two sides one ruled table (order.py).
2. Margin notes are taken out and woven back beside their paragraphs, or into the rows whose
   baselines they share (margin_notes.py).
3. The body is cut into regions and columns and read into paragraph-sized blocks (order.py);
   an index's padded OCR boxes are trimmed to their ink at its column edges first (tab_stops.py).
4. Blocks get their kinds (kinds.py).
5. With `keep_order`, the lines keep the order they came in (a PDF's content stream) unless
   that order jumps back up inside a column; the blocks and kinds are still the stage's.
"""

from __future__ import annotations

from dataclasses import replace

from model_cache.layout.crossing import split_crossing
from model_cache.layout.geometry import (Group, Item, LayoutParams, Rect, deskewed_rule, join_leaders, join_row,
                                         layout_unit, make_item, median_height, page_skew, rows_of,
                                         same_row, set_vertically)
from model_cache.layout.kinds import assign_kinds
from model_cache.layout.lines import LayoutLine, output_lines
from model_cache.layout.margin_notes import cut_at_margin, note_groups, split_margin_notes, weave_notes
from model_cache.layout.order import ordered_blocks
from model_cache.layout.paragraphs import join_toc_rows
from model_cache.layout.rivers import cut_at_rivers
from model_cache.layout.tab_stops import trim_to_tab_stops
from model_cache.layout.tables import table_grid, word_tables
from outputs.model import Block



def layout_page(lines: list[LayoutLine], width: float, height: float, *, figures: list[Rect] = (),
                rules: list[Rect] = (), skew: float | None = None, keep_order: bool = False,
                params: LayoutParams | None = None) -> list[Block]:
    """`figures` and `rules`: non-text regions and rules (horizontal and vertical) found in the
    page's pixels (x0, y0, x1, y1), where an engine looked (model_cache/ppocr/figures.py).
    `skew`: the text's baseline angle measured in the pixels (model_cache/ppocr/skew.py); without
    it the stage takes the line boxes' own."""
    params = params or LayoutParams()
    if is_vertical(lines):
        # Columns of vertical text read top to bottom, right to left: turned a quarter, they are
        # rows read left to right, top to bottom; the blocks keep the lines as they came.
        turned = [replace(line, box=_quarter_turn(line.box, width)) for line in lines]
        figures = [(y0, width - x1, y1, width - x0) for x0, y0, x1, y1 in figures]
        groups = _groups(turned, height, width, figures, (), None, params)
        return [Block(output_lines([lines[i] for it in g.items for i in it.ids]), g.kind) for g in groups]
    groups = _groups(lines, width, height, figures, rules, skew, params)
    if keep_order and reads_right([make_item(line) for line in lines if _has_text(line)], _height(lines)):
        return _in_given_order(groups, lines)
    return [_block(g) for g in groups]


def _has_text(line: LayoutLine) -> bool:
    return bool(line.text.strip() or line.bullet)


def _height(lines: list[LayoutLine]) -> float:
    return median_height([make_item(line) for line in lines if _has_text(line)])


def _groups(lines: list[LayoutLine], width: float, height: float, figures: list[Rect],
            rules: list[Rect], skew: float | None, params: LayoutParams) -> list[Group]:
    indexed = [(i, line) for i, line in enumerate(lines) if _has_text(line)]
    if skew is None:
        skew = page_skew([line for _, line in indexed])
    items = [make_item(line, skew, (i,)) for i, line in indexed]
    items = join_leaders(cut_at_rivers(split_crossing(items, params, skew), params, skew) if items else [],
                         params)
    if not items:
        return []
    h, size = layout_unit(items), median_height(items)  # gaps in h; box sizes (kinds) against size
    figure_groups, items = _take_figures(items, figures, params, h)
    # Rules inside a figure are the drawing's; the others are laid out deskewed, like the lines.
    rules = [deskewed_rule(r, skew) for r in rules if not any(_inside(r, f) for f in figures)]
    notes, body = split_margin_notes(cut_at_margin(items, params, h, skew), params, h, height)
    groups = join_toc_rows(ordered_blocks(trim_to_tab_stops(body, h, params), params, h, rules), h) if body else []
    if notes:
        groups = weave_notes(groups, note_groups(notes, params, h), params, h)
    groups = _place_figures(groups, figure_groups)
    return word_tables(assign_kinds(groups, height, size, params), params, skew)


def is_vertical(lines: list[LayoutLine], share: float = 0.6) -> bool:
    """Most lines of several characters set vertically (boxes much taller than wide)."""
    long = [line for line in lines if len(line.text.strip()) >= 3]
    if len(long) < 2:
        return False
    return sum(map(set_vertically, long)) >= share * len(long)


def _quarter_turn(box, width: float):
    """(x, y) -> (y, width - x): the rightmost column becomes the top row; corners re-listed
    clockwise from the new top-left."""
    turned = [[y, width - x] for x, y in box]
    return turned[1:] + turned[:1]


def _block(group: Group) -> Block:
    grid = table_grid(group.rows) if group.kind == "table" and group.rows else None
    return Block(output_lines([it.line for it in group.items]), group.kind, grid)


def _take_figures(items: list[Item], figures: list[Rect], params: LayoutParams,
                  h: float) -> tuple[list[Group], list[Item]]:
    """(one figure group per region holding lines, the other items). A region is read row by row."""
    groups, rest = [], list(items)
    page_text = [it for it in items if not any(_centred_in(it, f) for f in figures)]
    for x0, y0, x1, y1 in figures:
        inside = [it for it in rest if _centred_in(it, (x0, y0, x1, y1))
                  and not _runs_out(it, (x0, y0, x1, y1), page_text, params, h)]
        if inside:
            rows = [join_row(row, params) for row in rows_of(inside, params)]
            groups.append((Group([it for row in rows for it in row], "figure"), (x0, y0, x1, y1)))
            rest = [it for it in rest if all(it is not o for o in inside)]
    return groups, rest


def _centred_in(it: Item, region: Rect) -> bool:
    x0, y0, x1, y1 = region
    return x0 <= (it.x0 + it.x1) / 2 <= x1 and y0 <= it.cy <= y1


def _runs_out(it: Item, region: Rect, items: list[Item], params: LayoutParams, h: float) -> bool:
    """Is the item, in the page's first or last row and within a line and a half of the region's
    top or bottom edge, part of a row of the page's text (`items`: those in no figure) that
    runs on past the region's side (a slide's footline under a picture), not a label of the
    drawing? The region reaches a line height past its ink for such labels."""
    x0, y0, x1, y1 = region
    if min(it.cy - y0, y1 - it.cy) > 1.5 * h:
        return False
    if any(o.y0 > it.y1 for o in items) and any(o.y1 < it.y0 for o in items):
        return False
    return any(o is not it and same_row(it, o, params) and (o.x0 < x0 < o.x1 or o.x0 < x1 < o.x1)
               for o in items)


def _inside(rule: Rect, region: Rect) -> bool:
    x0, y0, x1, y1 = region
    return x0 <= rule[0] and rule[2] <= x1 and y0 <= rule[1] and rule[3] <= y1


def _place_figures(groups: list[Group], figures: list[tuple[Group, Rect]]) -> list[Group]:
    """Each figure goes before the first block that starts below its top edge and shares its
    x range (the text after it in its column), else after the last block above it in its
    column, else at the end. A figure with no text beside it spans the page's text: the first
    block below its top edge follows it, wherever that block starts (a left-aligned heading
    under a centred figure). Figures side by side are read left to right."""
    out = list(groups)
    text = [it for g in groups for it in g.items]
    for figure, (x0, y0, x1, y1) in _figure_order(figures):
        alone = not any(it.y1 > y0 and it.y0 < y1 and min(it.x1, x1) - max(it.x0, x0) <= 0.1 * (it.x1 - it.x0)
                        for it in text)
        at = next((k for k, g in enumerate(out) if g.kind != "figure"
                   and min(it.y0 for it in g.items) >= y0
                   and (alone or _shares_x(g, x0, x1))), None)
        if at is None:  # nothing under it in its column: it ends the column, after what is above it
            above = [k for k, g in enumerate(out) if min(it.y0 for it in g.items) < y0 and _shares_x(g, x0, x1)]
            at = above[-1] + 1 if above and not alone else len(out)
        out.insert(at, figure)
    return out


def _shares_x(group: Group, x0: float, x1: float) -> bool:
    """The block stands under the figure: more than a sliver of either's width in common (a
    figure's margin, grown for its labels, may reach over a gutter into the next column)."""
    g0, g1 = min(it.x0 for it in group.items), max(it.x1 for it in group.items)
    return min(g1, x1) - max(g0, x0) > 0.1 * min(g1 - g0, x1 - x0)


def _figure_order(figures: list[tuple[Group, Rect]]) -> list[tuple[Group, Rect]]:
    """Top to bottom; figures sharing most of their height (sub-figures on one row) left to right."""
    rows: list[list[tuple[Group, Rect]]] = []
    for fig in sorted(figures, key=lambda f: f[1][1]):
        _, (_, y0, _, y1) = fig
        if rows:
            _, (_, r0, _, r1) = rows[-1][0]
            if min(y1, r1) - max(y0, r0) > 0.5 * min(y1 - y0, r1 - r0):
                rows[-1].append(fig)
                continue
        rows.append([fig])
    return [fig for row in rows for fig in sorted(row, key=lambda f: f[1][0])]


def reads_right(items: list[Item], h: float, share: float = 0.05) -> bool:
    """Does a sequence of lines read as a reader would? It may go down a column, on to the
    next column or region, back up to a column's top; what no reader does is go up within
    one column. The order fails if more than `share` of its steps (at least two) do."""
    backward = 0
    for a, b in zip(items, items[1:]):
        overlap = min(a.x1, b.x1) - max(a.x0, b.x0)
        if overlap > 0.5 * min(a.x1 - a.x0, b.x1 - b.x0) and b.y0 < a.y0 - 0.5 * h:
            backward += 1
    return backward <= max(1, share * len(items))


def _in_given_order(groups: list[Group], lines: list[LayoutLine]) -> list[Block]:
    """The input lines in their own order, cut into blocks wherever the next line belongs to
    another of the stage's blocks; each block keeps its group's kind. Lines joined into one row
    by the stage stay the separate lines they were, and a line read as one across rows (a text
    layer's hyphenated line) is never cut: the order given is the order of those lines."""
    owner: dict[int, int] = {}
    for g, group in enumerate(groups):
        for it in group.items:
            for i in it.ids:
                owner[i] = g
    runs: list[tuple[int, list[LayoutLine]]] = []
    for i, line in enumerate(lines):
        g = owner.get(i)
        if g is None:
            continue
        if not runs or (runs[-1][0] != g and not _continues(runs[-1][1][-1], line)):
            runs.append((g, []))
        runs[-1][1].append(line)
    return [Block(output_lines(run), groups[g].kind) for g, run in runs]


def _continues(previous: LayoutLine, line: LayoutLine) -> bool:
    """`line` is the next row of the same joined line as `previous`."""
    a, b = previous.joined, line.joined
    return a is not None and b is not None and a.whole is b.whole and b.row == a.row + 1
