"""The corpus builder's rules (benchmarks/corpus.py, corpus_layout.py, corpus_accuracy.py): seeded
selection and split, layout tags from the text layer, the committed manifest, the per-category scores."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from tests._eval_shared import eval_kit

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402
from corpus_accuracy import Group, PageScore, score_page, verdict  # noqa: E402
from corpus_layout import analyse_page  # noqa: E402


def _candidates() -> list[corpus.Candidate]:
    pool = []
    for d in range(30):
        for p in range(1, 11):
            tags = ["one-column"]
            if d % 10 == 0:
                tags = ["two-column", "table"]
            if d == 7 and p <= 3:
                tags = ["slides"]
            pool.append(corpus.Candidate(f"doc{d:02d}", p, "zh" if d % 15 == 1 else "en", tags, tags[0], 500))
    return pool


def test_choose_pages_is_seeded_and_follows_its_rule():
    pool = _candidates()
    first = corpus.choose_pages(pool, 1, target=100)
    assert first == corpus.choose_pages(list(reversed(pool)), 1, target=100)  # pool order does not matter
    assert first != corpus.choose_pages(pool, 2, target=100)
    assert len(first) == 100
    per_doc: dict[str, int] = {}
    for c in first:
        per_doc[c.doc] = per_doc.get(c.doc, 0) + 1
    assert max(per_doc.values()) <= corpus.MAX_PAGES_PER_PDF
    assert sum(1 for c in first if "slides" in c.tags) == 3  # a rare tag: every page the pool has
    assert sum(1 for c in first if c.lang == "zh") == 2 * corpus.MAX_PAGES_PER_PDF  # quota beyond the pool: capped per doc


def test_halves_are_by_document_and_seeded():
    names = [f"doc{i}" for i in range(200)]
    halves = [corpus.half_of(n, 5) for n in names]
    assert halves == [corpus.half_of(n, 5) for n in names]
    assert 70 < halves.count("tune") < 130
    assert halves != [corpus.half_of(n, 6) for n in names]


def test_held_back_packages_are_refused():
    for name in ("debian-reference", "maint-guide-es", "packaging-tutorial", "texlive-lang-chinese",
                 "texlive-publishers-doc", "texlive-latex-recommended-doc"):
        with pytest.raises(SystemExit):
            corpus.refuse_held_back(name)
    corpus.refuse_held_back("texlive-latex-extra-doc")


def test_committed_manifest_is_consistent():
    manifest = json.loads(corpus.MANIFEST.read_text(encoding="utf-8"))
    docs = {d["id"]: d for d in manifest["documents"]}
    packages = {p["name"] for p in manifest["packages"]}
    assert len(manifest["pages"]) >= 400 and len(docs) >= 60
    assert not any(name.startswith(h) for name in packages for h in corpus.HELD_BACK)
    assert all(len(p["sha256"]) == 64 and p["version"] for p in manifest["packages"])
    for page in manifest["pages"]:
        doc = docs[page["doc"]]
        assert page["half"] == doc["half"] == corpus.half_of(doc["id"], manifest["seed"])
        assert doc["package"] in packages and page["lang"] in ("en", "zh") and page["tags"]
    assert {"tune", "check"} == {p["half"] for p in manifest["pages"]}
    assert any(p["lang"] == "zh" for p in manifest["pages"])


def _kit_layout(name: str, page: int):
    pdf = pdfium.PdfDocument(str(eval_kit() / "pdfs" / name))
    try:
        return analyse_page(pdf[page - 1])
    finally:
        pdf.close()


def test_layout_tags_of_kit_pages():
    slide = _kit_layout("packaging-tutorial.zh_CN.p7-10-18-21.pdf", 1)
    assert "slides" in slide.tags and slide.category == "slides"
    chinese = _kit_layout("zhlipsum.p1-4.pdf", 1)
    assert chinese.lang == "zh" and chinese.chars > 100
    manual = _kit_layout("maint-guide.en.p5-9.pdf", 1)
    assert manual.lang == "en" and "slides" not in manual.tags and manual.columns == 1


def test_corpus_scores_ignore_whitespace_and_check_order():
    assert score_page("ab cd\nef", "abcdef").cer == 0.0
    swapped = score_page("first column text. second column text.", "second column text. first column text.")
    assert swapped.bag_f1 == 1.0 and swapped.cer > 0.3
    good = Group([PageScore(0.006, 0.995)])
    bad_order = Group([PageScore(0.20, 0.99)])
    tess = Group([PageScore(0.02, 0.98)])
    assert verdict("two-column", good, {"tesseract": tess, "rapidocr v5": tess}) == "met"
    assert verdict("two-column", bad_order, {"tesseract": tess}) == "> tess, order"
    assert verdict("zh", good, {"tesseract": Group([PageScore(0.010, 0.99)])}) == "> tess/2"


@pytest.mark.slow
def test_replayed_lines_give_the_recorded_text(tmp_path):
    """The fast layout loop is faithful: laying out recorded lines again gives the text the full
    engine gave on the same page (zhlipsum: Chinese, with margin notes)."""
    from corpus_accuracy import CorpusPage
    from corpus_lines import attach_line_recorder, load_record, replay_folder, replaying
    from eval_sets import render_page
    from peers import PagerunnerTool

    image = render_page(eval_kit() / "pdfs" / "zhlipsum.p1-4.pdf", 2, 200.0)
    image_path = tmp_path / "page.png"
    image.save(image_path)
    page = CorpusPage("zh.p002", "tune", "zh", ["margin-notes"], {"born": "page.png"}, tmp_path)
    tool = PagerunnerTool("ppocr", 2)
    attach_line_recorder(tool, tmp_path / "lines")
    full = tool.ocr_page(page.load("born"), page, "born")
    folder, warning = replay_folder(tmp_path / "lines")
    record = load_record(folder, "corpus-tune-born", "zh.p002")
    assert not warning and record is not None and record["lines"]
    holder = {"record": record}
    with replaying(tool.engine, holder):
        replayed = tool.engine.ocr(page.load("born")).text
    assert replayed == full and len(full) > 100


def test_heading_truth_is_the_lines_set_larger_or_bold(tmp_path):
    """benchmarks/corpus_headings.py: headings from the text layer's sizes and fonts."""
    from corpus_headings import same_heading, score_page as score_headings, truth_headings
    from tests.pdf_helpers import add_text
    doc = pdfium.PdfDocument.new()
    page = doc.new_page(595, 842)
    add_text(doc, page, "Running Head Set Large", 60, 815, size=14)  # in the top band
    add_text(doc, page, "2 Methods", 60, 740, size=14)
    for k in range(30):
        add_text(doc, page, f"body text line {k} with enough words to be the body", 60, 720 - 14 * k, size=10)
    add_text(doc, page, "2.1 Bold run at body size", 60, 280, size=10, font="Helvetica-Bold")
    add_text(doc, page, "3 Results", 60, 250, size=14)  # a contents entry: page number an em and more away
    add_text(doc, page, "17", 200, 250, size=14)
    page.gen_content()
    path = tmp_path / "headings.pdf"
    doc.save(str(path))
    pdf = pdfium.PdfDocument(str(path))
    try:
        truth = truth_headings(pdf[0], 1.15)
    finally:
        pdf.close()
    assert truth == ["2 Methods", "2.1 Bold run at body size"]
    assert same_heading("2.1 Bold run at bodysize", "2.1 Bold run at body size")
    assert not same_heading("Results", "2 Methods")
    score = score_headings(truth, ["2 Methods", "body text line 3"])
    assert score.found == [True, False] and score.right == [True, False]
