"""`pagerunner eval` through the real command line (python -m runner)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import FAKE_ENGINE, make_page, run_cli
from tests._eval_shared import eval_kit


def test_text_layer_engine_against_kit_ground_truth_json():
    pdfs = eval_kit() / "pdfs"
    proc = run_cli("eval", str(pdfs), "--engine", "textlayer", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)  # stdout carries only the JSON report
    assert report["schema"] == "pagerunner.eval/1"
    assert report["overall"]["pages_scored"] == 13
    assert report["overall"]["cer"] == 0.0 and report["overall"]["bag_f1"] == 1.0
    assert [d["source"] for d in report["documents"]] == sorted(d["source"] for d in report["documents"])
    assert "overall" in proc.stderr  # the table goes to stderr


def test_ppocr_on_a_scan_with_ground_truth(tmp_path):
    scans = eval_kit() / "scans"
    proc = run_cli("eval", str(scans / "phototest.tif"), "--json", "--threads", "2")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    page = report["documents"][0]["pages"][0]
    assert page["status"] == "scored" and page["reference"].endswith("phototest.gt.txt")
    assert page["cer"] < 0.02 and page["bag_f1"] > 0.98


def test_gt_folder_mirrors_inputs_and_max_cer_gate(tmp_path):
    inputs, truth = tmp_path / "in" / "batch", tmp_path / "truth" / "batch"
    inputs.mkdir(parents=True)
    truth.mkdir(parents=True)
    make_page("hello").save(inputs / "a.png")
    (truth / "a.gt.txt").write_text("a transcription the digest engine will never produce\n", encoding="utf-8")
    make_page("other").save(inputs / "b.png")  # no ground truth: skipped and counted
    proc = run_cli("eval", str(tmp_path / "in"), "--gt", str(tmp_path / "truth"), "--engine", FAKE_ENGINE,
                   "--json", "--max-cer", "0.5")
    assert proc.returncode == 1, proc.stderr
    assert "above --max-cer" in proc.stderr
    report = json.loads(proc.stdout)
    assert report["overall"]["pages_scored"] == 1
    assert report["overall"]["skipped"] == {"no_ground_truth": 1}
    assert report["overall"]["cer"] > 0.5
    assert report["worst"] and report["worst"][0]["source"] == "batch/a.png"


def test_nothing_to_score_exits_1(tmp_path):
    make_page("hello").save(tmp_path / "a.png")
    proc = run_cli("eval", str(tmp_path / "a.png"), "--engine", FAKE_ENGINE)
    assert proc.returncode == 1
    assert "no page could be scored" in proc.stderr


def test_usage_errors_exit_2(tmp_path):
    pdf = eval_kit() / "pdfs" / "zhlipsum.p1-4.pdf"
    both = run_cli("eval", str(pdf), "--gt", str(tmp_path), "--against-text-layer")
    assert both.returncode == 2 and "not both" in both.stderr
    layer = run_cli("eval", str(pdf), "--against-text-layer", "--engine", "textlayer")
    assert layer.returncode == 2
    missing = run_cli("eval", str(tmp_path / "nope.pdf"))
    assert missing.returncode == 2
    pages = run_cli("eval", str(pdf), "--pages", "3-1")
    assert pages.returncode == 2


def test_unknown_engine_exits_4(tmp_path):
    shutil.copy(eval_kit() / "scans" / "phototest.tif", tmp_path / "p.tif")
    shutil.copy(eval_kit() / "scans" / "phototest.gt.txt", tmp_path / "p.gt.txt")
    proc = run_cli("eval", str(tmp_path / "p.tif"), "--engine", "nosuchengine")
    assert proc.returncode == 4 and "unknown engine" in proc.stderr


@pytest.mark.slow
def test_against_text_layer_with_ppocr():
    pdf = eval_kit() / "pdfs" / "maint-guide.en.p5-9.pdf"
    proc = run_cli("eval", str(pdf), "--against-text-layer", "--pages", "4", "--json")
    assert proc.returncode == 0, proc.stderr
    page = json.loads(proc.stdout)["documents"][0]["pages"][0]
    assert page["reference"] == "text layer"
    assert page["cer"] < 0.05 and page["bag_f1"] > 0.97
