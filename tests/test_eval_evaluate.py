"""`evaluate()` end to end on real inputs: ground-truth lookup, the text-layer reference,
skip reasons, failures, and the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from jobs.expand import expand_inputs
from jobs.pageranges import PageRanges
from model_cache.engine import EngineOptions
from outputs.model import Block, Line, PageResult
from runner.evaluation.evaluate import EvalOptions, evaluate
from runner.evaluation.report import to_json

from tests._eval_shared import eval_kit

PAGE_TEXT = "The quick brown fox jumps over the lazy dog"


class SizeKeyedEngine:
    """A test double for an OCR engine: answers a text chosen by the image's width, so each
    test image gets a known 'recognition'. Width 999 makes the engine fail."""

    name = "size-keyed"

    def __init__(self, texts: dict[int, str]):
        self.texts = texts
        self.seen: list[tuple[int, int]] = []

    def ocr(self, image: Image.Image) -> PageResult:
        self.seen.append(image.size)
        if image.width == 999:
            raise RuntimeError("engine exploded")
        text = self.texts.get(image.width, "")
        lines = [Line(t, 0.9, [[0, 0], [1, 0], [1, 1], [0, 1]]) for t in text.split("\n")]
        return PageResult.from_blocks([Block(lines)], width=image.width, height=image.height,
                                      engine=self.name)


def _factory(engine):
    def create(name: str, options: EngineOptions):
        assert isinstance(options, EngineOptions)
        return engine
    return create


def _image(path: Path, width: int, gt: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (width, 40), "white").save(path)
    if gt is not None:
        path.with_name(path.stem + ".gt.txt").write_text(gt, encoding="utf-8")
    return path


def test_scores_skips_and_failures(tmp_path):
    folder = tmp_path / "scans"
    _image(folder / "a.png", 100, PAGE_TEXT)
    _image(folder / "b.png", 200, PAGE_TEXT + "\n")
    _image(folder / "c.png", 300)  # no ground truth
    _image(folder / "d.png", 400, "short")  # fewer than 20 characters
    _image(folder / "e.png", 999, PAGE_TEXT)  # the engine fails
    (folder / "f.png").write_bytes(b"")  # an empty file: the document cannot be opened
    engine = SizeKeyedEngine({100: PAGE_TEXT, 200: "The quick brown fax jumps over the lazy dog"})
    result = evaluate(expand_inputs([str(folder)]), EvalOptions(engine="test"), _factory(engine))

    by_name = {d.source: d for d in result.documents}
    assert by_name["a.png"].pages[0].score.cer == 0.0
    b = by_name["b.png"].pages[0]
    assert b.status == "scored" and b.score.counts.char_edits == 1 and b.score.counts.word_edits == 1
    assert by_name["c.png"].pages[0].reason == "no_ground_truth"
    assert by_name["d.png"].pages[0].reason == "little_text"
    e = by_name["e.png"].pages[0]
    assert e.status == "failed" and "engine exploded" in e.reason
    assert by_name["f.png"].error.startswith("empty_file")
    assert result.status_counts() == {"scored": 2, "skipped": 2, "failed": 1}
    assert result.skip_reasons() == {"no_ground_truth": 1, "little_text": 1}
    assert result.counts.char_edits == 1 and result.counts.ref_chars == 2 * len(PAGE_TEXT)
    assert (300, 40) not in engine.seen  # no OCR for a page without ground truth
    assert (400, 40) not in engine.seen  # nor for one whose ground truth is too short

    report = json.loads(json.dumps(to_json(result)))
    assert report["schema"] == "pagerunner.eval/1"
    assert report["overall"]["pages_scored"] == 2 and report["overall"]["documents_failed"] == 1
    assert report["overall"]["cer"] == pytest.approx(1 / (2 * len(PAGE_TEXT)), abs=1e-5)
    assert report["worst"][0]["source"] == "b.png"
    assert {"op": "replace", "ref": "o", "hyp": "a"} in report["worst"][0]["diff"][0]


def test_mirrored_ground_truth_folder(tmp_path):
    _image(tmp_path / "in" / "x" / "a.png", 100)
    (tmp_path / "gt" / "x").mkdir(parents=True)
    (tmp_path / "gt" / "x" / "a.gt.txt").write_text(PAGE_TEXT, encoding="utf-8")
    engine = SizeKeyedEngine({100: PAGE_TEXT.upper()})
    result = evaluate(expand_inputs([str(tmp_path / "in")]),
                      EvalOptions(engine="test", gt_dir=tmp_path / "gt"), _factory(engine))
    page = result.documents[0].pages[0]
    assert page.status == "scored" and page.reference.endswith("x/a.gt.txt")
    assert page.score.wer == 1.0 and page.score.bag_f1 < 0.3


def test_kit_pdfs_against_their_ground_truth_with_the_text_layer_engine():
    pdfs = eval_kit() / "pdfs"
    result = evaluate(expand_inputs([str(pdfs)]), EvalOptions(engine="textlayer"), _factory(None))
    assert result.status_counts() == {"scored": 13}
    assert result.counts.cer == 0.0 and result.counts.bag_f1 == 1.0
    cjk = {d.source: {p.score.cjk for p in d.pages} for d in result.documents}
    assert cjk["maint-guide.en.p5-9.pdf"] == {False}
    assert cjk["zhlipsum.p1-4.pdf"] == {True}


def test_page_selection(tmp_path):
    pdf = eval_kit() / "pdfs" / "zhlipsum.p1-4.pdf"
    result = evaluate(expand_inputs([str(pdf)]),
                      EvalOptions(engine="textlayer", pages=PageRanges.parse("2,4-")), _factory(None))
    assert [p.page for p in result.documents[0].pages] == [2, 4]


def test_against_text_layer_renders_and_compares(tmp_path):
    pdf = eval_kit() / "pdfs" / "maint-guide.en.p5-9.pdf"
    gt = (eval_kit() / "pdfs" / "maint-guide.en.p5-9.p03.gt.txt").read_text(encoding="utf-8")
    a4_width_at_100dpi = round(595.28 * 100 / 72)  # maint-guide pages are A4

    class TextLayerEcho(SizeKeyedEngine):
        def ocr(self, image):
            self.seen.append(image.size)
            return PageResult.from_blocks([Block([Line(gt, 1.0, [[0, 0]] * 4)])], width=image.width,
                                          height=image.height, engine=self.name)

    engine = TextLayerEcho({})
    options = EvalOptions(engine="test", against_text_layer=True, dpi=100, pages=PageRanges.parse("2-3"))
    result = evaluate(expand_inputs([str(pdf)]), options, _factory(engine))
    p2, p3 = result.documents[0].pages
    assert p3.status == "scored" and p3.reference == "text layer"
    assert p3.score.cer < 0.01  # the kit's GT of p3 *is* that page's text layer
    assert p2.status == "scored" and p2.score.cer > 0.5  # p3's text is not p2's
    assert len(engine.seen) == 2 and all(w == a4_width_at_100dpi for w, _ in engine.seen)


def test_against_text_layer_skips_images_and_scans(tmp_path):
    _image(tmp_path / "a.png", 100)
    scan = eval_kit() / "edge" / "ccitt.pdf"  # an image-only PDF: no text layer
    engine = SizeKeyedEngine({})
    result = evaluate(expand_inputs([str(tmp_path / "a.png"), str(scan)]),
                      EvalOptions(engine="test", against_text_layer=True, dpi=50), _factory(engine))
    assert result.skip_reasons() == {"no_text_layer": 2}
    assert engine.seen == []


def test_document_level_transcription(tmp_path):
    kit = eval_kit() / "pdfs"
    pdf = tmp_path / "zh.pdf"
    pdf.write_bytes((kit / "zhlipsum.p1-4.pdf").read_bytes())
    whole = "\n".join((kit / f"zhlipsum.p1-4.p0{i}.gt.txt").read_text(encoding="utf-8") for i in range(1, 5))
    (tmp_path / "zh.gt.txt").write_text(whole, encoding="utf-8")
    result = evaluate(expand_inputs([str(pdf)]), EvalOptions(engine="textlayer"), _factory(None))
    (page,) = result.documents[0].pages
    assert page.page == 0 and page.status == "scored" and page.score.cer == 0.0
    partial = evaluate(expand_inputs([str(pdf)]),
                       EvalOptions(engine="textlayer", pages=PageRanges.parse("1")), _factory(None))
    assert partial.skip_reasons() == {"partial_document": 1}
