"""The hOCR, ALTO and searchable-PDF writers on hand-made page results (no OCR): any block
kind, lines without words, lines without boxes (HunyuanOCR), Japanese and non-BMP text."""

from __future__ import annotations

import io
import re
import unicodedata

import pikepdf
import pypdfium2 as pdfium
import pytest
from lxml import etree, html
from PIL import Image

from outputs.alto import alto_document
from outputs.hocr import hocr_document
from outputs.model import Block, Line, PageResult, Word
from outputs.pdf import write_image_input
from outputs.words import has_box, split_box, words_of
from tests.test_searchable_outputs import ALTO, _alto_schema

W, H = 800, 600


def _line(text: str, x0: float, y0: float, x1: float, y1: float, words: bool = True) -> Line:
    box = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
    return Line(text, 0.9, box, split_box(text, 0.8, box) if words else None)


def _page(blocks: list[Block], page: int = 1, engine: str = "ppocr-v5-mobile") -> PageResult:
    result = PageResult.from_blocks(blocks, width=W, height=H, engine=engine)
    result.source, result.doc_id, result.page, result.dpi = "doc.png", "d", page, 100.0
    return result


def _boxless(text: str) -> Line:  # what the hunyuan engine gives: every line on the whole page
    return Line(text, 0.95, [[0, 0], [W, 0], [W, H], [0, H]])


PAGES = [
    _page([Block([_line("A Title", 50, 20, 300, 60)], kind="title"),
           Block([_line("first item", 60, 80, 400, 110), _line("second item", 60, 120, 420, 150, words=False)],
                 kind="list"),
           Block([_line("日本語のテキスト と 漢字", 50, 200, 600, 240)], kind="footnote"),
           Block([_line("𠀀𠀁 rare ideographs", 50, 300, 500, 340)], kind="odd kind/2"),
           Block([_line("running header", 50, 560, 300, 590)], kind="header")]),
    _page([Block([_boxless("a page read by a VLM"), _boxless("without any boxes")])], page=2,
          engine="hunyuanocr"),
]


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def test_box_rules():
    assert has_box(PAGES[0].blocks[0].lines[0], PAGES[0])
    assert not has_box(PAGES[1].blocks[0].lines[0], PAGES[1])
    line = PAGES[0].blocks[1].lines[1]  # no words of its own: its box is split by characters
    words = words_of(line)
    assert [w.text for w in words] == ["second", "item"]
    assert words[0].box[0] == [60, 120] and words[-1].box[1] == [420, 120]
    mismatched = Line("other text", 0.9, line.box, [Word("stale", 0.9, line.box)])
    assert [w.text for w in words_of(mismatched)] == ["other", "text"]


def test_alto_takes_any_kind_and_boxless_lines():
    tree = etree.fromstring(alto_document("doc.png", PAGES, "pagerunner", "0.1.0"))
    schema = _alto_schema()
    assert schema.validate(tree), schema.error_log
    tags = {t.get("LABEL"): t.get("ID") for t in tree.iter(f"{ALTO}LayoutTag")}
    assert set(tags) == {"title", "list", "footnote", "odd kind/2", "header", "text"}
    blocks = list(tree.iter(f"{ALTO}TextBlock"))
    assert [tags_of for tags_of in (b.get("TAGREFS") for b in blocks)][:5] == [
        tags["title"], tags["list"], tags["footnote"], tags["odd kind/2"], tags["header"]]
    last_page = tree.findall(f".//{ALTO}Page")[1]
    lines = last_page.findall(f".//{ALTO}TextLine")
    assert [" ".join(s.get("CONTENT") for s in line.iter(f"{ALTO}String")) for line in lines] == [
        "a page read by a VLM", "without any boxes"]
    assert all(line.get("HPOS") is None for line in lines)  # no geometry is claimed
    contents = [s.get("CONTENT") for s in tree.iter(f"{ALTO}String")]
    assert "日本語のテキスト" in contents and "𠀀𠀁" in contents


def test_hocr_classes_and_boxless_lines():
    doc = html.fromstring(hocr_document("doc.png", PAGES, "pagerunner 0.1.0"))
    classes = [e.get("class") for e in doc.xpath("//*[@id and starts-with(@id, 'block_')]")]
    assert classes == ["ocr_title", "ocr_carea", "ocr_carea", "ocr_carea", "ocr_header", "ocr_carea"]
    kinds = [re.search(r"x_kind (\S+)", e.get("title")).group(1)
             for e in doc.xpath("//*[starts-with(@id, 'block_')]")]
    assert kinds == ["title", "list", "footnote", "odd_kind/2", "header", "text"]
    page2 = doc.xpath("//*[@class='ocr_page']")[1]
    assert all("bbox" not in e.get("title") for e in page2.xpath(".//*[@class='ocr_line' or @class='ocrx_word']"))
    assert " ".join(page2.xpath(".//*[@class='ocrx_word']/text()")) == "a page read by a VLM without any boxes"


def test_pdf_text_layer_for_any_script_and_boxless_lines():
    image = Image.new("L", (W, H), 255)
    buffer = io.BytesIO()
    image.save(buffer, format="TIFF", save_all=True, append_images=[image], dpi=(100, 100))
    out = io.BytesIO()
    write_image_input(buffer.getvalue(), PAGES, out, assumed_dpi=300)
    doc = pdfium.PdfDocument(out.getvalue())
    assert len(doc) == 2
    assert doc[0].get_size() == pytest.approx((W * 0.72, H * 0.72))  # its own 100 dpi
    for index, page in enumerate(PAGES):
        text = doc[index].get_textpage().get_text_range()
        assert _norm(text) == _norm(page.text)
    assert "日本語のテキスト" in doc[0].get_textpage().get_text_range()
    with pikepdf.open(io.BytesIO(out.getvalue())) as pdf:
        font = pdf.pages[0].Resources.Font.values().__iter__().__next__()
        assert font.Subtype == pikepdf.Name.Type0 and font.Encoding == pikepdf.Name("/Identity-H")
        cmap = font.ToUnicode.read_bytes().decode("ascii")
        assert "<D840DC00>" in cmap  # U+20000 as its UTF-16 surrogate pair


def test_streamed_xml_is_the_whole_tree_byte_for_byte():
    """hOCR and ALTO are written a page at a time (outputs/xml_stream.py): the bytes must be
    those of the whole tree serialised at once, namespaces and indentation included."""
    from outputs import alto, hocr

    pages = PAGES * 3
    tree = etree.Element(f"{{{hocr.XHTML}}}html", nsmap={None: hocr.XHTML})
    body = etree.SubElement(etree.SubElement(tree, f"{{{hocr.XHTML}}}div"), f"{{{hocr.XHTML}}}body")
    from outputs.xml_stream import streamed_tree
    streamed = b"".join(streamed_tree(tree, body, pages, lambda parent, p: hocr._page(parent, "doc.png", p),
                                      xml_declaration=True, encoding="utf-8"))
    for result in pages:
        hocr._page(body, "doc.png", result)
    assert streamed == etree.tostring(tree, xml_declaration=True, encoding="utf-8", pretty_print=True)
    assert b"<!--" not in streamed

    root = etree.Element(alto._q("alto"), nsmap={None: alto.ALTO_NS, "xsi": alto.XSI})
    layout = etree.SubElement(root, alto._q("Layout"))
    tags = {"title": "T1", "list": "T2", "footnote": "T3", "odd kind/2": "T4", "header": "T5", "text": "T6"}
    streamed = b"".join(streamed_tree(root, layout, pages, lambda parent, p: alto._page(parent, p, tags),
                                      encoding="utf-8"))
    for result in pages:
        alto._page(layout, result, tags)
    assert streamed == etree.tostring(root, encoding="utf-8", pretty_print=True)


def test_streamed_xml_without_pages_is_the_empty_tree():
    from outputs.xml_stream import streamed_tree

    root = etree.Element("a")
    inner = etree.SubElement(root, "b")
    assert b"".join(streamed_tree(root, inner, [], lambda parent, p: None)) == \
        etree.tostring(root, pretty_print=True)


def test_each_page_reopens_a_long_document(tmp_path, monkeypatch):
    """The searchable PDF's passes over a long PDF (frames, own text layers) reopen it as the
    workers do: PDFium keeps every loaded page's data until the document closes."""
    import outputs.pdfium_pages as pdfium_pages
    from tests.conftest import make_pdf

    monkeypatch.setattr(pdfium_pages, "REOPEN_MIN_PAGES", 2)
    monkeypatch.setattr(pdfium_pages, "REOPEN_COST_RATIO", 0.0)
    opened = []
    real = pdfium.PdfDocument
    monkeypatch.setattr(pdfium, "PdfDocument", lambda *a, **k: opened.append(1) or real(*a, **k))
    pdf = make_pdf(tmp_path / "long.pdf", 5, "long")
    sizes = [(n, round(page.get_width())) for n, page in pdfium_pages.each_page(pdf, [1, 2, 3, 4, 5, 9])]
    assert [n for n, _ in sizes] == [1, 2, 3, 4, 5] and len(opened) == 3
