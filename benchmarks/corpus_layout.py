"""Layout categories of a born-digital PDF page, read from its text layer and page objects.

The corpus (benchmarks/corpus.py) files every page under categories assigned by these rules,
never by hand. Everything is measured in PDF points on the unrotated page:

- characters are grouped into *segments*: runs of characters in content order on one baseline
  with no horizontal gap wider than 0.8 em (the font size) (a segment is a line of one column,
  a table cell, a heading);
- `slides`: the page is landscape (width / height >= 1.2);
- columns: a *gutter* is an x position in the middle 70 % of the text area that at most 8 % of the
  body segments cross, with at least 6 segments of >= 12 characters on each side whose vertical
  extents overlap by >= 30 % of the text height, and the right side's starts aligned (30 % of them
  within 2 % of the page width of their 10th percentile). Neighbouring gutter positions are one gutter;
  `one-column` / `two-column` / `three-column` for 0 / 1 / >= 2 gutters. A column narrower than
  22 % of the text width beside a wider one is a `margin-notes` column, not a column;
  `unequal-columns` when the widest column is >= 1.4 x the narrowest;
- `spanning`: a multi-column page with a segment >= 60 % of the text width (a title, an abstract)
  or a figure crossing a gutter;
- `figure`: image objects covering >= 3 % of the page, or >= 12 vector paths whose boxes (each at
  least 1 % of the page width and height) cover >= 5 % of it;
- `caption`: a segment starting like "Figure 3", "Fig. 3", "Table 2", "Listing 1", "图 3", "表 2";
- `table`: >= 4 rows (segments sharing a baseline) of >= 3 segments, with >= 3 start positions
  (1 % of the page width apart) each shared by >= 4 of those rows;
- `footnote`: the lowest body segments (below every normal-size segment of the page, above the
  footer band) are >= 15 % smaller than the median segment height and hold >= 30 characters;
- `header-footer`: a segment of <= 80 characters in the top 7 % or bottom 8 % of the page;
- `toc`: >= 5 text lines ending in a page number after dot leaders or a wide gap, >= 25 % of lines;
- `code`: >= 120 characters in a fixed-pitch font (the font's fixed-pitch flag, or a name such as
  cmtt / Mono / Courier / Typewriter) that make >= 15 % of the page's characters;
- `vertical`: >= 20 CJK characters whose successor in content order sits below them (|dy| > 0.5 h,
  |dx| < 0.3 h), >= 30 % of the CJK character pairs;
- language: `zh` when >= 10 % of the text layer's non-space characters are CJK (pagerunner eval's
  rule), `en` otherwise.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

import pypdfium2.raw as pdfium_c

from model_cache.textlayer import FontStyles
from runner.evaluation.metrics import cjk_share, is_cjk_char

LAYOUT_TAGS = ("one-column", "two-column", "three-column", "unequal-columns", "spanning",
               "margin-notes", "slides", "figure", "caption", "table", "footnote",
               "header-footer", "toc", "code", "vertical")
# The single category a page is filed under in per-page listings: the first of its tags here.
CATEGORY_ORDER = ("vertical", "slides", "three-column", "spanning", "two-column", "margin-notes",
                  "toc", "table", "code", "figure", "footnote", "one-column")

CAPTION = re.compile(r"^\s*(Figure|Fig\.|Table|Listing|Abbildung|Tabelle|图|表)\s*[0-9０-９IVX一二三四五六七八九十]")
_TOC_LINE = re.compile(r"(\.\s*){3,}\s*[0-9ivxlc]+\s*$|\S\s{2,}[0-9ivxlc]+\s*$|[\u2026]\s*\d+\s*$")
_MONO_NAME = re.compile(r"cmtt|mono|courier|typewriter|code|consol|inconsolata|tt\d|txtt|beramono|"
                        r"sfmono|menlo|fira ?mono|dejavusansmono|lmtt|nimbusmono", re.I)
_FIXED_PITCH = 1


@dataclass
class Segment:
    text: str
    x0: float
    y0: float  # top (points from the top of the page)
    x1: float
    y1: float
    mono: int = 0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def chars(self) -> int:
        return sum(1 for c in self.text if not c.isspace())


@dataclass
class PageLayout:
    tags: list[str]
    lang: str
    columns: int
    chars: int
    facts: dict[str, float] = field(default_factory=dict)

    @property
    def category(self) -> str:
        return next((t for t in CATEGORY_ORDER if t in self.tags), "one-column")


@dataclass
class _Char:
    ch: str
    x0: float
    y0: float
    x1: float
    y1: float
    mono: bool
    size: float  # font size in points


def analyse_page(page) -> PageLayout:
    """Tags of one pypdfium2 PdfPage."""
    width, height = page.get_size()
    textpage = page.get_textpage()
    try:
        text, chars = _chars(textpage, height)
    finally:
        textpage.close()
    segments = _segments(chars)
    tags: list[str] = []
    facts: dict[str, float] = {}
    if width / max(height, 1.0) >= 1.2:
        tags.append("slides")
    body = [s for s in segments if 0.07 * height < s.y0 and s.y1 < 0.92 * height]
    columns, widths, gutters = _columns(body, width)
    facts["columns"] = columns
    tags += _column_tags(columns, widths, body)
    figure_boxes = _figure_boxes(page, width, height)
    if figure_boxes:
        tags.append("figure")
    if {"two-column", "three-column"} & set(tags) and _spanning(body, gutters, figure_boxes, widths):
        tags.append("spanning")
    if any(CAPTION.match(s.text) for s in segments):
        tags.append("caption")
    if _has_table(body, width):
        tags.append("table")
    if _has_footnote(body, height):
        tags.append("footnote")
    if any(s.chars <= 80 and (s.y1 < 0.07 * height or s.y0 > 0.92 * height) for s in segments):
        tags.append("header-footer")
    if _is_toc(text):
        tags.append("toc")
    nonspace = sum(1 for c in chars if not c.ch.isspace())
    mono = sum(1 for c in chars if c.mono and not c.ch.isspace())
    if mono >= 120 and mono >= 0.15 * max(nonspace, 1):
        tags.append("code")
    if _vertical(chars):
        tags.append("vertical")
    lang = "zh" if cjk_share(text) >= 0.10 else "en"
    return PageLayout(tags, lang, columns, nonspace, facts)


def _chars(textpage, page_height: float) -> tuple[str, list[_Char]]:
    count = textpage.count_chars()
    text = textpage.get_text_range(0, count) if count > 0 else ""
    chars: list[_Char] = []
    fonts: dict[bytes, bool] = {}
    styles = FontStyles(textpage)
    for index in range(min(count, len(text))):
        ch = text[index]
        if ch.isspace() or ch in "\ufffe\x02":
            continue
        left, bottom, right, top = textpage.get_charbox(index)
        if right <= left and top <= bottom:
            continue
        mono = is_mono(styles, index, fonts)
        size = pdfium_c.FPDFText_GetFontSize(textpage.raw, index) or (top - bottom)
        chars.append(_Char(ch, left, page_height - top, right, page_height - bottom, mono, size))
    return text, chars


def is_mono(styles: FontStyles, index: int, fonts: dict[bytes, bool]) -> bool:
    """Is the character's font fixed-pitch: its flag, or a name such as cmtt or Mono? `fonts`
    caches the answer per font name across calls."""
    name, flags = styles.font(index)
    if name not in fonts:
        fonts[name] = bool(flags & _FIXED_PITCH) or bool(_MONO_NAME.search(name.decode("latin-1")))
    return fonts[name]


def _segments(chars: list[_Char]) -> list[Segment]:
    segments: list[Segment] = []
    current: list[_Char] = []
    for char in chars:
        if current and not _continues(current[-1], char):
            segments.append(_segment(current))
            current = []
        current.append(char)
    if current:
        segments.append(_segment(current))
    return segments


def _continues(prev: _Char, char: _Char) -> bool:
    em = max(prev.size, char.size, 1.0)
    same_line = abs((prev.y0 + prev.y1) / 2 - (char.y0 + char.y1) / 2) < 0.4 * em
    return same_line and -0.5 * em < char.x0 - prev.x1 < 0.8 * em


def _segment(chars: list[_Char]) -> Segment:
    return Segment("".join(c.ch for c in chars), min(c.x0 for c in chars), min(c.y0 for c in chars),
                   max(c.x1 for c in chars), max(c.y1 for c in chars), sum(c.mono for c in chars))


def _columns(body: list[Segment], page_width: float) -> tuple[int, list[float], list[float]]:
    """(column count, column widths, gutter x positions)."""
    lines = [s for s in body if s.chars >= 3]
    if len(lines) < 12:
        return 1, [], []
    x0 = _percentile([s.x0 for s in lines], 0.03)
    x1 = _percentile([s.x1 for s in lines], 0.97)
    top = min(s.y0 for s in lines)
    bottom = max(s.y1 for s in lines)
    text_w, text_h = max(x1 - x0, 1.0), max(bottom - top, 1.0)
    hits = []
    steps = 70
    for i in range(steps + 1):
        g = x0 + text_w * (0.15 + 0.70 * i / steps)
        if _is_gutter(lines, g, page_width, text_h):
            hits.append(g)
    gutters = _merge_positions(hits, 0.04 * text_w)
    edges = [x0, *gutters, x1]
    widths = []
    for left, right in zip(edges, edges[1:]):
        inside = [s for s in lines if s.x0 >= left - 2 and s.x1 <= right + 2]
        if inside:
            widths.append(_percentile([s.x1 for s in inside], 0.9) - _percentile([s.x0 for s in inside], 0.1))
    return len(gutters) + 1, widths, gutters


def _is_gutter(lines: list[Segment], g: float, page_width: float, text_h: float) -> bool:
    crossing = sum(1 for s in lines if s.x0 < g - 1 and s.x1 > g + 1)
    if crossing > 0.08 * len(lines):
        return False
    left = [s for s in lines if s.x1 <= g and s.chars >= 12]
    right = [s for s in lines if s.x0 >= g and s.chars >= 12]
    if len(left) < 6 or len(right) < 6:
        return False
    overlap = min(max(s.y1 for s in left), max(s.y1 for s in right)) - max(
        min(s.y0 for s in left), min(s.y0 for s in right))
    if overlap < 0.3 * text_h:
        return False
    start = _percentile([s.x0 for s in right], 0.1)
    aligned = sum(1 for s in right if abs(s.x0 - start) < 0.02 * page_width)
    return aligned >= 0.3 * len(right)


def _merge_positions(values: list[float], gap: float) -> list[float]:
    groups: list[list[float]] = []
    for v in values:
        if groups and v - groups[-1][-1] <= gap:
            groups[-1].append(v)
        else:
            groups.append([v])
    return [statistics.median(g) for g in groups]


def _column_tags(columns: int, widths: list[float], body: list[Segment]) -> list[str]:
    if columns == 1 or not widths:
        return ["one-column"]
    widest = max(widths)
    narrow = [w for w in widths if w < 0.22 * sum(widths)]
    tags = []
    if narrow:
        tags.append("margin-notes")
    real = len(widths) - len(narrow)
    tags.append({1: "one-column", 2: "two-column"}.get(real, "three-column"))
    main = [w for w in widths if w not in narrow]
    if len(main) > 1 and widest >= 1.4 * min(main):
        tags.append("unequal-columns")
    return tags


def _spanning(body: list[Segment], gutters: list[float], figures: list[tuple[float, float, float, float]],
              widths: list[float]) -> bool:
    total = sum(widths)
    for g in gutters:
        if any(s.x0 < g < s.x1 and s.width >= 0.6 * total for s in body):
            return True
        if any(x0 < g < x1 and (x1 - x0) >= 0.6 * total for x0, _, x1, _ in figures):
            return True
    return False


def _figure_boxes(page, width: float, height: float) -> list[tuple[float, float, float, float]]:
    """Boxes (x0, top, x1, bottom) of the page's images, or of its drawing when it is big."""
    area = max(width * height, 1.0)
    images, paths = [], []
    try:
        for obj in page.get_objects(max_depth=2):
            kind = obj.type
            if kind not in (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_PATH):
                continue
            l, b, r, t = obj.get_bounds()
            box = (l, height - t, r, height - b)
            if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                images.append(box)
            elif (r - l) >= 0.01 * width and (t - b) >= 0.01 * height:
                paths.append(box)
    except Exception:
        return []
    found = [b for b in images if _area(b) >= 0.03 * area]
    if len(paths) >= 12:
        union = (min(b[0] for b in paths), min(b[1] for b in paths),
                 max(b[2] for b in paths), max(b[3] for b in paths))
        if sum(_area(b) for b in paths) >= 0.05 * area and _area(union) < 0.95 * area:
            found.append(union)
    return found


def _area(box: tuple[float, float, float, float]) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _has_table(body: list[Segment], page_width: float) -> bool:
    rows: list[list[Segment]] = []
    for seg in sorted(body, key=lambda s: (s.y0 + s.y1) / 2):
        mid = (seg.y0 + seg.y1) / 2
        if rows and abs(mid - (rows[-1][0].y0 + rows[-1][0].y1) / 2) < 0.4 * max(seg.height, 1.0):
            rows[-1].append(seg)
        else:
            rows.append([seg])
    wide = [r for r in rows if len(r) >= 3]
    if len(wide) < 4:
        return False
    tolerance = 0.01 * page_width
    starts = sorted({round(s.x0 / tolerance) for r in wide for s in r})
    shared = [key for key in starts
              if sum(1 for r in wide if any(abs(round(s.x0 / tolerance) - key) <= 1 for s in r)) >= 4]
    return len(_merge_positions([float(k) for k in shared], 2.0)) >= 3


def _has_footnote(body: list[Segment], page_height: float) -> bool:
    text = [s for s in body if s.chars >= 2]
    if len(text) < 8:
        return False
    normal = statistics.median(s.height for s in text)
    small = [s for s in text if s.height <= 0.85 * normal]
    big = [s for s in text if s.height > 0.85 * normal]
    if not small or not big:
        return False
    lowest_big = max(s.y1 for s in big)
    below = [s for s in small if s.y0 >= lowest_big - 0.5 and s.y0 > 0.5 * page_height]
    return sum(s.chars for s in below) >= 30


def _is_toc(text: str) -> bool:
    lines = [line for line in text.replace("\r", "").split("\n") if line.strip()]
    if not lines:
        return False
    entries = sum(1 for line in lines if _TOC_LINE.search(line))
    return entries >= 5 and entries >= 0.25 * len(lines)


def _vertical(chars: list[_Char]) -> bool:
    pairs = down = 0
    for a, b in zip(chars, chars[1:]):
        if not (is_cjk_char(a.ch) and is_cjk_char(b.ch)):
            continue
        pairs += 1
        h = max(a.y1 - a.y0, a.x1 - a.x0, 1.0)
        if abs(b.y0 - a.y0) > 0.5 * h and abs(b.x0 - a.x0) < 0.3 * h:
            down += 1
    return down >= 20 and down >= 0.3 * max(pairs, 1)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(q * (len(ordered) - 1))))]
