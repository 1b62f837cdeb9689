"""Margin notes: a narrow, sparse side column outside the text block (option names and
'New: 2018-03-24' stamps in package manuals, glosses in textbooks) is taken out before the
body is laid out, then each group of notes is read with the paragraph it stands beside, or,
when every line of it is set in the body's type on a body line's baseline (a command's name
beside the line describing it, a macro's name beside its code line), row by row with those lines:
the order of the page's rows, and of a LaTeX PDF's text layer."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from model_cache.layout.crossing import split_at, word_gaps
from model_cache.layout.geometry import (Group, Item, LayoutParams, extent, free_bands, interior, join_row,
                                         make_item, median_height, rows_of, same_row, set_vertically, x_ends)
from model_cache.layout.lines import OCR


def cut_at_margin(items: list[Item], params: LayoutParams, h: float, skew: float) -> list[Item]:
    """OCR lines that run from the left margin into the body, cut at the body's left edge: a
    macro's name set flush right in the margin of a LaTeX package's code is boxed with the body
    row beside it when the two stand a word space apart. The body's edge is the leftmost x where
    a quarter of the page's lines start (a two-column page's left column); a line is cut only
    where it has a word gap there and the piece before the gap reaches `note_label` line heights
    into the margin (a list's label or a heading's number, outdented by less, is left alone)."""
    starts = sorted(it.gx0 for it in items if it.gx1 - it.gx0 >= 4 * h)
    if len(starts) < 8:
        return items
    edge = next((x for x in starts if bisect_right(starts, x + 0.5 * h) - bisect_left(starts, x - 0.5 * h)
                 >= 0.25 * len(starts)), None)
    if edge is None:
        return items
    out: list[Item] = []
    for it in items:
        in_margin = it.line.origin == OCR and it.gx0 < edge - params.note_label * h
        cut = _margin_cut(it, edge, params, h) if in_margin else None
        if cut is None:
            out.append(it)
            continue
        left, right = split_at(it, cut)
        out += [make_item(left, skew, it.ids), make_item(right, skew, it.ids)]
    return out


def _margin_cut(it: Item, edge: float, params: LayoutParams, h: float) -> int | None:
    """The word index at which the line's word gap meets the body's left edge, if any (on a
    scan the recogniser may start the body's first word box up to `note_cut_reach` line heights
    before its ink)."""
    for k, (a, b) in enumerate(word_gaps(it)):
        if a <= edge + 0.25 * h and b >= edge - params.note_cut_reach * h and a - it.gx0 >= params.note_label * h:
            return k + 1
    return None


def split_margin_notes(items: list[Item], params: LayoutParams, h: float,
                       page_height: float) -> tuple[list[Item], list[Item]]:
    """(notes, body): margin notes are a side column outside the text block, separated from
    it by a band free of text down the page (running heads and feet may cross it), much
    narrower than the body, sparse, beside running text rather than table rows, and made of
    words rather than list labels (bullets, numbers), which are read with their items. The band
    is looked for between the boxes, then between the lines' ink: a detector's padded boxes of
    a macro's name in the margin of a LaTeX package's code reach into the body's."""
    band = params.margin_band * page_height
    core = [it for it in items if it.y1 > band and it.y0 < page_height - band]
    if len(core) < 2:
        return [], items
    for ink in (False, True):
        ends = [x_ends(it, ink) for it in core]
        lo, hi = min(x0 for x0, _ in ends), max(x1 for _, x1 in ends)
        for b0, b1 in interior(free_bands(core, lo, hi, params.note_gap * h, ink), core, ink):
            cut = (b0 + b1) / 2
            left = [it for it, (_, x1) in zip(core, ends) if x1 <= cut]
            right = [it for it, (x0, _) in zip(core, ends) if x0 >= cut]
            for notes, side in ((left, right), (right, left)):
                if _is_note_column(notes, side, params, h, ink) and (not ink or _set_against(notes, side, h)):
                    return notes, [it for it in items if all(it is not n for n in notes)]
    return [], items


def _set_against(notes: list[Item], body: list[Item], h: float) -> bool:
    """Notes set flush against the body's side (a left margin's names end where the body
    begins): a list's labels, as close to their items, start flush left instead."""
    if notes[0].gx1 <= body[0].gx0:
        return _flush_right(notes, h)
    return np.ptp([it.gx0 for it in notes]) <= 0.25 * h


def _flush_right(notes: list[Item], h: float) -> bool:
    return np.ptp([it.gx1 for it in notes]) <= 0.25 * h


def _is_note_column(notes: list[Item], body: list[Item], params: LayoutParams, h: float,
                    ink: bool = False) -> bool:
    if not notes or not body or extent(notes, ink) >= params.note_width * extent(body, ink):
        return False
    rows = [join_row(row, params) for row in rows_of(body, params)]
    beside = [row for row in rows if any(same_row(n, it, params) for n in notes for it in row)]
    cells = sum(1 for row in beside if len(row) > 1)
    # sparse: fewer lines than the body has rows (a narrow column of a three-column page has as
    # many lines as its neighbour has rows); beside some body (a slide's text box is not a note)
    return (bool(beside) and len(notes) <= params.note_share * len(rows)
            and cells <= 0.5 * len(beside)  # a column beside table rows is a table column
            and float(np.median([it.x1 - it.x0 for it in notes])) >= params.note_label * h)


def note_groups(notes: list[Item], params: LayoutParams, h: float) -> list[list[Item]]:
    """Vertically separate groups of note lines, each in row order."""
    groups: list[list[Item]] = []
    for it in sorted(notes, key=lambda i: i.y0):
        if groups and it.y0 - max(g.y1 for g in groups[-1]) <= params.para_gap * h:
            groups[-1].append(it)
        else:
            groups.append([it])
    return [[it for row in rows_of(g, params) for it in join_row(row, params)] for g in groups]


def paragraph_runs(blocks: list[list[Item]], firsts: list[Item], params: LayoutParams,
                   h: float) -> list[list[int]]:
    """Consecutive body blocks read as one paragraph for placing notes: a block continues the
    run when it follows closely below, is not indented and does not start beside a note's
    first line (a new note starts a new entry). Lines that merely end short (a syntax line,
    a '#1: ...' list) stay with the text they introduce."""
    runs: list[list[int]] = []
    left = 0.0
    for k, its in enumerate(blocks):
        if runs and _continues(blocks[k - 1], its, left, firsts, params, h):
            runs[-1].append(k)
            left = min(left, min(it.x0 for it in its))
        else:
            runs.append([k])
            left = min(it.x0 for it in its)
    return runs


def _continues(prev: list[Item], its: list[Item], left: float, firsts: list[Item],
               params: LayoutParams, h: float) -> bool:
    gap = min(it.y0 for it in its) - max(it.y1 for it in prev)
    overlap = min(max(i.x1 for i in prev), max(i.x1 for i in its)) - max(
        min(i.x0 for i in prev), min(i.x0 for i in its))
    first = min(its, key=lambda i: (i.y0, i.x0))
    return (-0.25 * h <= gap <= params.para_gap * h and overlap > 0
            and first.x0 - left <= params.indent * h
            and not any(same_row(first, f, params) for f in firsts))


def weave_notes(blocks: list[Group], groups: list[list[Item]], params: LayoutParams,
                h: float) -> list[Group]:
    """Each note group goes with the paragraph run it stands beside (the last run starting
    above its first line's bottom): after it, or before it when the note is the run's label
    (a one-line note on the row of a one-line run) or reaches well below it (a list of names
    described by a short text). A note above all the body comes first; one wholly in the gap
    below a run comes before the next run."""
    firsts = [g[0] for g in groups]  # a note read into a row still starts an entry
    noted = {id(it) for g in groups for it in g}
    blocks, groups = notes_into_rows(blocks, groups, params)
    geometry = [block.items for block in blocks]
    runs = paragraph_runs(geometry, firsts, params, h)
    keyed = [((r, 1, k), blocks[k]) for r, run in enumerate(runs) for k in run]
    for n, group in enumerate(groups):
        r = max((r for r, run in enumerate(runs)
                 if min(it.y0 for it in geometry[run[0]]) < group[0].y1), default=-1)
        # (the run's body lines: a note read into one of its rows is no part of what it describes)
        run_items = [it for k in runs[r] for it in geometry[k] if id(it) not in noted] if r >= 0 else []
        if run_items and r + 1 < len(runs) and min(it.y0 for it in group) >= max(it.y1 for it in run_items):
            # Wholly below the run, in the gap before the next one: the next run's heading
            # (a macro's name over its code listing).
            keyed.append(((r + 1, 0, n), Group(group)))
            continue
        before = not run_items or _note_leads(group, run_items, params, h)
        keyed.append(((max(r, 0), 0 if before else 2, n), Group(group)))
    return [block for _, block in sorted(keyed, key=lambda t: t[0])]


def notes_into_rows(blocks: list[Group], groups: list[list[Item]],
                    params: LayoutParams) -> tuple[list[Group], list[list[Item]]]:
    """A note group whose every line stands on a row of its own beside the body (one name
    per described line, a macro's name beside its code line) is read row by row: each line
    with the body line it stands on, before it from the left margin, after it from the right.
    Returns the blocks with those notes inside and the groups still to place."""
    out = [Group(list(b.items), b.kind, b.rows) for b in blocks]
    where = [(k, it) for k, b in enumerate(out) if b.rows is None for it in b.items]
    typical = median_height([it for _, it in where])
    rest = []
    for group in groups:
        partners = [_row_partner(note, where, params) for note in group]
        if _labels_row(group, partners, typical, params):
            _insert_label(out, group, partners)
            continue
        aligned = all(p is not None and _on_its_baseline(note, p[1], typical, params)
                      for note, p in zip(group, partners))
        if not aligned or len({id(p[1]) for p in partners}) < len(partners) or _heads_block(group, partners, out):
            rest.append(group)
            continue
        for note, (k, body, left) in zip(group, partners):
            at = next(i for i, it in enumerate(out[k].items) if it is body)
            out[k].items.insert(at if left else at + 1, note)
    return out, rest


def _labels_row(group: list[Item], partners: list[tuple[int, Item, bool] | None], typical: float,
                params: LayoutParams) -> bool:
    """An entry's label block set flush right in the left margin: a name on a body row's
    baseline in the body's type, with lines under it ("not auto move", "Forest boolean
    register"), one at least beside no body row, the others on a row's baseline in the name's
    block or beside the next block's first rows. It is read row by row with the name's block, a
    line beside no row of it after the row above, as the option's box sits in the text layer.
    (A stamp beside the next block's first row right under the name, l3doc's "Updated:
    2020-04-08", is read after the paragraph, as l3doc's text layer has it; so is a note set
    flush left, "Introduced in / version 1.3", as cnltx's has it.)"""
    first = partners[0]
    if (len(group) < 2 or first is None or not first[2] or _one_word_each(group)
            or all(p is not None for p in partners[1:]) or not _flush_right(group, typical)):
        return False
    inside = [(note, p) for note, p in zip(group, partners) if p is not None and p[0] == first[0]]
    return (len({id(p[1]) for _, p in inside}) == len(inside)
            and all(p[2] and _on_its_baseline(note, p[1], typical, params) for note, p in inside)
            and all(p is None or p[0] >= first[0] for p in partners))


def _insert_label(blocks: list[Group], group: list[Item], partners: list[tuple[int, Item, bool] | None]) -> None:
    """Each label line before its row partner in the name's block, or, beside no row of it,
    after the rows above it."""
    k = partners[0][0]
    items = blocks[k].items
    noted: set[int] = set()
    at = 0
    for note, partner in zip(group, partners):
        if partner is not None and partner[0] == k:
            at = next(i for i, it in enumerate(items) if it is partner[1])
        else:
            while at < len(items) and (id(items[at]) in noted or items[at].cy < note.cy):
                at += 1
        items.insert(at, note)
        noted.add(id(note))
        at += 1


def _heads_block(group: list[Item], partners: list[tuple[int, Item, bool]], blocks: list[Group]) -> bool:
    """Names stacked in the left margin from a block's first line down, one word each: the
    macros its paragraph describes, read before it (`_note_leads`), not one per row."""
    k, first, left = partners[0]
    return (len(group) > 1 and left and blocks[k].items[0] is first and all(p[0] == k for p in partners)
            and _one_word_each(group))


def _one_word_each(group: list[Item]) -> bool:
    return all(len(it.line.text.split()) == 1 for it in group)


def _on_its_baseline(note: Item, body: Item, typical: float, params: LayoutParams) -> bool:
    """Set in the body's size on the body line's baseline. Notes in a smaller type (l3doc's
    'New: 2018-03-24' stamps under a function's name) describe the paragraph and are read
    after it. The size is the body line's, or the body's `typical` line height where that line
    is taller (a line with brackets or a `\\*` stands taller than a macro's name in the same
    size). A line set vertically stands on no row's baseline."""
    return (not set_vertically(note.line) and abs(note.cy - body.cy) <= params.note_baseline * body.h
            and note.h >= params.note_size * min(body.h, typical))


def _row_partner(note: Item, where: list[tuple[int, Item]],
                 params: LayoutParams) -> tuple[int, Item, bool] | None:
    """(block, body item, note on the left) for the body line a note line stands beside:
    the nearest on its row, or None."""
    row = [(k, it) for k, it in where if same_row(note, it, params)]
    if not row:
        return None
    left = note.gx1 <= min(it.gx0 for _, it in row)  # the ink's ends: padded boxes can overlap
    k, it = (min(row, key=lambda t: t[1].x0) if left else max(row, key=lambda t: t[1].x1))
    return k, it, left


def _note_leads(group: list[Item], run: list[Item], params: LayoutParams, h: float) -> bool:
    """A note is read before its run when it is the run's label: one line on the row of a
    one-line run, or names stacked in the left margin from the run's first row down (or up to
    it: a macro's names over its code's first line): one word each, in one size, not smaller
    than the body's (the macros a LaTeX package's paragraph and code describe; a name with a
    date stamp under it, "Updated: 2020-04-08", follows its paragraph, as l3doc's text layer
    has it); or when it reaches well below the run."""
    one_line = len(group) == 1 and len(rows_of(run, params)) == 1
    heights = [it.h for it in group]
    size = params.note_size * max(median_height(run), max(heights))
    names = (len(group) > 1 and group[-1].gx1 <= min(it.gx0 for it in run) and min(heights) >= size
             and _one_word_each(group))
    label = (same_row(group[0], run[0], params) or same_row(group[-1], run[0], params)) and (one_line or names)
    overrun = max(it.y1 for it in group) - max(it.y1 for it in run) > params.note_overrun * h
    return label or overrun
