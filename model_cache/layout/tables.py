"""A table block's grid: its rows' cells assigned to columns, where the columns are clear; and
tables whose rows the detector boxed as single lines, found from the gaps between their words."""

from __future__ import annotations

import numpy as np

from model_cache.layout.crossing import split_at
from model_cache.layout.geometry import Group, Item, LayoutParams, free_spans, make_item, same_row, word_extents
from model_cache.layout.kinds import reads_as_code


def column_bands(rows: list[list[Item]]) -> list[tuple[float, float]]:
    """x-intervals that cells of different rows share: overlapping cell spans merged."""
    spans = sorted((it.x0, it.x1) for row in rows for it in row)
    bands: list[list[float]] = []
    for x0, x1 in spans:
        if bands and x0 < bands[-1][1]:
            bands[-1][1] = max(bands[-1][1], x1)
        else:
            bands.append([x0, x1])
    return [(a, b) for a, b in bands]


def table_grid(rows: list[list[Item]], max_columns: int = 12) -> list[list[str]] | None:
    """Cell texts row by row, one column per band, or None where the grid is not clear: a cell
    spanning two bands merges them, so a table whose cells do not line up ends with one column
    (or a row with two cells in one band), and then it is left as rows of text."""
    bands = column_bands(rows)
    if not 2 <= len(bands) <= max_columns:
        return None
    grid = []
    for row in rows:
        cells = [""] * len(bands)
        for it in row:
            col = next(k for k, (a, b) in enumerate(bands) if a <= it.x0 < b or it.x0 == a)
            if cells[col]:
                return None
            cells[col] = it.line.output_text
        grid.append(cells)
    filled = sum(1 for cells in grid if sum(1 for c in cells if c) >= 2)
    return grid if len(grid) >= 2 and filled >= 0.6 * len(grid) else None


def word_tables(groups: list[Group], params: LayoutParams, skew: float) -> list[Group]:
    """Each paragraph whose lines are a table's rows, boxed one line a row, made a table of
    cells (`word_cells`), with the one-line block just above it as its header where that line's
    words stand clear of the table's column bands (a rule under the header set it apart); the
    text stays in the same order."""
    out: list[Group] = []
    for group in groups:
        found = word_cells(group, params, skew) if group.kind == "text" else None
        if found is None:
            out.append(group)
            continue
        rows, cuts = found
        header = _header(out[-1], group, cuts, params, skew) if out else None
        if header is not None:
            out.pop()
            rows = [header, *rows]
        out.append(Group([it for row in rows for it in row], "table", rows))
    return out


def _header(above: Group, table: Group, cuts: list[float], params: LayoutParams, skew: float) -> list[Item] | None:
    """The block's one line cut at the table's columns, if it heads the table: a text or title
    line with words, within `header_gap` line heights above it, none of its words across a
    column's edge."""
    if above.kind not in ("text", "title") or len(above.items) != 1:
        return None
    it = above.items[0]
    words = it.line.words or []
    top = min(row.y0 for row in table.items)
    if not words or not _whole(it) or not 0 <= top - it.y1 <= params.header_gap * it.h:
        return None
    spans = word_extents(it)
    if any(_column((a, a), cuts) != _column((b, b), cuts) for a, b in spans):
        return None
    return _cut(it, [_column(s, cuts) for s in spans], skew)


def _whole(it: Item) -> bool:
    """Do the line's words hold its whole text (cells are cut between words)?"""
    return " ".join(w.text for w in it.line.words or []).split() == it.line.text.split()


def word_cells(group: Group, params: LayoutParams, skew: float) -> tuple[list[list[Item]], list[float]] | None:
    """The block's lines cut into cells and the x positions between its columns, or None. A
    table set close (booktabs' 12 pt between columns) is boxed one line a row; its columns show
    as bands wider than `cell_gap` line heights that no word of any row covers, with words on
    both sides in two thirds of the rows.
    Not prose in two columns read across (cells of a few words), not a listing's line numbers
    (a first column of numbers alone), not code, not a contents' entries (dot leaders)."""
    items = group.items
    if len(items) < params.cell_table_rows or any(not it.line.words for it in items) \
            or any(same_row(a, b, params) for a, b in zip(items, items[1:])) \
            or any(reads_as_code(it.line.text) or it.leaders or it.line.leader for it in items) \
            or not all(map(_whole, items)):
        return None
    h = float(np.median([it.h for it in items]))
    spans = [word_extents(it) for it in items]
    bands = _cell_bands(spans, params.cell_gap * h)
    if not bands:
        return None
    cuts = [(a + b) / 2 for a, b in bands]
    columns = [[_column(s, cuts) for s in sp] for sp in spans]  # each word's column, row by row
    texts = [[" ".join(w.text for w, c in zip(it.line.words, cols) if c == k) for k in range(len(cuts) + 1)]
             for it, cols in zip(items, columns)]
    words = [len(cell.split()) for row in texts for cell in row if cell]
    if float(np.median(words)) > params.cell_words or max(words) > 2 * params.cell_words:
        return None
    if all(row[0].isdecimal() for row in texts if row[0]):
        return None  # a listing's line numbers
    return [_cut(it, cols, skew) for it, cols in zip(items, columns)], cuts


def _cell_bands(spans: list[list[tuple[float, float]]], gap: float) -> list[tuple[float, float]]:
    """x-bands at least `gap` wide that no word covers, with words on both sides in two thirds
    of the rows (and in two at least)."""
    covered = [s for row in spans for s in row]
    free = free_spans(covered, min(a for a, _ in covered), max(b for _, b in covered), gap)
    least = max(2, 2 * len(spans) / 3)
    return [(a, b) for a, b in free if sum(1 for row in spans if row[0][0] < a and row[-1][1] > b) >= least]


def _column(span: tuple[float, float], cuts: list[float]) -> int:
    return sum(1 for c in cuts if (span[0] + span[1]) / 2 > c)


def _cut(it: Item, columns: list[int], skew: float) -> list[Item]:
    """The line's cells: cut before the first word of each column after its first (`columns`:
    each word's column)."""
    cells, rest, first = [], it, 0
    for k in range(1, len(columns)):
        if columns[k] != columns[k - 1]:
            left, right = split_at(rest, k - first)
            cells.append(make_item(left, skew, it.ids))
            rest, first = make_item(right, skew, it.ids), k
    return cells + [rest]
