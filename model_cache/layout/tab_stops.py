"""Column edges from aligned line starts (tab stops), against a detector's padded boxes.

A detector pads each line's box by about a tenth of a line height on each side. In a tight index
or glossary the boxes of two columns then touch across a gutter that the ink leaves open, and a
single box a few pixels too wide closes the gutter for its row: the columns are read in bands,
each band left to right, instead of column after column.

A column of text is a tab stop: many lines' ink starts at one x. An index's column is also
one whose rows end in page numbers ('8, 12', '2-7', '7 ff.'). Where such a column has lines
of another aligned column ending on its left, the boxes that reach into the gap before it are
trimmed to their ink: the column's lines lose their left padding, the lines beside them their
right padding. The gutter between the boxes is then the one between the inks. Nothing else is
trimmed: the same trimming at every tab stop (papers, code, floats beside a column) made the
checking half of the corpus worse (docs/benchmarks.md, issue 12 fourth pass). Text-layer
lines keep their boxes (their boxes are their glyphs').
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from model_cache.layout.geometry import Item, LayoutParams, rows_of, same_row

# an index entry's tail: page numbers, ranges and 'f.'/'ff.' ('8, 12', '2-7, 9-14', '7 ff.')
PAGE_TAIL = re.compile(r"\d+\s*(?:ff?\.?)?\s*$")


def tab_stops(items: list[Item], h: float, params: LayoutParams) -> list[float]:
    """The x positions where at least `params.tab_lines` OCR lines' ink starts, within
    `params.tab_tol` line heights of each other (the first line of a run sets the run's span,
    so a slope of starts cannot chain into one stop)."""
    starts = sorted(it.gx0 for it in items if it.ink is not None)
    runs: list[list[float]] = []
    for x in starts:
        if runs and x - runs[-1][0] <= params.tab_tol * h:
            runs[-1].append(x)
        else:
            runs.append([x])
    return [float(np.median(run)) for run in runs if len(run) >= params.tab_lines]


def trim_to_tab_stops(items: list[Item], h: float, params: LayoutParams) -> list[Item]:
    """`items` with the boxes that reach into the gap before a tab stop trimmed to their ink."""
    tol, reach = params.tab_tol * h, 2 * params.gutter * h
    stops = tab_stops(items, h, params)
    # A gutter lies between two aligned columns: a stop with lines of another stop's column
    # ending before it. (A stop with nothing on its left is a margin; lines set flush right
    # against a column, margin notes or list labels, start at no stop.)
    gutters = [s for s in stops if any(_in_column(it, stops, s, tol) and it.gx1 < s - tol for it in items)
               and _index_column(items, stops, s, tol, params)]
    if not gutters:
        return items
    column = {stop: [it for it in items if abs(it.gx0 - stop) <= tol] for stop in gutters}
    out = []
    for it in items:
        if it.ink is None:
            out.append(it)
            continue
        x0, x1 = it.x0, it.x1
        for stop in gutters:
            if abs(it.gx0 - stop) <= tol:
                x0 = max(x0, it.gx0)  # a line of the column: its left padding lies in the gutter
            elif (it.gx1 < stop - tol and it.x1 > stop - reach and _in_column(it, stops, stop, tol)
                  and any(same_row(it, o, params) for o in column[stop])):
                x1 = min(x1, it.gx1)  # a line beside the column: its right padding does
        out.append(it if (x0, x1) == (it.x0, it.x1) else replace(it, x0=x0, x1=x1))
    return out


def _in_column(it: Item, stops: list[float], before: float, tol: float) -> bool:
    """Does the line start at or inside the column of a tab stop left of `before`?"""
    return any(stop - tol <= it.gx0 and stop < before - tol for stop in stops)


def _index_column(items: list[Item], stops: list[float], stop: float, tol: float, params: LayoutParams) -> bool:
    """Is the column starting at `stop` an index's: most of its rows end in page numbers?"""
    later = [s for s in stops if s > stop + tol]
    end = later[0] - tol if later else float("inf")
    column = [it for it in items if stop - tol <= it.gx0 < end]
    rows = rows_of(column, params)
    tails = sum(1 for row in rows if PAGE_TAIL.search(max(row, key=lambda i: i.gx1).line.text))
    return len(rows) >= params.tab_lines and tails >= params.index_tails * len(rows)
