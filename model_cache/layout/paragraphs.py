"""A region without columns, read row by row (a table header's cells centred on two levels are
read with the upper level) and split into paragraph-sized blocks at larger vertical gaps, size
changes, table rows against running text, bullets, indented first lines and lines that end short.

The measures are taken against the region's own text, not against its most extreme line or box: a
line ends short against the right edge that its full lines reach (one overfull line, a URL running
into the margin, must not make every full line look short); the gap between two rows is read between
their centres less the region's typical line height, and a size change needs wider characters as
well as a taller box, where both rows are long enough to tell (a line of CJK characters, or one
without ascenders or descenders, has a shorter box); and a line pitch well over the region's usual
one parts paragraphs set apart by a little extra space."""

from __future__ import annotations

import re

import numpy as np

from model_cache.layout.geometry import Group, Item, LayoutParams, join_row, rows_of
from model_cache.layout.lines import reads_as_page_numbers


def _row_box(row: list[Item]) -> tuple[float, float, float, float, float]:
    return (min(i.x0 for i in row), min(i.y0 for i in row), max(i.x1 for i in row),
            max(i.y1 for i in row), float(np.median([i.h for i in row])))


def leaf_blocks(items: list[Item], params: LayoutParams) -> list[Group]:
    rows = [join_row(row, params) for row in rows_of(items, params)]
    left_edge = min(i.x0 for i in items)
    line_height = float(np.median([_row_box(row)[4] for row in rows]))
    right_edge = shared_right_edge(rows, line_height)
    pitch = line_pitch(rows, params)
    blocks: list[list[list[Item]]] = []
    for k, row in enumerate(rows):
        if not blocks or _starts_block(rows, k, left_edge, right_edge, line_height, params) \
                or _wider_spaced(rows, k, pitch, line_height, params):
            blocks.append([row])
        else:
            blocks[-1].append(row)
    return [_to_block(rows_in) for rows_in in blocks]


def shared_right_edge(rows: list[list[Item]], line_height: float) -> float:
    """Where the region's full lines end: the rightmost end that a third of the rows (and two)
    reach within a quarter of a line height, as justified text does, if the few rows ending
    beyond it (a quarter at most: overfull lines, line numbers in the margin) stop within 3 line
    heights of it; else the rightmost end (ragged text: code, lists)."""
    ends = np.array(sorted(_row_box(row)[2] for row in rows))
    for k in range(len(ends) - 1, -1, -1):
        if len(ends) - 1 - k > max(1, len(ends) // 4):
            break
        together = np.abs(ends - ends[k]) <= 0.25 * line_height
        near = ends[-1] - ends[k] <= 3 * line_height
        if together.sum() >= max(2, len(ends) / (3 if near else 2)):
            return float(ends[together].max())
    return float(ends[-1])


def _centre_pitch(above: list[Item], below: list[Item]) -> float:
    a, b = _row_box(above), _row_box(below)
    return (b[1] + b[3] - a[1] - a[3]) / 2


def line_pitch(rows: list[list[Item]], params: LayoutParams) -> float | None:
    """The region's usual distance between the centres of consecutive lines of one size (the
    median over such pairs), if it has at least `pitch_pairs` of them."""
    pitches = []
    for above, below in zip(rows, rows[1:]):
        ha, hb = _row_box(above)[4], _row_box(below)[4]
        step = _centre_pitch(above, below)
        if max(ha, hb) <= params.size_change * min(ha, hb) and 0 < step < 3 * max(ha, hb):
            pitches.append(step)
    return float(np.median(pitches)) if len(pitches) >= params.pitch_pairs else None


def _wider_spaced(rows: list[list[Item]], k: int, pitch: float | None, line_height: float,
                  params: LayoutParams) -> bool:
    """Row k stands further below the row above than the region's lines stand apart, by a
    visible space: paragraphs set apart by a little extra space (less than para_gap)."""
    if pitch is None or (len(rows[k]) > 1 and len(rows[k - 1]) > 1):  # a table's rows are as tall as their cells
        return False
    extra = _centre_pitch(rows[k - 1], rows[k]) - pitch
    return extra > params.para_pitch * pitch and row_gap(rows[k - 1], rows[k], line_height) > 0


def row_gap(above: list[Item], below: list[Item], line_height: float) -> float:
    """The blank space between two rows: between their boxes, or between their centres less the
    typical line height where that is smaller (boxes shorter than the region's lines)."""
    top, bottom = _row_box(above)[3], _row_box(below)[1]
    return min(bottom - top, _centre_pitch(above, below) - line_height)


def _starts_block(rows: list[list[Item]], k: int, left_edge: float, right_edge: float,
                  line_height: float, params: LayoutParams) -> bool:
    px0, py0, px1, py1, ph = _row_box(rows[k - 1])
    x0, y0, x1, y1, h = _row_box(rows[k])
    unit = max(ph, h)
    if row_gap(rows[k - 1], rows[k], line_height) > params.para_gap * unit:
        return True
    if _size_changed(rows[k - 1], rows[k], params):
        return True
    if (len(rows[k]) > 1) != (len(rows[k - 1]) > 1):  # table rows vs running text
        return True
    if len(rows[k]) > 1:  # the next row of a table: its cells end where they end
        return False
    if right_edge - px1 > _first_word_width(rows[k]) + params.short_line * unit * 0.25:
        return True  # the next line's first word would have fitted: the paragraph ended
    if rows[k][0].line.bullet:
        return True
    if _block_start(rows, k, line_height, params).line.bullet:
        return False  # hanging indent of a list item
    indented = x0 - left_edge > params.indent * unit and px0 - left_edge <= params.indent * unit
    nxt = _row_box(rows[k + 1]) if k + 1 < len(rows) else None
    back_to_margin = nxt is not None and nxt[0] - left_edge <= params.indent * unit
    return indented and back_to_margin


def _size_changed(above: list[Item], below: list[Item], params: LayoutParams) -> bool:
    """A change of type size: box heights apart by more than size_change, unless both rows are
    long enough to measure their characters and those are as wide (a line without descenders, or
    a line of lower-case letters, has a shorter box in the same type)."""
    ha, hb = _row_box(above)[4], _row_box(below)[4]
    if max(ha, hb) <= params.size_change * min(ha, hb):
        return False
    wa, wb = _char_width(above), _char_width(below)
    if wa is None or wb is None:
        return True
    return max(wa, wb) > params.same_type * min(wa, wb)


def _char_width(row: list[Item], min_chars: int = 10) -> float | None:
    """The row's mean character advance, if it has at least `min_chars` characters."""
    chars = sum(len(it.line.text.strip()) for it in row)
    return sum(it.x1 - it.x0 for it in row) / chars if chars >= min_chars else None


def _block_start(rows: list[list[Item]], k: int, line_height: float, params: LayoutParams) -> Item:
    """The first item of the block row k-1 belongs to (walk up while rows touch)."""
    j = k - 1
    while j > 0 and not rows[j][0].line.bullet:
        unit = max(_row_box(rows[j - 1])[4], _row_box(rows[j])[4])
        if row_gap(rows[j - 1], rows[j], line_height) > params.para_gap * unit:
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


# A row of a table of contents read from a text layer: the dots are in its text ("2.1 Intro . . . 3").
_TEXT_LEADER = re.compile(r"(?:\.[ \u00a0]*){4,}\S{1,8}$")


def _toc_row(row: list[Item]) -> bool:
    """A contents entry: its dots joined it to its page number, or a title and a page number
    set apart on one row (a LaTeX contents' chapter lines have no dots)."""
    last = row[-1].line.text
    return (any(it.leaders for it in row) or bool(_TEXT_LEADER.search(last.strip()))
            or (len(row) == 2 and reads_as_page_numbers(last) and any(c.isalpha() for c in row[0].line.text)))


def entry_row(row: list[Item]) -> bool:
    """Does the row read as a contents or index entry: words, then page numbers at its end
    ("1.1 Basic example ... 2", "\\group_end: ... 77, 139")? Looser than `_toc_row`: no dots or
    separate number box needed, the row's text is enough."""
    words = " ".join(it.line.output_text for it in sorted(row, key=lambda i: i.x0)).split()
    return (len(words) >= 2 and any(c.isdigit() for c in words[-1]) and reads_as_page_numbers(words[-1])
            and bool(_LETTERS.search(" ".join(words[:-1]))))


_LETTERS = re.compile(r"[^\W\d_]{3}")


def join_toc_rows(groups: list[Group], h: float) -> list[Group]:
    """Consecutive blocks made only of contents rows ("Title ... 29") become one table of contents
    when each starts within 3 line heights below the last and their rows end at one right edge
    (the page numbers): a contents page spaced wider than its body is one list, not a paragraph
    per entry."""
    out: list[Group] = []
    for group in groups:
        rows = group.rows or [group.items]
        if group.kind in ("text", "table") and rows and all(_toc_row(row) for row in rows) and out:
            last = out[-1]
            last_rows = last.rows or [last.items]
            if last.kind in ("text", "table") and all(_toc_row(row) for row in last_rows) \
                    and 0 <= min(it.y0 for it in group.items) - max(it.y1 for it in last.items) <= 3 * h \
                    and abs(max(it.x1 for it in group.items) - max(it.x1 for it in last.items)) <= h:
                out[-1] = Group(last.items + group.items, "table", last_rows + rows)
                continue
        out.append(group)
    return out
