"""`--formats html`: the review pages, checked in a real headless Chromium.

The screenshot test finds the page picture on screen by its outline, maps the OCR line boxes of
the record onto it and checks that the picture's ink and the drawn box overlay both fall where
the record's boxes say (so the picture, the boxes and the record agree), and that the text is
in the DOM.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import FAKE_ENGINE, run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (tests/install_test_deps.sh)")
OUTLINE = (0x33, 0x66, 0xCC)  # .sheet's outline colour in outputs/html.py


def chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "chromium-profile"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--hide-scrollbars", "--force-device-scale-factor=1", *args, url]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def screenshot(tmp_path: Path, html: Path, size: tuple[int, int] = (1400, 1000)) -> np.ndarray:
    shot = tmp_path / f"{html.stem}.png"
    proc = chromium(tmp_path, html.as_uri(), f"--screenshot={shot}", f"--window-size={size[0]},{size[1]}")
    assert shot.is_file(), proc.stderr[-2000:]
    return np.asarray(Image.open(shot).convert("RGB")).astype(int)


def dump_dom(tmp_path: Path, html: Path) -> str:
    proc = chromium(tmp_path, html.as_uri(), "--dump-dom")
    assert proc.returncode == 0 and "<body" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def sheet_rect(pixels: np.ndarray) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of the first page picture, inside its 1-px outline."""
    mask = np.all(np.abs(pixels - np.array(OUTLINE)) <= 3, axis=2)
    ys, xs = np.nonzero(mask)
    assert len(xs) > 100, "no page picture outline on screen"
    top = ys.min()
    rows = ys < top + 5  # the first sheet's top edge
    left, right = xs[rows].min(), xs[rows].max()
    column = mask[top:, left]
    bottom = top + int(np.nonzero(column)[0].max())
    return left + 1, top + 1, right, bottom


def box_masks(record: dict, rect: tuple[int, int, int, int], shape: tuple[int, int], grow: int):
    left, top, right, bottom = rect
    sx, sy = (right - left) / record["width"], (bottom - top) / record["height"]
    masks = []
    for block in record["blocks"]:
        for line in block["lines"]:
            xs = [x for x, _ in line["box"]]
            ys = [y for _, y in line["box"]]
            mask = np.zeros(shape, dtype=bool)
            x0, x1 = int(left + min(xs) * sx) - grow, int(left + max(xs) * sx) + grow + 1
            y0, y1 = int(top + min(ys) * sy) - grow, int(top + max(ys) * sy) + grow + 1
            mask[max(y0, 0):y1, max(x0, 0):x1] = True
            masks.append(mask)
    return masks


def edge_coverage(stroke: np.ndarray, record: dict, rect: tuple[int, int, int, int], slack: int = 2) -> list[float]:
    """For every line box of the record, the share of points along its four edges (mapped to the
    screen) that have a drawn outline pixel within `slack` px: 1.0 when the overlay sits on the box."""
    left, top, right, bottom = rect
    sx, sy = (right - left) / record["width"], (bottom - top) / record["height"]
    shares = []
    for block in record["blocks"]:
        for line in block["lines"]:
            corners = [(left + x * sx, top + y * sy) for x, y in line["box"]]
            hits = total = 0
            for (ax, ay), (bx, by) in zip(corners, corners[1:] + corners[:1]):
                steps = max(2, int(max(abs(bx - ax), abs(by - ay))))
                for t in np.linspace(0.08, 0.92, steps):
                    x, y = int(round(ax + t * (bx - ax))), int(round(ay + t * (by - ay)))
                    hits += bool(stroke[y - slack:y + slack + 1, x - slack:x + slack + 1].any())
                    total += 1
            shares.append(hits / total)
    return shares


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory, eval_dir_module):
    base = tmp_path_factory.mktemp("review")
    inputs = base / "in"
    inputs.mkdir()
    shutil.copyfile(eval_dir_module / "scans" / "phototest-rotated-R.png", inputs / "rotated.png")
    shutil.copyfile(eval_dir_module / "scans" / "phototest.tif", inputs / "phototest.tif")
    shutil.copyfile(eval_dir_module / "scans" / "phototest.tif", inputs / "phototest copy.tif")
    (inputs / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really")
    out = base / "out"
    proc = run_cli("run", str(inputs), "-o", str(out), "--formats", "jsonl,html", "-q")
    assert proc.returncode == 1, proc.stderr  # broken.pdf
    records = {r["source"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    return base, inputs, out, records


@pytest.fixture(scope="module")
def eval_dir_module():
    from tests.conftest import shared_dir
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared/eval is not present")
    return shared / "eval"


def test_review_files_are_self_contained(reviewed):
    _, _, out, _ = reviewed
    for name in ("review.html", "rotated.html", "phototest.html", "phototest copy.html"):
        html = (out / name).read_text(encoding="utf-8")
        assert html.startswith("<!DOCTYPE html>")
        assert not re.search(r"""(src|href)=["'](https?:|//)""", html) and "<link" not in html
        assert "data:image/jpeg;base64," in html
    assert not (out / "broken.html").exists()  # a document that never opened has no pages to review


@needs_chromium
def test_screenshot_boxes_sit_on_the_lines_of_a_rotated_page(reviewed, tmp_path):
    _, _, out, records = reviewed
    record = records["rotated.png"]
    assert record["rotation"] in (90, 270) and len(record["blocks"]) >= 1
    pixels = screenshot(tmp_path, out / "rotated.html")
    rect = sheet_rect(pixels)
    left, top, right, bottom = rect
    assert abs((right - left) / (bottom - top) - record["width"] / record["height"]) < 0.02  # upright
    sheet = np.zeros(pixels.shape[:2], dtype=bool)
    sheet[top:bottom, left:right] = True
    boxes = box_masks(record, rect, pixels.shape[:2], grow=2)
    inside = np.any(boxes, axis=0)
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    ink = sheet & (r + g + b < 300)  # the page's text
    tint = sheet & (g - np.maximum(r, b) > 20)  # the overlay: confident lines are shaded green
    assert ink.sum() > 2000 and tint.sum() > 2000
    assert (ink & inside).sum() / ink.sum() > 0.97, "page ink outside the OCR boxes: picture and boxes disagree"
    assert (tint & inside).sum() / tint.sum() > 0.97, "overlay drawn where the record has no box"
    stroke = sheet & (g > 120) & (r < 80) & (b < 80)  # the boxes' outlines (confident: dark green)
    assert min(edge_coverage(stroke, record, rect)) > 0.9, "a box outline is not where the record says"
    shifted = (left + 6, top + 6, right + 6, bottom + 6)  # the check can fail: 6 px off is caught
    assert max(edge_coverage(stroke, record, shifted)) < 0.6
    for mask in box_masks(record, rect, pixels.shape[:2], grow=-2):
        assert (ink & mask).sum() > 0.02 * mask.sum(), "a box without text under it"
        assert (tint & mask).sum() > 0.2 * mask.sum(), "a box the overlay does not shade"


@needs_chromium
def test_text_and_confidence_are_in_the_rendered_dom(reviewed, tmp_path):
    _, _, out, records = reviewed
    dom = dump_dom(tmp_path, out / "phototest copy.html")
    record = records["phototest copy.tif"]
    lines = [line for block in record["blocks"] for line in block["lines"]]
    assert len(lines) >= 8
    for line in lines:
        escaped = line["text"].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert escaped in dom
        assert f'data-conf="{line["conf"]:.3f}"' in dom
    assert dom.count("<polygon") == len(lines) and dom.count('class="ln') == len(lines)


@needs_chromium
def test_run_page_lists_failures_then_least_confident_pages(reviewed, tmp_path):
    _, _, out, records = reviewed
    dom = dump_dom(tmp_path, out / "review.html")
    failures, doubtful, documents = (dom.index(h) for h in ("<h2>Failures", "least confident page", "<h2>Documents"))
    assert failures < doubtful < documents
    assert "broken.pdf" in dom[failures:doubtful] and "corrupt_pdf" in dom[failures:doubtful]
    shown = re.findall(r'<h3><a href="([^"]+)">', dom[doubtful:documents])
    confs = [float(c) for c in re.findall(r"confidence (\d+\.\d) %</small>", dom[doubtful:documents])]
    assert len(shown) == 2 and confs == sorted(confs)  # the copy shares its original's page: shown once
    assert "(shared)" in dom[documents:]


def test_export_regenerates_the_same_bytes_and_says_when_the_input_is_gone(reviewed, tmp_path):
    base, inputs, out, records = reviewed
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    before = (copy / "rotated.html").read_bytes()
    (copy / "rotated.html").unlink()
    (copy / "review.html").unlink()
    assert run_cli("export", str(copy), "--format", "html").returncode == 0
    assert (copy / "rotated.html").read_bytes() == before
    assert (copy / "review.html").read_bytes() == (out / "review.html").read_bytes()
    moved = base / "moved-away.png"
    shutil.move(inputs / "rotated.png", moved)
    try:
        kept = (copy / "rotated.html").stat().st_mtime_ns
        assert run_cli("export", str(copy), "--format", "html").returncode == 0
        assert (copy / "rotated.html").stat().st_mtime_ns == kept  # unchanged results: picture kept
        (copy / "rotated.html").unlink()
        assert run_cli("export", str(copy), "--format", "html").returncode == 0
        html = (copy / "rotated.html").read_text(encoding="utf-8")
        assert "no picture: the input is no longer at" in html and "<img" not in html
        lines = sum(len(b["lines"]) for b in records["rotated.png"]["blocks"])
        assert html.count("<polygon") == lines  # the boxes and the text are still reviewable
    finally:
        shutil.move(moved, inputs / "rotated.png")


def test_html_is_a_known_format_for_run_and_export(tmp_path):
    from tests.conftest import make_page
    make_page("x").save(tmp_path / "x.png")
    out = tmp_path / "out"
    proc = run_cli("run", str(tmp_path / "x.png"), "-o", str(out), "--engine", FAKE_ENGINE, "--formats", "html", "-q")
    assert proc.returncode == 0, proc.stderr
    assert (out / "x.html").is_file() and (out / "review.html").is_file() and not (out / "x.md").exists()


def test_encrypted_inputs_get_their_picture_on_export_only_with_the_password(eval_dir, tmp_path):
    out = tmp_path / "out"
    pdf = eval_dir / "edge" / "r6-user-password.pdf"
    proc = run_cli("run", str(pdf), "-o", str(out), "--formats", "html", "--engine", "textlayer",
                   "--password", "asdfzxcv", "-q")
    assert proc.returncode == 0, proc.stderr
    assert "data:image/jpeg;base64," in (out / "r6-user-password.html").read_text()
    (out / "r6-user-password.html").unlink()
    assert run_cli("export", str(out), "--format", "html").returncode == 0
    html = (out / "r6-user-password.html").read_text()
    assert "<img" not in html and "no picture: the input cannot be opened now" in html and "password" in html
    (out / "r6-user-password.html").unlink()
    assert run_cli("export", str(out), "--format", "html", "--password", "asdfzxcv").returncode == 0
    assert "data:image/jpeg;base64," in (out / "r6-user-password.html").read_text()


@needs_chromium
def test_hover_and_click_show_a_lines_text_and_confidence(reviewed, tmp_path):
    """The page's own script, driven by synthetic events appended to a copy of the page."""
    _, _, out, records = reviewed
    probe = """<script>
    document.querySelector('polygon').dispatchEvent(new MouseEvent('click', {bubbles: true}));
    document.querySelector('li.ln').dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
    document.body.setAttribute('data-hot', document.querySelectorAll('.hot').length);
    document.body.setAttribute('data-hot-kinds', Array.from(document.querySelectorAll('.hot'))
        .map(function (n) { return n.tagName.toLowerCase(); }).sort().join(','));
    </script></body>"""
    page = tmp_path / "probe.html"
    page.write_text((out / "phototest.html").read_text(encoding="utf-8").replace("</body>", probe),
                    encoding="utf-8")
    dom = dump_dom(tmp_path, page)
    first = records["phototest.tif"]["blocks"][0]["lines"][0]
    inspector = re.search(r'<div id="inspector"( hidden="")?>([^<]*)</div>', dom)
    assert inspector and inspector.group(1) is None  # shown
    assert inspector.group(2) == f"{first['text']}\nconfidence {100 * first['conf']:.1f} %"
    assert 'data-hot="2"' in dom and 'data-hot-kinds="li,polygon"' in dom  # the line and its box


def test_a_very_long_page_gets_a_bounded_picture(tmp_path):
    from tests.test_geometry import pdf_with_mediabox
    inputs = tmp_path / "in"
    inputs.mkdir()
    pdf_with_mediabox(inputs / "scroll.pdf", (0, 0, 595, 200_000))  # 345 x 116,000 px at the pixel cap
    out = tmp_path / "out"
    proc = run_cli("run", str(inputs), "-o", str(out), "--engine", FAKE_ENGINE, "--formats", "jsonl,html", "-q")
    assert proc.returncode == 0, proc.stderr
    html = (out / "scroll.html").read_text()
    height = int(re.search(r'class="sheet" style="width:\d+px;height:(\d+)px"', html).group(1))
    assert height <= 4000 and "data:image/jpeg;base64," in html


def test_run_page_orders_pages_by_confidence_and_keeps_the_worst(tmp_path, monkeypatch):
    """write_run_review on a store made by hand: failures first, then the N least confident OCR'd pages."""
    from jobs.store import DocumentRecord, JobStore
    from outputs.model import Block, ErrorCode, Line, PageError, PageResult
    from runner import review

    monkeypatch.setattr(review, "DOUBTFUL_PAGES", 3)
    store = JobStore(tmp_path / "out")
    run_id = store.start_run(1, {})
    confs = {("a.png", 1): 0.91, ("b.pdf", 1): 0.55, ("b.pdf", 2): 0.99, ("b.pdf", 3): 0.72, ("c.png", 1): 0.88}
    for name in ("a.png", "b.pdf", "c.png"):
        pages = sorted(page for source, page in confs if source == name)
        doc = store.register_document(DocumentRecord(
            name * 8, name, 10, str(tmp_path / "gone" / name), name, name.split(".")[0], None, None, "new",
            None, None, {"dpi": 200}))
        store.set_pages(doc.doc_id, "pdf", len(pages) + 1, [*pages, len(pages) + 1])
        for page in pages:
            line = Line(f"{name} p{page}", confs[(name, page)], [[10, 10], [90, 10], [90, 30], [10, 30]])
            result = PageResult.from_blocks([Block([line])], width=100, height=50, engine="x")
            result.source, result.doc_id, result.page = name, doc.doc_id, page
            store.commit_page(result, run_id)
        store.commit_page(PageResult.failed(source=name, doc_id=doc.doc_id, page=len(pages) + 1, engine="x",
                                            error=PageError(ErrorCode.ENGINE_FAILED, f"{name} broke")), run_id)
    review.write_run_review(store, tmp_path / "out")
    store.close()
    html = (tmp_path / "out" / "review.html").read_text(encoding="utf-8")
    failures, doubtful = html.index("<h2>Failures"), html.index("least confident")
    assert failures < doubtful and all(f"{n} broke" in html[failures:doubtful] for n in ("a.png", "b.pdf", "c.png"))
    shown = re.findall(r'<h3><a href="([^"]+)">', html[doubtful:html.index("<h2>Documents")])
    assert shown == ["b.html#p1", "b.html#p3", "c.html#p1"]  # 0.55, 0.72, 0.88; not 0.91 nor 0.99
    assert html.count("no picture: the input is no longer at") == 3 and "<img" not in html


def test_the_streamed_fingerprint_is_the_whole_lists():
    """A review page's stamp is taken a page at a time; it must stay the stamp of the whole list
    (a review written before keeps counting as current)."""
    from outputs.html import fingerprint, fingerprint_of_list

    records = [{"page": k, "text": f"ü line {k}", "blocks": [{"kind": "text"}]} for k in range(5)]
    assert fingerprint_of_list("document", "a/b.pdf", iter(records)) == fingerprint("document", "a/b.pdf", records)
    assert fingerprint_of_list("document", "x", []) == fingerprint("document", "x", [])


def test_review_pictures_are_made_when_asked_and_the_input_reopened(tmp_path, monkeypatch):
    """A review of a long document renders one page at a time and reopens the input as the
    workers do (PDFium keeps every page it loaded until the document closes)."""
    from dataclasses import replace

    import jobs.sources
    import outputs.pdfium_pages as pdfium_pages
    import runner.review as review
    from jobs.store import JobStore
    from runner.job import RunConfig, run_job
    from tests.conftest import make_pdf

    pdf = make_pdf(tmp_path / "long.pdf", 5, "long")
    assert run_job(RunConfig(inputs=[str(pdf)], out_dir=tmp_path / "out", engine=FAKE_ENGINE)).exit_code == 0
    store = JobStore(tmp_path / "out", create=False)
    doc = store.documents()[0]
    monkeypatch.setattr(pdfium_pages, "REOPEN_MIN_PAGES", 2)
    monkeypatch.setattr(pdfium_pages, "REOPEN_COST_RATIO", 0.0)
    opened = []
    monkeypatch.setattr(review, "open_source", lambda *a, **k: opened.append(1) or jobs.sources.open_source(*a, **k))
    pages = list(store.page_results(doc.doc_id))
    with review.PagePictures(doc) as pictures:
        assert opened == []  # nothing is rendered before it is asked for
        shown = [pictures.picture(page) for page in pages]
        assert pictures.picture(replace(pages[0], status="failed")) is None
    assert all(p.data_uri and p.data_uri.startswith("data:image/jpeg") for p in shown)
    assert len(opened) == 3  # pages 1-2, 3-4, 5
