"""The human report (rich, stderr) and the JSON report of an evaluation."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from runner.evaluation.evaluate import DocumentEval, EvalOptions, EvalResult, PageEval
from runner.evaluation.metrics import score_text
from runner.evaluation.report import print_report, to_json

REF = "The quick brown fox jumps over the lazy dog near the river bank."


def _result() -> EvalResult:
    good = PageEval("a.pdf", 1, "scored", score=score_text(REF, REF), reference="a.p1.gt.txt")
    bad = PageEval("a.pdf", 2, "scored", score=score_text(REF, REF.replace("fox", "f0x")),
                   reference="a.p2.gt.txt")
    skipped = PageEval("a.pdf", 3, "skipped", reason="little_text")
    failed = PageEval("b.png", 1, "failed", reason="engine_failed: boom")
    docs = [DocumentEval("a.pdf", Path("/in/a.pdf"), [good, bad, skipped]),
            DocumentEval("b.png", Path("/in/b.png"), [failed]),
            DocumentEval("c.pdf", Path("/in/c.pdf"), error="corrupt_pdf: corrupt PDF")]
    return EvalResult(EvalOptions(engine="ppocr"), "ppocr-v5-mobile", docs, seconds=1.5)


def test_table_and_diff_on_a_plain_console():
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=False, color_system=None)
    print_report(_result(), console, worst=3)
    text = buffer.getvalue()
    assert "\x1b[" not in text  # no colour codes when not a terminal
    assert "overall" in text and "little_text" in text and "engine_failed: boom" in text
    assert "corrupt_pdf" in text
    assert "Skipped 1 page(s): 1 little_text" in text
    assert "f[o]x" in text and "f[0]x" in text  # the aligned diff of the worst page
    assert "a.pdf p2" in text and "a.pdf p1:" not in text  # a perfect page is not "worst"


def test_json_report_shape():
    report = json.loads(json.dumps(to_json(_result(), worst=2)))
    overall = report["overall"]
    assert (overall["pages_scored"], overall["pages_skipped"], overall["pages_failed"]) == (2, 1, 1)
    assert overall["documents"] == 3 and overall["documents_failed"] == 1
    assert overall["char_edits"] == 1 and overall["ref_chars"] == 2 * len(REF)
    doc_a, doc_b, doc_c = report["documents"]
    assert doc_a["pages_scored"] == 2 and doc_a["cer"] == round(1 / (2 * len(REF)), 5)
    assert [p["status"] for p in doc_a["pages"]] == ["scored", "scored", "skipped"]
    assert doc_a["pages"][2]["reason"] == "little_text"
    assert doc_b["pages"][0]["error"] == "engine_failed: boom"
    assert doc_c["error"].startswith("corrupt_pdf") and "cer" not in doc_c
    assert [w["page"] for w in report["worst"]] == [2]
