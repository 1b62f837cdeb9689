"""hOCR (1.2) of a document: one ocr_page per page, its blocks, paragraphs, lines and words.

Geometry is in pixels of each page's upright image, as in the JSONL records (`rotation`
there says how the rendered page was turned); `x_wconf` is the confidence in percent. A
block's kind picks its hOCR class where the spec has one (ocr_header, ocr_footer, ocr_table,
ocr_caption, ocr_title); any other kind is an ocr_carea; every block also carries its kind
verbatim as the engine-specific property `x_kind`. Lines are always ocr_line and words
ocrx_word, the classes hocr-tools and hOCR viewers look for. Lines an engine placed nowhere
(no box of their own, see outputs.words.has_box) have no bbox; their words neither.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from lxml import etree

from outputs.model import Block, Box, Line, PageResult, Word
from outputs.words import has_box, words_of
from outputs.xml_safe import xml_safe
from outputs.xml_stream import streamed_tree

XHTML = "http://www.w3.org/1999/xhtml"
DOCTYPE = ('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
           '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">')
CAPABILITIES = "ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf"
KIND_CLASS = {"header": "ocr_header", "footer": "ocr_footer", "table": "ocr_table",
              "caption": "ocr_caption", "title": "ocr_title"}


def hocr_document(source: str, pages: Iterable[PageResult], software: str) -> bytes:
    return b"".join(hocr_chunks(source, pages, software))


def hocr_chunks(source: str, pages: Iterable[PageResult], software: str) -> Iterator[bytes]:
    """The hOCR file's bytes, a page at a time (outputs/xml_stream.py); `pages` is read once
    and counted with len()."""
    html = etree.Element(f"{{{XHTML}}}html", nsmap={None: XHTML})
    html.set("{http://www.w3.org/XML/1998/namespace}lang", "und")
    head = _sub(html, "head")
    _sub(head, "title").text = xml_safe(source)
    _sub(head, "meta", {"http-equiv": "Content-Type", "content": "text/html;charset=utf-8"})
    _sub(head, "meta", {"name": "ocr-system", "content": software})
    _sub(head, "meta", {"name": "ocr-capabilities", "content": CAPABILITIES})
    _sub(head, "meta", {"name": "ocr-number-of-pages", "content": str(len(pages))})
    body = _sub(html, "body")
    return streamed_tree(html, body, pages, lambda parent, result: _page(parent, source, result),
                         xml_declaration=True, encoding="utf-8", doctype=DOCTYPE)


def bbox(box: Box, page: PageResult) -> tuple[int, int, int, int]:
    """The box's integer bounds, clamped to the page (hOCR's bbox x0 y0 x1 y1)."""
    xs, ys = [p[0] for p in box], [p[1] for p in box]
    x0, y0 = max(0, math.floor(min(xs))), max(0, math.floor(min(ys)))
    x1 = min(page.width, max(x0, math.ceil(max(xs))))
    y1 = min(page.height, max(y0, math.ceil(max(ys))))
    return x0, y0, x1, y1


def _page(body: etree._Element, source: str, result: PageResult) -> None:
    n = result.page
    props = [f'image "{_quoted(xml_safe(source))}"', f"ppageno {n - 1}"]
    if result.status == "ok":
        props.insert(1, f"bbox 0 0 {result.width} {result.height}")
    if result.dpi:
        props.append(f"scan_res {round(result.dpi)} {round(result.dpi)}")
    page = _sub(body, "div", {"class": "ocr_page", "id": f"page_{n}", "title": "; ".join(props)})
    for b, block in enumerate(result.blocks, 1):
        if block.lines:
            _block(page, result, block, f"{n}_{b}")


def _block(page: etree._Element, result: PageResult, block: Block, ident: str) -> None:
    boxes = [bbox(line.box, result) for line in block.lines if has_box(line, result)]
    props = [_bbox_prop(_union(boxes))] if boxes else []
    props.append(f"x_kind {'_'.join(xml_safe(block.kind).split()) or 'text'}")
    area = _sub(page, "div", {"class": KIND_CLASS.get(block.kind, "ocr_carea"),
                              "id": f"block_{ident}", "title": "; ".join(props)})
    par = _sub(area, "p", {"class": "ocr_par", "id": f"par_{ident}",
                           **({"title": _bbox_prop(_union(boxes))} if boxes else {})})
    for i, line in enumerate(block.lines, 1):
        _line(par, result, line, f"{ident}_{i}")


def _line(par: etree._Element, result: PageResult, line: Line, ident: str) -> None:
    placed = has_box(line, result)
    props = []
    if placed:
        box = bbox(line.box, result)
        props += [_bbox_prop(box), _baseline(line.box, box)]
    props.append(f"x_wconf {_percent(line.conf)}")
    span = _sub(par, "span", {"class": "ocr_line", "id": f"line_{ident}", "title": "; ".join(props)})
    words = words_of(line) if placed else [Word(t, line.conf, line.box) for t in line.text.split()]
    for i, word in enumerate(words, 1):
        if i > 1:
            span[-1].tail = " "
        wprops = ([_bbox_prop(bbox(word.box, result))] if placed else []) + [f"x_wconf {_percent(word.conf)}"]
        _sub(span, "span", {"class": "ocrx_word", "id": f"word_{ident}_{i}",
                            "title": "; ".join(wprops)}).text = xml_safe(word.text)


def _baseline(box: Box, bounds: tuple[int, int, int, int]) -> str:
    """hOCR baseline: slope and offset of the box's bottom edge from the bbox's bottom-left."""
    (x3, y3), (x2, y2) = box[3], box[2]
    slope = (y2 - y3) / (x2 - x3) if abs(x2 - x3) > 1e-6 else 0.0
    offset = y3 + slope * (bounds[0] - x3) - bounds[3]
    return f"baseline {slope:.4f} {round(offset)}"


def _union(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
            max(b[3] for b in boxes))


def _bbox_prop(box: tuple[int, int, int, int]) -> str:
    return "bbox {} {} {} {}".format(*box)


def _percent(conf: float) -> int:
    return max(0, min(100, round(100 * conf)))


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _sub(parent: etree._Element, tag: str, attrs: dict[str, str] | None = None) -> etree._Element:
    return etree.SubElement(parent, f"{{{XHTML}}}{tag}", attrs or {})
