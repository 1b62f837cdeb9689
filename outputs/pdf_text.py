"""The invisible text layer of a searchable PDF page: geometry and content-stream operators.

Boxes in a PageResult are pixels of the upright image (the rendered page turned clockwise
by `rotation`). `page_transform` maps them to the PDF page's user space, undoing the
engine's turn, the pixel scale and the page's own /Rotate. Each word is drawn in the
glyph-less font (render mode 3: invisible) with a text matrix that puts its em box exactly
on the word's quadrilateral (skewed and turned words included): the text matrix's x axis
runs along the word's baseline, scaled so its characters fill the box's width, its y axis
up the box's left edge. A space is drawn across the gap between two words of a line, so
copied text keeps its spaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pikepdf

from outputs.glyphless import ADVANCE, DESCENT, UNITS_PER_EM
from outputs.model import Box, PageResult, Word
from outputs.turns import Matrix, quarter_turn
from outputs.words import has_box, split_box, words_of

@dataclass(frozen=True)
class PageFrame:
    """Where the rendered page sits in user space: its visible box and its /Rotate."""
    left: float
    bottom: float
    right: float
    top: float
    rotate: int = 0  # the page's /Rotate (clockwise, as PDF viewers show it)


def page_transform(result: PageResult, frame: PageFrame) -> Matrix:
    """Upright-image pixels of `result` -> the PDF page's user-space points."""
    k = (result.rotation // 90) % 4
    rendered_w, rendered_h = (result.height, result.width) if k % 2 else (result.width, result.height)
    to_rendered = quarter_turn(4 - k, result.width, result.height)
    page_w, page_h = frame.right - frame.left, frame.top - frame.bottom
    r = (frame.rotate // 90) % 4
    view_w, view_h = (page_h, page_w) if r % 2 else (page_w, page_h)
    scale = np.diag([view_w / max(rendered_w, 1), view_h / max(rendered_h, 1), 1.0])
    to_unrotated = quarter_turn(4 - r, view_w, view_h)
    to_user = np.array([[1, 0, frame.left], [0, -1, frame.top], [0, 0, 1]], float)
    return to_user @ to_unrotated @ scale @ to_rendered


def apply(matrix: Matrix, box: Box) -> np.ndarray:
    points = np.array([[p[0], p[1], 1.0] for p in box]).T
    return (matrix @ points)[:2].T


class CidMap:
    """CIDs for the characters of one document (1, 2, ...), for its ToUnicode CMap."""

    def __init__(self) -> None:
        self.cids: dict[str, int] = {}

    def encode(self, text: str) -> bytes:
        out = bytearray()
        for char in text:
            cid = self.cids.get(char)
            if cid is None:
                if len(self.cids) >= 0xFFFE:
                    char, cid = "\ufffd", self.cids.setdefault("\ufffd", len(self.cids) + 1)
                else:
                    cid = self.cids[char] = len(self.cids) + 1
            out += cid.to_bytes(2, "big")
        return bytes(out)


def text_operators(result: PageResult, matrix: Matrix, font: pikepdf.Name,
                   cids: CidMap) -> list[tuple[list, pikepdf.Operator]]:
    """The content-stream instructions that draw the page's words invisibly."""
    ops: list[tuple[list, pikepdf.Operator]] = [([], pikepdf.Operator("BT")),
                                                ([3], pikepdf.Operator("Tr")),
                                                ([font, 1], pikepdf.Operator("Tf"))]
    for words in _placed_lines(result):
        for i, word in enumerate(words):
            quad = apply(matrix, word.box)
            ops += _show(quad, word.text, cids)
            if i + 1 < len(words):
                nxt = apply(matrix, words[i + 1].box)
                ops += _show(np.array([quad[1], nxt[0], nxt[3], quad[2]]), " ", cids)
    ops.append(([], pikepdf.Operator("ET")))
    return ops


def _placed_lines(result: PageResult) -> list[list[Word]]:
    """Each line's words with boxes; lines without a box of their own (an engine that gives
    none) are stacked from the page's top-left corner, one fiftieth of its height apart (closer
    if there are more), so their text is still searchable and copyable; where it sits is not
    where it is printed."""
    lines = [line for block in result.blocks for line in block.lines if line.text.strip()]
    boxless = [line for line in lines if not has_box(line, result)]
    pitch = result.height / max(len(boxless), 50)
    placed, slot = [], 0
    for line in lines:
        if has_box(line, result):
            placed.append(words_of(line))
        else:
            y0, y1 = slot * pitch, (slot + 1) * pitch
            width = min(float(result.width), len(line.text) * 0.5 * pitch)  # as if set in a half-em font
            placed.append(split_box(line.text, line.conf, _row(width, y0, y1)))
            slot += 1
    return placed


def _row(width: float, y0: float, y1: float) -> Box:
    return [[0.0, y0], [float(width), y0], [float(width), y1], [0.0, y1]]


def _show(quad: np.ndarray, text: str, cids: CidMap) -> list[tuple[list, pikepdf.Operator]]:
    """Text matrix + show for `text` filling `quad` (user space; top-left, top-right,
    bottom-right, bottom-left of the text as read)."""
    top_left, top_right, bottom_right, bottom_left = quad
    run = bottom_right - bottom_left
    up = top_left - bottom_left
    length, height = float(np.hypot(*run)), float(np.hypot(*up))
    if height < 1e-3:
        return []
    if length < 0.05 * height:  # touching words: a thin space still separates them
        direction = run / length if length > 1e-6 else np.array([up[1], -up[0]]) / height
        run = direction * 0.05 * height
    advance = len(text) * ADVANCE / UNITS_PER_EM
    x_axis = run / advance
    origin = bottom_left - up * (DESCENT / UNITS_PER_EM)  # the descent sits on the bottom edge
    values = [*x_axis, *up, *origin]
    return [([round(float(v), 4) for v in values], pikepdf.Operator("Tm")),
            ([pikepdf.String(cids.encode(text))], pikepdf.Operator("Tj"))]
