"""Labels of numbered code lines: a margin note standing beside a line of a line-numbered listing
(a documented source's index label, '\\foo_use:nn 79 \\cs_new:Npn ...') names that line and is
read just before it, not after the paragraph run it stands beside (margin_notes.py), which is
right for notes beside running text (an option's dates, a gloss)."""

from __future__ import annotations

import re

from model_cache.layout.geometry import Group, Item, LayoutParams, same_row

_NUMBER = re.compile(r"\s*(\d{1,5})(?![\d.,)\]:])")
_NEAR_ROWS = 3  # a line's number is a listing's if a line this many rows away carries a near number


def line_number(item: Item) -> int | None:
    """The leading line number of a code line ('79 \\cs_new', '79\\cs_new'), not a list label or
    a section number ('1.', '2.5', '3)')."""
    match = _NUMBER.match(item.line.text)
    return int(match.group(1)) if match else None


def split_labels(groups: list[list[Item]], body: list[Group],
                 params: LayoutParams) -> tuple[list[tuple[list[Item], Item]], list[list[Item]]]:
    """((note group, the numbered code line it labels), the other note groups)."""
    lines = sorted((it for g in body for it in g.items), key=lambda it: it.y0)
    labels, rest = [], []
    for group in groups:
        target = next((it for it in lines if same_row(group[0], it, params) and _numbered(it, lines)), None)
        if target is None:
            rest.append(group)
        else:
            labels.append((group, target))
    return labels, rest


def _numbered(item: Item, lines: list[Item]) -> bool:
    """A line of a numbered listing: it starts with a number and a line a few rows above or below
    it, in the same column, starts with a number at most that many lines apart."""
    n = line_number(item)
    if n is None:
        return False
    k = next(i for i, it in enumerate(lines) if it is item)
    for other in lines[max(0, k - _NEAR_ROWS):k] + lines[k + 1:k + 1 + _NEAR_ROWS]:
        m = line_number(other)
        if other is not item and m is not None and 0 < abs(m - n) <= _NEAR_ROWS and abs(other.x0 - item.x0) < item.h:
            return True
    return False


def place_labels(blocks: list[Group], labels: list[tuple[list[Item], Item]]) -> list[Group]:
    """Each label as a block of its own just before the code line it names; that line's block is
    cut there when the line is not its first (a table's block is kept whole, the label before it)."""
    out = list(blocks)
    for group, target in labels:
        k = next((k for k, b in enumerate(out) if any(it is target for it in b.items)), None)
        if k is None:
            out.append(Group(group))
            continue
        block = out[k]
        at = 0 if block.rows else next(i for i, it in enumerate(block.items) if it is target)
        pieces = [Group(block.items[:at], block.kind)] if at else []
        pieces += [Group(group), Group(block.items[at:], block.kind)]
        out[k:k + 1] = pieces
    return out
