"""ALTO v4 (4.4 schema) of a document: Page / PrintSpace / TextBlock / TextLine / String + SP.

Measurement unit: pixels of each page's upright image, as in the JSONL records (`rotation`
there says how the rendered page was turned). String@WC is the word's confidence (0..1),
Page@PC the page's mean line confidence. Each block kind is a LayoutTag (LABEL = the kind,
whatever string the layout stage gives) that its TextBlock references through TAGREFS. Lines
an engine placed nowhere (outputs.words.has_box) have no position attributes, which ALTO
allows; nor have their Strings. Failed pages are empty Pages. Element order follows the schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from lxml import etree

from outputs.hocr import bbox
from outputs.model import Block, Line, PageResult, Word
from outputs.words import has_box, words_of
from outputs.xml_safe import xml_safe
from outputs.xml_stream import streamed_tree

ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
XLINK = "http://www.w3.org/1999/xlink"
SCHEMA_LOCATION = f"{ALTO_NS} http://www.loc.gov/standards/alto/v4/alto-4-4.xsd"


def alto_document(source: str, pages: Iterable[PageResult], software: str, version: str) -> bytes:
    return b"".join(alto_chunks(source, pages, software, version))


def alto_chunks(source: str, pages: Iterable[PageResult], software: str, version: str) -> Iterator[bytes]:
    """The ALTO file's bytes, a page at a time (outputs/xml_stream.py); `pages` is read three
    times (engines, block kinds, pages)."""
    root = etree.Element(_q("alto"), nsmap={None: ALTO_NS, "xsi": XSI, "xlink": XLINK})
    root.set(f"{{{XSI}}}schemaLocation", SCHEMA_LOCATION)
    root.set("SCHEMAVERSION", "4.4")
    _description(root, source, pages, software, version)
    tag_ids = _tag_ids(sorted({b.kind for p in pages for b in p.blocks if b.lines}))
    if tag_ids:
        tags = _sub(root, "Tags")
        for kind, ident in tag_ids.items():
            _sub(tags, "LayoutTag", ID=ident, LABEL=xml_safe(kind))
    layout = _sub(root, "Layout")
    return streamed_tree(root, layout, pages, lambda parent, result: _page(parent, result, tag_ids),
                         xml_declaration=True, encoding="utf-8")


def _description(root: etree._Element, source: str, pages: Iterable[PageResult], software: str,
                 version: str) -> None:
    description = _sub(root, "Description")
    _sub(description, "MeasurementUnit").text = "pixel"
    info = _sub(description, "sourceImageInformation")
    _sub(info, "fileName").text = xml_safe(source)
    processing = _sub(description, "Processing", ID="processing_1")
    engines = sorted({p.engine for p in pages if p.engine})
    _sub(processing, "processingStepSettings").text = xml_safe(
        "engine: " + ", ".join(engines) + "; coordinates: pixels of each page's upright image")
    tool = _sub(processing, "processingSoftware")
    _sub(tool, "softwareName").text = software
    _sub(tool, "softwareVersion").text = version


def _page(layout: etree._Element, result: PageResult, tag_ids: dict[str, str]) -> None:
    n = result.page
    attrs = {"ID": f"page_{n}", "PHYSICAL_IMG_NR": str(n)}
    lines = [line for block in result.blocks for line in block.lines]
    if result.status == "ok":
        attrs.update(HEIGHT=str(result.height), WIDTH=str(result.width))
        if lines:
            attrs["PC"] = _conf(sum(line.conf for line in lines) / len(lines))
    page = _sub(layout, "Page", **attrs)
    if result.status != "ok":
        return
    space = _sub(page, "PrintSpace", HPOS="0", VPOS="0", WIDTH=str(result.width),
                 HEIGHT=str(result.height))
    for b, block in enumerate(result.blocks, 1):
        if block.lines:
            _block(space, result, block, f"p{n}_b{b}", tag_ids[block.kind])


def _block(space: etree._Element, result: PageResult, block: Block, ident: str, tag: str) -> None:
    boxes = [bbox(line.box, result) for line in block.lines if has_box(line, result)]
    attrs = {"ID": ident}
    if boxes:
        attrs.update(_position((min(b[0] for b in boxes), min(b[1] for b in boxes),
                                max(b[2] for b in boxes), max(b[3] for b in boxes))))
    attrs["TAGREFS"] = tag
    element = _sub(space, "TextBlock", **attrs)
    for i, line in enumerate(block.lines, 1):
        _line(element, result, line, f"{ident}_l{i}")


def _line(block: etree._Element, result: PageResult, line: Line, ident: str) -> None:
    placed = has_box(line, result)
    attrs = {"ID": ident, **(_position(bbox(line.box, result)) if placed else {})}
    element = _sub(block, "TextLine", **attrs)
    words = words_of(line) if placed else [Word(t, line.conf, line.box) for t in line.text.split()]
    prev_box = None
    for i, word in enumerate(words, 1):
        wbox = bbox(word.box, result) if placed else None
        if i > 1:
            _space(element, prev_box, wbox)
        attrs = {"ID": f"{ident}_w{i}", **(_position(wbox) if wbox else {}),
                 "CONTENT": xml_safe(word.text), "WC": _conf(word.conf)}
        _sub(element, "String", **attrs)
        prev_box = wbox


def _space(line: etree._Element, left, right) -> None:
    if left is None or right is None or right[0] <= left[2]:
        _sub(line, "SP")
        return
    _sub(line, "SP", WIDTH=str(right[0] - left[2]), HPOS=str(left[2]), VPOS=str(min(left[1], right[1])))


def _position(box: tuple[int, int, int, int]) -> dict[str, str]:
    x0, y0, x1, y1 = box
    return {"HEIGHT": str(y1 - y0), "WIDTH": str(x1 - x0), "HPOS": str(x0), "VPOS": str(y0)}


def _tag_ids(kinds: list[str]) -> dict[str, str]:
    """An xsd:ID for each kind's LayoutTag: 'kind_<kind>', other characters as '_' (numbered
    where two kinds would give the same ID)."""
    ids: dict[str, str] = {}
    for kind in kinds:
        ident = "kind_" + (re.sub(r"[^A-Za-z0-9_.-]", "_", kind) or "_")
        ids[kind] = ident if ident not in ids.values() else f"{ident}_{len(ids) + 1}"
    return ids


def _conf(value: float) -> str:
    return f"{max(0.0, min(1.0, value)):.4f}".rstrip("0").rstrip(".") if value else "0"


def _q(tag: str) -> str:
    return f"{{{ALTO_NS}}}{tag}"


def _sub(parent: etree._Element, tag: str, **attrs: str) -> etree._Element:
    return etree.SubElement(parent, _q(tag), attrs)
