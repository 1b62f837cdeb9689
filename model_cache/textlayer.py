"""The `textlayer` engine: a PDF page's own text layer, as lines with boxes, in content order.

Exact and fast for born-digital PDFs. Its blocks and their kinds come from the shared layout
stage, which keeps the content order where that order reads right. `is_real` decides whether a page's text layer is
worth trusting instead of OCR (`--text-layer auto`): a stray glyph or a stamp on a scan
must not make a scanned page count as text, and neither does an invisible text layer over a
scan (render mode 3: another tool's earlier OCR, of unknown quality): only visible text counts.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field

import numpy as np

from model_cache.layout import TEXT_LAYER, from_line, layout_page
from model_cache.layout.lines import Joined, LayoutLine
from outputs.model import Block, Box, Line, Word
from outputs.turns import quarter_turn

ENGINE_NAME = "textlayer"
MIN_REAL_CHARS = 20  # fewer non-space characters than this is never a real text layer
MIN_CHARS_OVER_IMAGE = 200  # a page mostly covered by an image needs this many to count
IMAGE_COVERAGE = 0.5
MAX_BAD_CHAR_SHARE = 0.1
_PDFIUM_HYPHEN = "\ufffe"  # PDFium's mark for a hyphen it joined at a line end
_JOINED_HYPHENS = _PDFIUM_HYPHEN + "\x02"  # (older PDFium builds mark it U+0002)


@dataclass
class TextLayer:
    lines: list[Line]
    nonspace_chars: int
    bad_chars: int
    image_coverage: float  # share of the page area covered by image objects (0..1)
    invisible_chars: int = 0  # non-space characters drawn invisibly (an OCR layer over a scan)
    page_size: tuple[float, float] = (0.0, 0.0)  # width, height in pixels at the extraction scale
    fonts: list[LineFont] = field(default_factory=list)  # per line
    # per line, its rows on the page where PDFium joined it over a line-end hyphen (else empty)
    rows: list[list[Typed]] = field(default_factory=list)

    @property
    def visible_chars(self) -> int:
        return self.nonspace_chars - self.invisible_chars

    @property
    def is_real(self) -> bool:
        if self.visible_chars < MIN_REAL_CHARS:
            return False
        if self.bad_chars > MAX_BAD_CHAR_SHARE * self.nonspace_chars:
            return False  # unmapped glyphs: the text layer would be garbage
        return self.image_coverage < IMAGE_COVERAGE or self.visible_chars >= MIN_CHARS_OVER_IMAGE

    @property
    def is_invisible_ocr(self) -> bool:
        """Mostly invisible text: a scan that some other tool has OCR'd before."""
        return self.invisible_chars >= MIN_REAL_CHARS and not self.is_real

    def layout_lines(self) -> list[LayoutLine]:
        """The layout stage's input: one line per row on the page. A line PDFium joined over a
        line-end hyphen is laid out as its rows (one box two rows high reads as larger type and
        would end its paragraph) and comes back whole (model_cache.layout.lines.output_lines)."""
        fonts = self.fonts or [LineFont()] * len(self.lines)
        rows = self.rows or [[] for _ in self.lines]
        out: list[LayoutLine] = []
        for line, font, parts in zip(self.lines, fonts, rows):
            if not parts:
                out.append(from_line(line, TEXT_LAYER, font.size, font.bold))
                continue
            for k, (part, part_font) in enumerate(parts):
                laid = from_line(part, TEXT_LAYER, part_font.size, part_font.bold)
                laid.joined = Joined(line, k, len(parts))
                out.append(laid)
        return out

    @property
    def blocks(self) -> list[Block]:
        width, height = self.page_size
        return layout_page(self.layout_lines(), width, height, keep_order=True)


def extract_text_layer(page, scale: float) -> TextLayer:
    """Read a pypdfium2 PdfPage's text layer; boxes in pixels of the page rendered at `scale`."""
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        text = textpage.get_text_range(0, count) if count > 0 else ""
        to_pixels = _pixel_transform(page, scale)
        sized = _lines(textpage, text, to_pixels, scale)
        invisible = _invisible_chars(textpage, text)
    finally:
        textpage.close()
    nonspace = sum(1 for ch in text if not ch.isspace())
    bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\r\n\t"))
    width, height = page.get_size()
    if page.get_rotation() % 180:
        width, height = height, width
    return TextLayer([ln for ln, _, _ in sized], nonspace, bad, _image_coverage(page), invisible,
                     (width * scale, height * scale), [font for _, font, _ in sized],
                     [rows for _, _, rows in sized])


def _invisible_chars(textpage, text: str) -> int:
    """Non-space characters whose text object is drawn in an invisible render mode (3, or 7: clip only)."""
    import pypdfium2.raw as pdfium_c

    invisible_modes = (pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE, pdfium_c.FPDF_TEXTRENDERMODE_CLIP)
    count = 0
    for index, ch in enumerate(text):
        if ch.isspace():
            continue
        obj = pdfium_c.FPDFText_GetTextObject(textpage.raw, index)
        if obj and pdfium_c.FPDFTextObj_GetTextRenderMode(obj) in invisible_modes:
            count += 1
    return count


@dataclass(frozen=True)
class LineFont:
    """What the text layer says of a line's type: its median font size in pixels, and whether
    nine in ten of its characters are set in a bold font (None: unknown)."""
    size: float | None = None
    bold: bool | None = None


Typed = tuple[Line, LineFont]
# A bold face by its name: Bold, Black, Heavy, Semibold, Demi; TeX's cmbx / lmbx (bold extended).
_BOLD_NAME = re.compile(r"bold|black|heavy|demi|cmbx|cmssbx|lmbx", re.IGNORECASE)
_FORCE_BOLD = 1 << 18  # the PDF font descriptor's ForceBold flag


class FontStyles:
    """What a text page's characters are set in: the size and whether the font is bold (its
    weight, ForceBold flag or name). Both hold for a whole text object, so they are found once
    per object (and boldness once per font name), not per character."""

    def __init__(self, textpage) -> None:
        self.textpage = textpage
        self.bold: dict[bytes, bool] = {}
        self.types: dict[int, tuple[float, bool]] = {}
        self.buffer = ctypes.create_string_buffer(256)
        self.flags = ctypes.c_int(0)

    def type_of(self, index: int) -> tuple[float, bool]:
        """(font size in points times the text matrix's scale, 0 where unknown; bold)."""
        import pypdfium2.raw as pdfium_c

        obj = ctypes.cast(pdfium_c.FPDFText_GetTextObject(self.textpage.raw, index), ctypes.c_void_p).value
        if obj is not None and obj in self.types:
            return self.types[obj]
        size = pdfium_c.FPDFText_GetFontSize(self.textpage.raw, index)
        matrix = pdfium_c.FS_MATRIX()
        if size > 0 and pdfium_c.FPDFText_GetMatrix(self.textpage.raw, index, matrix):
            # some PDFs set every font at 1 pt and scale the text matrix
            size *= abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
        found = (max(size, 0.0), self.is_bold(index))
        if obj is not None:
            self.types[obj] = found
        return found

    def font(self, index: int) -> tuple[bytes, int]:
        """(the character's font name, the font descriptor's flags)."""
        import pypdfium2.raw as pdfium_c

        length = pdfium_c.FPDFText_GetFontInfo(self.textpage.raw, index, self.buffer, 256, ctypes.byref(self.flags))
        return self.buffer.raw[:max(0, length - 1)], self.flags.value

    def is_bold(self, index: int) -> bool:
        import pypdfium2.raw as pdfium_c

        name, flags = self.font(index)
        if name not in self.bold:
            self.bold[name] = (bool(flags & _FORCE_BOLD) or bool(_BOLD_NAME.search(name.decode("latin-1")))
                               or pdfium_c.FPDFText_GetFontWeight(self.textpage.raw, index) >= 600)
        return self.bold[name]


def _lines(textpage, text: str, to_pixels, scale: float) -> list[tuple[Line, LineFont, list[Typed]]]:
    """The page's lines as PDFium reads them, each with its font and, where PDFium joined it
    over line-end hyphens, its rows (cut after each such hyphen)."""
    styles = FontStyles(textpage)
    lines: list[tuple[Line, LineFont, list[Typed]]] = []
    start = 0
    for index in range(len(text) + 1):
        if index < len(text) and text[index] not in "\r\n":
            continue
        if index > start:
            line = _line(textpage, text, start, index, to_pixels)
            if line is not None:
                cuts = _cuts(text, start, index)
                rows = _rows(textpage, text, start, index, cuts, to_pixels, scale, styles) if cuts else []
                if rows:
                    line.breaks = _breaks(text, start, index, cuts)
                lines.append((line, _line_font(text, start, index, scale, styles), rows))
        start = index + 1
    return lines


def _cuts(text: str, start: int, end: int) -> list[int]:
    """Where a line runs on to its next row: just after each hyphen PDFium joined."""
    return [i + 1 for i in range(start, end) if text[i] in _JOINED_HYPHENS]


def _rows(textpage, text: str, start: int, end: int, cuts: list[int], to_pixels, scale: float,
          styles: FontStyles) -> list[Typed]:
    """A line's pieces cut at `cuts`, where there are at least two with text."""
    rows: list[Typed] = []
    for a, b in zip([start, *cuts], [*cuts, end]):
        line = _line(textpage, text, a, b, to_pixels)
        if line is not None:
            rows.append((line, _line_font(text, a, b, scale, styles)))
    return rows if len(rows) >= 2 else []


def _breaks(text: str, start: int, end: int, cuts: list[int]) -> list[int] | None:
    """The cuts as offsets in the line's text (which _line strips of leading space)."""
    length = len(text[start:end].strip())
    offsets = [len(text[start:cut].lstrip()) for cut in cuts]
    return [k for k in offsets if 0 < k < length] or None


def _line(textpage, text: str, start: int, end: int, to_pixels) -> Line | None:
    content = text[start:end].replace(_PDFIUM_HYPHEN, "-").replace("\x02", "-")
    if not content.strip():
        return None
    boxes: list[Box | None] = []
    for index in range(start, end):
        box = None
        if not text[index].isspace():
            left, bottom, right, top = textpage.get_charbox(index)
            if right > left or top > bottom:
                box = _bounds([to_pixels(x, y) for x, y in ((left, top), (right, bottom))])
        boxes.append(box)
    found = [b for b in boxes if b is not None]
    box = _bounds([p for b in found for p in b]) if found else [[0.0, 0.0]] * 4
    return Line(content.strip(), 1.0, box, _words(content, boxes) if found else None)


def _words(content: str, boxes: list[Box | None]) -> list[Word]:
    """One word per run of non-space characters, its box the bounds of its characters'."""
    words: list[Word] = []
    start = None
    for index in range(len(content) + 1):
        inside = index < len(content) and not content[index].isspace()
        if inside and start is None:
            start = index
        elif not inside and start is not None:
            found = [b for b in boxes[start:index] if b is not None]
            if found:
                words.append(Word(content[start:index], 1.0, _bounds([p for b in found for p in b])))
            start = None
    return words


def _bounds(points: list) -> Box:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def _line_font(text: str, start: int, end: int, scale: float, styles: FontStyles) -> LineFont:
    """The median font size of a line's characters in pixels, and whether nine in ten of them
    are bold."""
    sizes, bold, counted = [], 0, 0
    for i in range(start, end):
        if text[i].isspace():
            continue
        size, is_bold = styles.type_of(i)
        if size > 0:
            sizes.append(size)
        counted += 1
        bold += is_bold
    sizes.sort()
    return LineFont(sizes[len(sizes) // 2] * scale if sizes else None,
                    bold >= 0.9 * counted if counted else None)


def _pixel_transform(page, scale: float):
    """PDF user space -> pixels of the page as PDFium renders it (its /Rotate applied)."""
    left, bottom, right, top = page.get_bbox()
    width, height = (right - left) * scale, (top - bottom) * scale
    to_unrotated = np.array([[scale, 0, -left * scale], [0, -scale, top * scale], [0, 0, 1]])
    matrix = quarter_turn(page.get_rotation() // 90, width, height) @ to_unrotated
    a, b, c, d, e, f = (float(v) for v in matrix[:2].ravel())

    def to_pixels(x: float, y: float) -> tuple[float, float]:
        return a * x + b * y + c, d * x + e * y + f

    return to_pixels


def _image_coverage(page) -> float:
    import pypdfium2.raw as pdfium_c

    left, bottom, right, top = page.get_bbox()
    page_area = max((right - left) * (top - bottom), 1e-6)
    covered = 0.0
    try:
        for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2):
            # pypdfium2 5 renamed get_pos to get_bounds; under 5 the old name raised and every
            # page counted as image-free, so 20 stray characters made a scan 'real' text.
            x0, y0, x1, y1 = obj.get_bounds() if hasattr(obj, "get_bounds") else obj.get_pos()
            w = max(0.0, min(x1, right) - max(x0, left))
            h = max(0.0, min(y1, top) - max(y0, bottom))
            covered = max(covered, w * h / page_area)
    except Exception:
        return 0.0  # a page whose objects cannot be listed: judge it by its text alone
    return min(covered, 1.0)
