"""The `textlayer` engine: a PDF page's own text layer, as lines with boxes, in content order.

Exact and fast for born-digital PDFs. `is_real` decides whether a page's text layer is
worth trusting instead of OCR (`--text-layer auto`): a stray glyph or a stamp on a scan
must not make a scanned page count as text.
"""

from __future__ import annotations

from dataclasses import dataclass

from outputs.model import Block, Box, Line, Word

ENGINE_NAME = "textlayer"
MIN_REAL_CHARS = 20  # fewer non-space characters than this is never a real text layer
MIN_CHARS_OVER_IMAGE = 200  # a page mostly covered by an image needs this many to count
IMAGE_COVERAGE = 0.5
MAX_BAD_CHAR_SHARE = 0.1
_PDFIUM_HYPHEN = "\ufffe"  # PDFium's mark for a hyphen it joined at a line end


@dataclass
class TextLayer:
    lines: list[Line]
    nonspace_chars: int
    bad_chars: int
    image_coverage: float  # share of the page area covered by image objects (0..1)

    @property
    def is_real(self) -> bool:
        if self.nonspace_chars < MIN_REAL_CHARS:
            return False
        if self.bad_chars > MAX_BAD_CHAR_SHARE * self.nonspace_chars:
            return False  # unmapped glyphs: the text layer would be garbage
        return self.image_coverage < IMAGE_COVERAGE or self.nonspace_chars >= MIN_CHARS_OVER_IMAGE

    @property
    def blocks(self) -> list[Block]:
        return [Block(self.lines)] if self.lines else []


def extract_text_layer(page, scale: float) -> TextLayer:
    """Read a pypdfium2 PdfPage's text layer; boxes in pixels of the page rendered at `scale`."""
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        text = textpage.get_text_range(0, count) if count > 0 else ""
        to_pixels = _pixel_transform(page, scale)
        lines = _lines(textpage, text, to_pixels)
    finally:
        textpage.close()
    nonspace = sum(1 for ch in text if not ch.isspace())
    bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\r\n\t"))
    return TextLayer(lines, nonspace, bad, _image_coverage(page))


def _lines(textpage, text: str, to_pixels) -> list[Line]:
    lines: list[Line] = []
    start = 0
    for index in range(len(text) + 1):
        if index < len(text) and text[index] not in "\r\n":
            continue
        if index > start:
            line = _line(textpage, text, start, index, to_pixels)
            if line is not None:
                lines.append(line)
        start = index + 1
    return lines


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


def _pixel_transform(page, scale: float):
    left, bottom, right, top = page.get_bbox()
    width, height = (right - left) * scale, (top - bottom) * scale
    rotation = page.get_rotation() % 360

    def to_pixels(x: float, y: float) -> tuple[float, float]:
        u, v = (x - left) * scale, (top - y) * scale
        if rotation == 90:
            return height - v, u
        if rotation == 180:
            return width - u, height - v
        if rotation == 270:
            return v, width - u
        return u, v

    return to_pixels


def _image_coverage(page) -> float:
    import pypdfium2.raw as pdfium_c

    left, bottom, right, top = page.get_bbox()
    page_area = max((right - left) * (top - bottom), 1e-6)
    covered = 0.0
    try:
        for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2):
            x0, y0, x1, y1 = obj.get_pos()
            w = max(0.0, min(x1, right) - max(x0, left))
            h = max(0.0, min(y1, top) - max(y0, bottom))
            covered = max(covered, w * h / page_area)
    except Exception:
        return 0.0  # a page whose objects cannot be listed: judge it by its text alone
    return min(covered, 1.0)
