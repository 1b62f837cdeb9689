"""End to end: `pagerunner run --formats pdf,hocr,alto` on scans, read back with a PDF reader
(pypdfium2), qpdf, hocr-tools and the ALTO v4 XSD, and compared with the store's records.

Inputs (one PP-OCR run per module): a two-page image-only PDF (page 2 has /Rotate 90, its
MediaBox does not start at 0,0, it carries Info and XMP metadata), a page turned sideways (the
engine turns it back), a CJK page, a JPEG stored sideways with an EXIF orientation, and a
two-frame TIFF (bilevel + greyscale) at 300 dpi.
"""

from __future__ import annotations

import ctypes
import json
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from lxml import etree, html
from PIL import Image, ImageOps

from outputs.hocr import bbox
from outputs.model import PageResult
from outputs.words import words_of
from tests.conftest import run_cli, shared_dir

XSD_DIR = Path(__file__).parent / "data" / "alto"
ALTO = "{http://www.loc.gov/standards/alto/ns-v4#}"
TOLERANCE_PT = 3.0


def _image_pdf(path: Path, image: Image.Image, dpi: float) -> None:
    """An image-only PDF: page 1 upright at a shifted MediaBox, page 2 the same image on a page
    with /Rotate 90 (so it shows sideways), with Info and XMP metadata."""
    pdf = pikepdf.new()
    w, h = image.size[0] * 72 / dpi, image.size[1] * 72 / dpi
    gray = image.convert("L")
    for index, (x0, y0, rotate) in enumerate([(10.0, 20.0, 0), (0.0, 0.0, 90)]):
        xobject = pikepdf.Stream(pdf, gray.tobytes(), Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Image,
                                 Width=gray.width, Height=gray.height, ColorSpace=pikepdf.Name.DeviceGray,
                                 BitsPerComponent=8)
        page = pdf.add_blank_page(page_size=(w, h))
        page.mediabox = pikepdf.Array([x0, y0, x0 + w, y0 + h])
        if rotate:
            page.Rotate = rotate
        name = page.add_resource(xobject, pikepdf.Name.XObject)
        ops = [([], pikepdf.Operator("q")), ([w, 0, 0, h, x0, y0], pikepdf.Operator("cm")),
               ([name], pikepdf.Operator("Do")), ([], pikepdf.Operator("Q"))]
        page.contents_add(pikepdf.Stream(pdf, pikepdf.unparse_content_stream(ops)))
    pdf.docinfo["/Title"] = "A scanned test document"
    pdf.docinfo["/Author"] = "pagerunner tests"
    with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
        meta["dc:description"] = "scan for the searchable PDF test"
    pdf.save(path)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared/eval is not present")
    scans, pdfs = shared / "eval" / "scans", shared / "eval" / "pdfs"
    root = tmp_path_factory.mktemp("searchable")
    inp = root / "in"
    inp.mkdir()
    photo = Image.open(scans / "phototest.tif").convert("RGB")
    _image_pdf(inp / "scan.pdf", photo, 200.0)
    shutil.copy(scans / "phototest-rotated-L.png", inp / "sideways.png")
    doc = pdfium.PdfDocument(pdfs / "zhlipsum.p1-4.pdf")
    page = doc[0].render(scale=150 / 72).to_pil().convert("RGB")
    page.crop((100, int(page.height * 0.295), page.width - 100, int(page.height * 0.36))).save(
        inp / "cjk.png", dpi=(150, 150))
    doc.close()
    exif = Image.Exif()
    exif[0x0112] = 6  # stored turned 90 degrees counter-clockwise: turn clockwise to show
    photo.rotate(90, expand=True).save(inp / "photo.jpg", quality=90, dpi=(150, 150), exif=exif)
    frames = [photo.convert("L").point(lambda v: 255 if v > 128 else 0).convert("1"),
              photo.convert("L").crop((0, 0, 640, 200))]
    frames[0].save(inp / "multi.tif", save_all=True, append_images=frames[1:], dpi=(300, 300),
                   compression="tiff_lzw")
    out = root / "out"
    proc = run_cli("run", str(inp), "-o", str(out), "--formats", "jsonl,txt,pdf,hocr,alto", timeout=900)
    assert proc.returncode == 0, proc.stderr
    records = [PageResult.from_dict(json.loads(line)) for line in
               (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return inp, out, records


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def _stem(source: str) -> str:
    return source.rsplit(".", 1)[0]


def test_every_document_gets_its_files(outputs):
    inp, out, records = outputs
    assert {r.source for r in records} == {"scan.pdf", "sideways.png", "cjk.png", "photo.jpg", "multi.tif"}
    assert all(r.status == "ok" and r.mode == "ocr" and r.text for r in records)
    for source in {r.source for r in records}:
        for suffix in (".pdf", ".hocr", ".alto.xml"):
            assert (out / (_stem(source) + suffix)).stat().st_size > 0
    rotations = {(r.source, r.page): r.rotation for r in records}
    assert rotations[("sideways.png", 1)] == 90 and rotations[("scan.pdf", 2)] == 270
    doc = pdfium.PdfDocument(out / "sideways.pdf")  # a sideways scan comes out upright
    assert doc[0].get_size() == pytest.approx((640 * 72 / 200, 480 * 72 / 200), abs=0.01)
    doc.close()


def test_pdf_text_is_the_ocr_text(outputs):
    _, out, records = outputs
    for record in records:
        doc = pdfium.PdfDocument(out / (_stem(record.source) + ".pdf"))
        text = doc[record.page - 1].get_textpage().get_text_range()
        assert _norm(text) == _norm(record.text), (record.source, record.page)
        doc.close()
    assert any(re.search(r"[\u4e00-\u9fff]{10}", r.text) for r in records)  # the CJK page is read


def _device_point(page, record: PageResult, x: float, y: float) -> tuple[int, int]:
    """PDFium's own map from page space to the upright image the OCR saw (render + turn). An
    image input's page already shows that upright image; a PDF input's page is as it was."""
    dx, dy = ctypes.c_int(), ctypes.c_int()
    turn = record.rotation // 90 if record.source.endswith(".pdf") else 0
    pdfium_c.FPDF_PageToDevice(page.raw, 0, 0, record.width, record.height, turn,
                               x, y, ctypes.byref(dx), ctypes.byref(dy))
    return dx.value, dy.value


def test_each_word_is_on_its_ocr_box(outputs):
    _, out, records = outputs
    checked = 0
    for record in records:
        doc = pdfium.PdfDocument(out / (_stem(record.source) + ".pdf"))
        page = doc[record.page - 1]
        textpage = page.get_textpage()
        chars = [(textpage.get_text_range(i, 1), textpage.get_charbox(i)) for i in range(textpage.count_chars())]
        chars = [(c, box) for c, box in chars if c.strip()]
        px_per_pt = max(record.width, record.height) / max(page.get_width(), page.get_height())
        pos = 0
        for line in (line for block in record.blocks for line in block.lines):
            for word in words_of(line):
                run, pos = chars[pos:pos + len(word.text)], pos + len(word.text)
                assert "".join(c for c, _ in run) == word.text
                corners = [_device_point(page, record, x, y) for _, (l, b, r, t) in run
                           for x, y in ((l, b), (r, t), (l, t), (r, b))]
                got = (min(p[0] for p in corners), min(p[1] for p in corners),
                       max(p[0] for p in corners), max(p[1] for p in corners))
                want = bbox(word.box, record)
                assert max(abs(g - w) for g, w in zip(got, want)) <= TOLERANCE_PT * px_per_pt, \
                    (record.source, record.page, word.text, got, want)
                checked += 1
        assert pos == len(chars)
        doc.close()
    assert checked > 300


def test_qpdf_finds_no_errors(outputs):
    _, out, _ = outputs
    for path in sorted(out.glob("*.pdf")):
        proc = subprocess.run(["qpdf", "--check", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, (path.name, proc.stdout, proc.stderr)
        assert "No syntax or stream encoding errors" in proc.stdout


def test_pdf_input_pages_are_copied_untouched(outputs):
    inp, out, _ = outputs
    with pikepdf.open(inp / "scan.pdf") as before, pikepdf.open(out / "scan.pdf") as after:
        assert len(before.pages) == len(after.pages)
        for old, new in zip(before.pages, after.pages):
            assert list(new.mediabox) == list(old.mediabox) and new.get("/Rotate") == old.get("/Rotate")
            old_streams = [old.Contents] if isinstance(old.Contents, pikepdf.Stream) else list(old.Contents)
            new_streams = list(new.Contents)
            assert new_streams[0].read_bytes() == b"q\n"
            assert [s.read_raw_bytes() for s in new_streams[1:1 + len(old_streams)]] == \
                [s.read_raw_bytes() for s in old_streams]
            for name, image in old.Resources.XObject.items():
                copy = new.Resources.XObject[name]
                assert copy.read_raw_bytes() == image.read_raw_bytes()
                assert {k: str(v) for k, v in copy.items()} == {k: str(v) for k, v in image.items()}
        assert dict(after.docinfo) == dict(before.docinfo)
        assert after.Root.Metadata.read_bytes() == before.Root.Metadata.read_bytes()


def test_jpeg_is_passed_through_at_its_true_size(outputs):
    inp, out, records = outputs
    record = next(r for r in records if r.source == "photo.jpg")
    with pikepdf.open(out / "photo.pdf") as pdf:
        page = pdf.pages[0]
        (image,) = page.Resources.XObject.values()
        assert image.Filter == pikepdf.Name.DCTDecode
        assert image.read_raw_bytes() == (inp / "photo.jpg").read_bytes()
        width, height = float(page.mediabox[2]), float(page.mediabox[3])
    assert (record.width, record.height) == (640, 480)  # upright after the EXIF turn
    assert width == pytest.approx(640 * 72 / 150) and height == pytest.approx(480 * 72 / 150)
    # The page shows the image upright: its rendering matches the upright image the OCR read.
    doc = pdfium.PdfDocument(out / "photo.pdf")
    shown = doc[0].render(scale=150 / 72).to_pil().convert("L")
    assert abs(shown.width - 640) <= 1 and abs(shown.height - 480) <= 1  # PDFium rounds up
    shown = np.asarray(shown.resize((640, 480)), dtype=np.float32)
    upright = np.asarray(ImageOps.exif_transpose(Image.open(inp / "photo.jpg")).convert("L"), dtype=np.float32)
    assert np.abs(shown - upright).mean() < 0.3 * np.abs(shown - upright[::-1, ::-1]).mean()


def test_tiff_frames_are_embedded_losslessly(outputs):
    inp, out, records = outputs
    with Image.open(inp / "multi.tif") as tif, pikepdf.open(out / "multi.pdf") as pdf:
        assert len(pdf.pages) == tif.n_frames == 2
        for index, page in enumerate(pdf.pages):
            tif.seek(index)
            (image,) = page.Resources.XObject.values()
            pixels = pikepdf.PdfImage(image).as_pil_image()
            assert pixels.size == tif.size
            assert np.array_equal(np.asarray(pixels.convert("L")), np.asarray(tif.convert("L")))
            assert float(page.mediabox[2]) == pytest.approx(tif.size[0] * 72 / 300)
            assert float(page.mediabox[3]) == pytest.approx(tif.size[1] * 72 / 300)


def _store_words(record: PageResult) -> list[tuple[str, tuple[int, int, int, int]]]:
    return [(w.text, bbox(w.box, record)) for b in record.blocks for line in b.lines for w in words_of(line)]


def test_hocr_reads_back_and_passes_hocr_check(outputs):
    _, out, records = outputs
    for source in sorted({r.source for r in records}):
        path = out / (_stem(source) + ".hocr")
        tree = html.parse(str(path))
        pages = tree.xpath("//*[@class='ocr_page']")
        mine = sorted((r for r in records if r.source == source), key=lambda r: r.page)
        assert len(pages) == len(mine)
        for element, record in zip(pages, mine):
            words = [(w.text, tuple(int(v) for v in re.search(r"bbox (\d+) (\d+) (\d+) (\d+)",
                                                                w.get("title")).groups()))
                     for w in element.xpath(".//*[@class='ocrx_word']")]
            assert words == _store_words(record)
            confs = [int(re.search(r"x_wconf (\d+)", w.get("title")).group(1))
                     for w in element.xpath(".//*[@class='ocrx_word']")]
            want = [round(100 * w.conf) for b in record.blocks for line in b.lines for w in words_of(line)]
            assert confs == want
        if shutil.which("hocr-check"):
            # hocr-check compares line boxes across all pages of a file: skip overlap on multi-page ones
            args = ["hocr-check", str(path)] + (["-o"] if len(pages) > 1 else [])
            proc = subprocess.run(args, capture_output=True, text=True)
            assert "not ok" not in proc.stderr and proc.stderr.count("ok ") >= 3, proc.stderr
        if shutil.which("hocr-lines"):  # hocr-tools reads the lines back as the store has them
            proc = subprocess.run(["hocr-lines", str(path)], capture_output=True, text=True)
            want = [" ".join(line.text.split()) for r in mine for b in r.blocks for line in b.lines]
            assert [" ".join(t.split()) for t in proc.stdout.splitlines() if t.strip()] == want


def _alto_schema() -> etree.XMLSchema:
    class Local(etree.Resolver):
        def resolve(self, url, public_id, context):
            if url and url.endswith("xlink.xsd"):
                return self.resolve_filename(str(XSD_DIR / "xlink.xsd"), context)
            return None

    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(Local())
    return etree.XMLSchema(etree.parse(str(XSD_DIR / "alto-4-4.xsd"), parser))


def test_alto_validates_and_equals_the_store(outputs):
    _, out, records = outputs
    schema = _alto_schema()
    for source in sorted({r.source for r in records}):
        tree = etree.parse(str(out / (_stem(source) + ".alto.xml")))
        assert schema.validate(tree), schema.error_log
        mine = sorted((r for r in records if r.source == source), key=lambda r: r.page)
        pages = tree.findall(f".//{ALTO}Page")
        assert len(pages) == len(mine)
        for element, record in zip(pages, mine):
            assert (int(element.get("WIDTH")), int(element.get("HEIGHT"))) == (record.width, record.height)
            strings = element.findall(f".//{ALTO}String")
            got = [(s.get("CONTENT"), (int(s.get("HPOS")), int(s.get("VPOS")),
                                       int(s.get("HPOS")) + int(s.get("WIDTH")),
                                       int(s.get("VPOS")) + int(s.get("HEIGHT")))) for s in strings]
            assert got == _store_words(record)
            confs = [float(s.get("WC")) for s in strings]
            want = [w.conf for b in record.blocks for line in b.lines for w in words_of(line)]
            assert confs == pytest.approx(want, abs=1e-4)
            assert len(element.findall(f".//{ALTO}TextBlock")) == len([b for b in record.blocks if b.lines])


def test_export_rewrites_the_same_bytes(outputs, tmp_path):
    _, out, _ = outputs
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".pdf", ".hocr", ".xml")}
    for name in before:
        (out / name).unlink()
    proc = run_cli("export", str(out), "--format", "pdf,hocr,alto")
    assert proc.returncode == 0, proc.stderr
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".pdf", ".hocr", ".xml")}
    assert after == before


def test_an_input_that_vanished_gets_no_pdf_and_a_note(outputs, tmp_path):
    inp, out, _ = outputs
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    for path in copy.glob("*.pdf"):
        path.unlink()
    moved = tmp_path / "cjk.png"
    shutil.move(inp / "cjk.png", moved)
    sideways = (inp / "sideways.png").read_bytes()
    try:
        (inp / "sideways.png").write_bytes(sideways + b"changed")
        proc = run_cli("export", str(copy), "--format", "pdf,hocr")
    finally:
        shutil.move(moved, inp / "cjk.png")
        (inp / "sideways.png").write_bytes(sideways)
    assert proc.returncode == 0, proc.stderr
    assert "cjk.png: no searchable PDF: the input" in proc.stderr and "cannot be read" in proc.stderr
    assert "sideways.png: no searchable PDF" in proc.stderr and "has changed" in proc.stderr
    assert not (copy / "cjk.pdf").exists() and not (copy / "sideways.pdf").exists()
    assert (copy / "scan.pdf").exists() and (copy / "cjk.hocr").exists()


def test_a_password_protected_pdf_stays_protected(eval_dir, tmp_path):
    out = tmp_path / "out"
    proc = run_cli("run", str(eval_dir / "edge" / "r6-user-password.pdf"), "-o", str(out), "--engine",
                   "textlayer", "--password", "asdfzxcv", "--formats", "pdf")
    assert proc.returncode == 0, proc.stderr
    with pytest.raises(pikepdf.PasswordError):
        pikepdf.open(out / "r6-user-password.pdf")
    with pikepdf.open(out / "r6-user-password.pdf", password="asdfzxcv") as pdf:
        assert pdf.is_encrypted and len(pdf.pages) == 1
    assert "asdfzxcv" not in proc.stderr


def test_a_page_with_its_own_text_layer_gets_no_second_one(eval_dir, tmp_path):
    """OCR'd although it has a real text layer (--text-layer ignore): the PDF keeps only its own."""
    from tests.conftest import FAKE_ENGINE

    source = eval_dir / "pdfs" / "maint-guide.en.p5-9.pdf"
    out = tmp_path / "out"
    proc = run_cli("run", str(source), "-o", str(out), "--engine", FAKE_ENGINE, "--pages", "1-2",
                   "--text-layer", "ignore", "--formats", "jsonl,pdf")
    assert proc.returncode == 0, proc.stderr
    before, after = pdfium.PdfDocument(source), pdfium.PdfDocument(out / "maint-guide.en.p5-9.pdf")
    for index in range(len(before)):
        assert after[index].get_textpage().get_text_range() == before[index].get_textpage().get_text_range()
    assert "digest" not in after[0].get_textpage().get_text_range()


def test_a_scan_with_an_earlier_invisible_ocr_layer_gets_no_second_one(tmp_path):
    """`auto` OCRs such a page again (its invisible layer is not trusted), but the searchable PDF
    keeps the page as it was: a second hidden layer would double its text in every search."""
    from tests.conftest import FAKE_ENGINE
    from tests.pdf_helpers import scanned_pdf

    lines = ["An earlier OCR layer drawn invisibly", "over the scanned page by another tool"]
    source = scanned_pdf(tmp_path / "prior.pdf", Image.new("RGB", (600, 800), "white"), lines)
    out = tmp_path / "out"
    proc = run_cli("run", str(source), "-o", str(out), "--engine", FAKE_ENGINE, "--formats", "jsonl,pdf")
    assert proc.returncode == 0, proc.stderr
    record = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert record["mode"] == "ocr"
    before = pdfium.PdfDocument(source)[0].get_textpage().get_text_range()
    assert pdfium.PdfDocument(out / "prior.pdf")[0].get_textpage().get_text_range() == before


def test_text_layer_pages_have_words_from_their_characters(eval_dir, tmp_path):
    out = tmp_path / "out"
    source = eval_dir / "pdfs" / "packaging-tutorial.zh_CN.p7-10-18-21.pdf"
    proc = run_cli("run", str(source), "-o", str(out), "--engine", "textlayer", "--pages", "1-2",
                   "--formats", "jsonl,pdf,hocr,alto")
    assert proc.returncode == 0, proc.stderr
    records = [PageResult.from_dict(json.loads(line)) for line in
               (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    lines = [line for r in records for b in r.blocks for line in b.lines]
    assert lines and all(line.words for line in lines)
    assert all(" ".join(w.text for w in line.words) == " ".join(line.text.split()) for line in lines)
    for line in lines:  # every word inside its line
        x0, y0, x1, y1 = (min(p[0] for p in line.box), min(p[1] for p in line.box),
                          max(p[0] for p in line.box), max(p[1] for p in line.box))
        assert all(x0 - 0.5 <= p[0] <= x1 + 0.5 and y0 - 0.5 <= p[1] <= y1 + 0.5 for w in line.words for p in w.box)
    assert _alto_schema().validate(etree.parse(str(out / (source.stem + ".alto.xml"))))
    with pikepdf.open(source) as before, pikepdf.open(out / (source.stem + ".pdf")) as after:
        assert [_contents(p) for p in after.pages] == [_contents(p) for p in before.pages]  # untouched
        assert all(_contents(p) for p in before.pages)


def _contents(page: pikepdf.Page) -> list[bytes]:
    streams = [page.Contents] if isinstance(page.Contents, pikepdf.Stream) else list(page.Contents)
    return [s.read_raw_bytes() for s in streams]
