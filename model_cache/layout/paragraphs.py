"""A region without columns, read row by row (a table header's cells centred on two levels are
read with the upper level) and split into paragraph-sized blocks at larger vertical gaps, size
changes, table rows against running text, bullets, indented first lines and lines that end short."""

from __future__ import annotations

import numpy as np

from model_cache.layout.geometry import Group, Item, LayoutParams, join_row, rows_of


def _row_box(row: list[Item]) -> tuple[float, float, float, float, float]:
    return (min(i.x0 for i in row), min(i.y0 for i in row), max(i.x1 for i in row),
            max(i.y1 for i in row), float(np.median([i.h for i in row])))


def leaf_blocks(items: list[Item], params: LayoutParams) -> list[Group]:
    rows = [join_row(row, params) for row in rows_of(items, params)]
    left_edge = min(i.x0 for i in items)
    right_edge = max(i.x1 for i in items)
    blocks: list[list[list[Item]]] = []
    for k, row in enumerate(rows):
        if not blocks or _starts_block(rows, k, left_edge, right_edge, params):
            blocks.append([row])
        else:
            blocks[-1].append(row)
    return [_to_block(rows_in) for rows_in in blocks]


def _starts_block(rows: list[list[Item]], k: int, left_edge: float, right_edge: float,
                  params: LayoutParams) -> bool:
    px0, py0, px1, py1, ph = _row_box(rows[k - 1])
    x0, y0, x1, y1, h = _row_box(rows[k])
    unit = max(ph, h)
    if y0 - py1 > params.para_gap * unit:
        return True
    if max(ph, h) > params.size_change * min(ph, h):
        return True
    if (len(rows[k]) > 1) != (len(rows[k - 1]) > 1):  # table rows vs running text
        return True
    if right_edge - px1 > _first_word_width(rows[k]) + params.short_line * unit * 0.25:
        return True  # the next line's first word would have fitted: the paragraph ended
    if rows[k][0].line.bullet:
        return True
    if _block_start(rows, k, params).line.bullet:
        return False  # hanging indent of a list item
    indented = x0 - left_edge > params.indent * unit and px0 - left_edge <= params.indent * unit
    nxt = _row_box(rows[k + 1]) if k + 1 < len(rows) else None
    back_to_margin = nxt is not None and nxt[0] - left_edge <= params.indent * unit
    return indented and back_to_margin


def _block_start(rows: list[list[Item]], k: int, params: LayoutParams) -> Item:
    """The first item of the block row k-1 belongs to (walk up while rows touch)."""
    j = k - 1
    while j > 0 and not rows[j][0].line.bullet:
        above, here = _row_box(rows[j - 1]), _row_box(rows[j])
        if here[1] - above[3] > params.para_gap * max(above[4], here[4]):
            break
        j -= 1
    return rows[j][0]


def _first_word_width(row: list[Item]) -> float:
    """Estimated width of the first word of a row (CJK without spaces: two characters)."""
    first = row[0]
    text = first.line.text.strip()
    if not text:
        return 0.0
    char_w = (first.x1 - first.x0) / len(text)
    word = text.split(" ", 1)[0]
    n = len(word) if len(word) <= 20 and word.isascii() else 2
    return n * char_w


def _to_block(rows: list[list[Item]]) -> Group:
    items = [it for row in rows for it in row]
    table = sum(1 for row in rows if len(row) > 1) >= 2
    # A table of contents: its rows are "Title ... 29" once the leaders joined them; like a
    # table, its rows must stay rows (Markdown would otherwise run them into one paragraph).
    leader_rows = sum(1 for row in rows if any(it.leaders for it in row))
    toc = len(rows) >= 2 and 2 * leader_rows >= len(rows)
    return Group(items, "table", rows) if table or toc else Group(items)
