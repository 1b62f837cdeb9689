"""The layout stage's input: one text line with typed annotations.

Every engine hands the stage the same thing: the lines it read (text, confidence, box in
pixels of the upright page) and what it knows about them beyond the text, as fields rather
than markers in the text: a list bullet that leads the line, a dot leader that joins it to
the next line on its row, the height of its font where known, how heavy its type is (its
strokes' width measured in the pixels, or the text layer's bold font), and whether it came
from OCR or from the PDF's own text layer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from outputs.model import BULLETS, Box, Line, Word

LEADER_TEXT = "..."  # how a dot leader reads in the output text ("Title ... 29")
OCR, TEXT_LAYER = "ocr", "textlayer"
# Marks that are list bullets only when a space follows ("-x" is a word, "- x" an item); OCR
# often reads a second-level LaTeX item's en dash as an em dash.
_SPACED_BULLETS = "-–—*"
# What a dot leader runs to, and what ends a contents entry: a page number, a range or a list of
# them, in arabic or roman figures.
_PAGE_NUMBERS = re.compile(r"[0-9ivxlcdmIVXLCDM]+(?:\s*[-–,]\s*[0-9ivxlcdmIVXLCDM]+)*")


def reads_as_page_numbers(text: str) -> bool:
    return bool(_PAGE_NUMBERS.fullmatch(text.strip()))


def line_bounds(line: LayoutLine) -> tuple[float, float, float, float]:
    """The line's box as x0, y0, x1, y1."""
    xs, ys = [p[0] for p in line.box], [p[1] for p in line.box]
    return min(xs), min(ys), max(xs), max(ys)


@dataclass(frozen=True, eq=False)
class Joined:
    """Where a line is one row of a line the engine read as one across several rows (PDFium
    joins a line that ends in a hyphen to the next): the whole line and this row's place in it.
    The stage lays the rows out as rows, and hands the whole line back where its rows stay
    together in one block, so the text stays as read."""
    whole: Line
    row: int
    rows: int


@dataclass
class LayoutLine:
    text: str  # the line's words, without its bullet
    conf: float
    box: Box  # 4 points, clockwise from top-left, pixels of the upright page
    origin: str = OCR  # OCR | TEXT_LAYER
    bullet: str | None = None  # the list bullet leading the line (read, or found in the pixels)
    leader: bool = False  # a dot leader runs from this line to the next line on its row
    font_size: float | None = None  # the font's size in pixels where known (text layer)
    stroke: float | None = None  # the mean width of its strokes in pixels, where measured (OCR)
    bold: bool | None = None  # set in a bold font, where known (text layer)
    words: list[Word] | None = None
    joined: Joined | None = None

    @property
    def output_text(self) -> str:
        return f"{self.bullet} {self.text}" if self.bullet else self.text

    def to_line(self) -> Line:
        return Line(self.output_text, self.conf, [list(p) for p in self.box], self.words)


def output_lines(lines: list[LayoutLine]) -> list[Line]:
    """A block's lines as output: the rows of a joined line, where all of them follow each
    other in order, become the whole line again."""
    out: list[Line] = []
    k = 0
    while k < len(lines):
        joined = lines[k].joined
        if joined is not None and joined.row == 0:
            run = lines[k:k + joined.rows]
            if len(run) == joined.rows and all(
                    ln.joined is not None and ln.joined.whole is joined.whole and ln.joined.row == r
                    for r, ln in enumerate(run)):
                out.append(joined.whole)
                k += joined.rows
                continue
        out.append(lines[k].to_line())
        k += 1
    return out


def split_bullet(text: str) -> tuple[str | None, str]:
    """(bullet, rest) of a line's text: a leading bullet character (the one set,
    outputs.model.BULLETS) followed by text, or a dash/asterisk followed by a space."""
    stripped = text.lstrip()
    if len(stripped) < 2:
        return None, text
    mark = stripped[0]
    if mark in BULLETS or (mark in _SPACED_BULLETS and stripped[1] == " "):
        rest = stripped[1:].lstrip()
        if rest:
            return mark, rest
    return None, text


def from_line(line: Line, origin: str = OCR, font_size: float | None = None,
              bold: bool | None = None) -> LayoutLine:
    """A line as read, its leading bullet (if any) taken out of the text into the annotation."""
    bullet, text = split_bullet(line.text)
    return LayoutLine(text, line.conf, [list(p) for p in line.box], origin, bullet,
                      font_size=font_size, bold=bold, words=line.words)


def with_bullet(line: LayoutLine, bullet: str, box: Box) -> LayoutLine:
    return replace(line, bullet=bullet, box=box)
