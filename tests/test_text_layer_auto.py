"""`--text-layer auto` (the default): born-digital pages come from their text layer, scans are OCR'd.

A stray glyph, a stamp or an invisible OCR layer (another tool's) on a scan does not make it text.
"""

import json
import sys
from pathlib import Path

import pypdfium2 as pdfium

from tests.conftest import FAKE_ENGINE, make_page, run_cli
from tests.pdf_helpers import add_text, scanned_pdf

OCR_LINES = [f"Invoice line {i}: twelve widgets at four pounds" for i in range(14)]


def run_records(inputs: list[Path], out: Path, *extra: str) -> list[dict]:
    proc = run_cli("run", *map(str, inputs), "-o", str(out), "--engine", FAKE_ENGINE, "-q", *extra)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_born_digital_pdfs_are_read_from_their_text_layer_by_default(eval_dir, tmp_path):
    sys.path.insert(0, str(eval_dir / "tools"))
    from gt_normalize import normalize

    records = run_records([eval_dir / "pdfs"], tmp_path / "out")
    assert len(records) == 13
    for record in records:
        assert (record["mode"], record["engine"]) == ("textlayer", "textlayer"), record["source"]
        gt = eval_dir / "pdfs" / f"{Path(record['source']).stem}.p{record['page']:02d}.gt.txt"
        assert normalize(record["text"], cjk=True) == normalize(gt.read_text(encoding="utf-8"), cjk=True)


def test_ignore_ocrs_every_page(eval_dir, tmp_path):
    records = run_records([eval_dir / "pdfs" / "zhlipsum.p1-4.pdf"], tmp_path / "out", "--text-layer", "ignore")
    assert [r["mode"] for r in records] == ["ocr"] * 4 and records[0]["engine"] == "fake-digest"


def test_scans_with_a_stray_glyph_a_stamp_or_an_invisible_ocr_layer_are_ocrd(tmp_path):
    scan = make_page("a scanned letter", (1240, 1754))
    inputs = [scanned_pdf(tmp_path / "plain.pdf", scan),
              scanned_pdf(tmp_path / "glyph.pdf", scan, ["7"], invisible=False),
              scanned_pdf(tmp_path / "stamp.pdf", scan, ["RECEIVED 12 MARCH 2024 - ACCOUNTS"], invisible=False),
              scanned_pdf(tmp_path / "prior-ocr.pdf", scan, OCR_LINES, invisible=True)]
    records = {r["source"]: r for r in run_records(inputs, tmp_path / "out")}
    assert {name: r["mode"] for name, r in records.items()} == dict.fromkeys(
        ("glyph.pdf", "plain.pdf", "prior-ocr.pdf", "stamp.pdf"), "ocr")
    assert any("invisible" in w for w in records["prior-ocr.pdf"]["warnings"])
    assert not any("invisible" in w for w in records["stamp.pdf"]["warnings"])


def test_only_reads_an_invisible_layer_and_never_ocrs(tmp_path):
    pdf = scanned_pdf(tmp_path / "prior-ocr.pdf", make_page("scan", (620, 877)), OCR_LINES, invisible=True)
    [record] = run_records([pdf, ], tmp_path / "out", "--text-layer", "only")
    assert record["mode"] == "textlayer" and record["text"].splitlines()[0] == OCR_LINES[0]


def test_visible_text_over_a_full_page_image_counts_when_there_is_enough(tmp_path):
    pdf = scanned_pdf(tmp_path / "form.pdf", make_page("scan", (620, 877)), OCR_LINES, invisible=False)
    [record] = run_records([pdf], tmp_path / "out")
    assert record["mode"] == "textlayer"


def test_a_mixed_pdf_says_which_page_came_from_where(tmp_path):
    doc = pdfium.PdfDocument.new()
    page = doc.new_page(595, 842)
    for number, line in enumerate(OCR_LINES):
        add_text(doc, page, line, 50, 780 - 16 * number)
    page.gen_content()
    page.close()
    scan = pdfium.PdfDocument(str(scanned_pdf(tmp_path / "scan.pdf", make_page("scan", (620, 877)))))
    doc.import_pages(scan)
    doc.save(str(tmp_path / "mixed.pdf"))
    records = run_records([tmp_path / "mixed.pdf"], tmp_path / "out")
    assert [(r["page"], r["mode"]) for r in records] == [(1, "textlayer"), (2, "ocr")]
    assert records[0]["text"].splitlines()[0] == OCR_LINES[0]


def test_images_keep_their_identity_across_the_default_change(tmp_path):
    """An image has no text layer, so `auto` and `ignore` are one identity: no second OCR after upgrading."""
    image = tmp_path / "page.png"
    make_page("an image").save(image)
    out = tmp_path / "out"
    first = run_records([image], out, "--text-layer", "ignore")
    proc = run_cli("run", str(image), "-o", str(out), "--engine", FAKE_ENGINE)
    assert proc.returncode == 0 and "0 processed" in proc.stderr, proc.stderr
    assert [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()] == first


def test_hyphenated_lines_of_a_text_layer_do_not_end_their_paragraphs():
    """maint-guide p5: PDFium reads "...needed for devel-" / "opment. ... installed already." as
    one line two rows high; the paragraph used to end there. The text stays PDFium's."""
    from model_cache.textlayer import extract_text_layer
    from tests._eval_shared import eval_kit

    pdf = pdfium.PdfDocument(str(eval_kit() / "pdfs" / "maint-guide.en.p5-9.pdf"))
    try:
        layer = extract_text_layer(pdf[4], 200 / 72)
    finally:
        pdf.close()
    assert sum(1 for rows in layer.rows if rows) == 3
    blocks = layer.blocks
    assert [ln.text for b in blocks for ln in b.lines] == [ln.text for ln in layer.lines]
    paragraph = next(b.text for b in blocks if b.text.startswith("Before you start anything"))
    assert "devel-opment" in paragraph and paragraph.endswith("installed already.")
    item = next(b.text for b in blocks if b.text.startswith("• autoconf"))
    assert item.endswith("best way to use those files.")
    joined = next(ln for b in blocks for ln in b.lines if "devel-opment" in ln.text)
    assert joined.breaks and joined.text[:joined.breaks[0]].endswith("devel-")


def test_markdown_mends_a_text_layer_word_hyphenated_at_a_line_end(tmp_path):
    """The text (txt, JSONL) stays the text layer's "devel-opment"; the Markdown reads
    "development", as it does for OCR'd lines."""
    from tests._eval_shared import eval_kit

    out = tmp_path / "out"
    result = run_cli("run", str(eval_kit() / "pdfs" / "maint-guide.en.p5-9.pdf"), "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    markdown = (out / "maint-guide.en.p5-9.md").read_text(encoding="utf-8")
    text = (out / "maint-guide.en.p5-9.txt").read_text(encoding="utf-8")
    assert "needed for development." in markdown and "devel-opment" not in markdown
    assert "devel-opment" in text


def test_a_text_layers_headings_come_from_its_fonts_sizes_and_weights(tmp_path):
    """A heading set bold at the body's size, and one drawn larger by its text matrix only (its
    font at 1 pt), are titles; the body and a bold contents entry are not."""
    from model_cache.textlayer import extract_text_layer
    doc = pdfium.PdfDocument.new()
    page = doc.new_page(595, 842)
    add_text(doc, page, "2.1 Bold run at body size", 60, 720, size=10, font="Helvetica-Bold")
    for k in range(12):
        add_text(doc, page, f"body text line {k} with enough words for a paragraph", 60, 695 - 13 * k, size=10)
    add_text(doc, page, "Scaled Heading", 60, 520, size=1, scale=15)
    for k in range(12):
        add_text(doc, page, f"more body text {k} with enough words for a paragraph", 60, 490 - 13 * k, size=1, scale=10)
    add_text(doc, page, "7 Getting Obsessed 5", 60, 300, size=10, font="Helvetica-Bold")
    page.gen_content()
    path = tmp_path / "fonts.pdf"
    doc.save(str(path))
    pdf = pdfium.PdfDocument(str(path))
    try:
        layer = extract_text_layer(pdf[0], 200 / 72)
    finally:
        pdf.close()
    assert [f.bold for f in layer.fonts[:2]] == [True, False]
    titles = [b.text for b in layer.blocks if b.kind == "title"]
    assert titles == ["2.1 Bold run at body size", "Scaled Heading"]
