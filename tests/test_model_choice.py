"""--model: which shipped ppocr model reads the pages, and how that enters identity and records."""

import json
from pathlib import Path

import pytest

from jobs.identity import document_id
from model_cache.engine import EngineOptions
from model_cache.ppocr.engine import PPOCREngine, params_from
from runner.errors import UsageError
from runner.job import RunConfig
from tests.conftest import run_cli


def _options(**kwargs) -> dict:
    return RunConfig(inputs=["x.pdf"], out_dir=Path("out"), **kwargs).document_options()


def test_model_enters_the_document_identity_and_the_default_keeps_earlier_ids():
    legacy = _options()
    assert "ppocr_model" not in legacy  # ids made before --model existed stay valid
    assert _options(model="ppocr-v5-mobile") == legacy
    tiny = _options(model="ppocr-v6-tiny")
    assert tiny["ppocr_model"] == "ppocr-v6-tiny"
    assert document_id("abc", tiny) != document_id("abc", legacy)
    assert "ppocr_model" not in _options(engine="hunyuan")


def test_model_is_checked_before_the_run():
    with pytest.raises(UsageError, match="ppocr-v6-tiny"):
        RunConfig(inputs=["x.pdf"], out_dir=Path("out"), model="ppocr-v9").validate()
    with pytest.raises(UsageError, match="--model-dir"):
        RunConfig(inputs=["x.pdf"], out_dir=Path("out"), engine="hunyuan", model="ppocr-v6-tiny").validate()


def test_manifest_defaults_apply_and_engine_options_override_them():
    params = params_from(EngineOptions(), {"det_limit_side": 1024, "det_thresh": 0.25}, {"height": 32})
    assert params.det.limit_side == 1024 and params.det.thresh == 0.25 and params.rec.height == 32
    params = params_from(EngineOptions(extra=(("det_limit_side", "1400"),)), {"det_limit_side": 1024})
    assert params.det.limit_side == 1400


def test_v6_tiny_engine_names_its_model_and_uses_its_manifest():
    engine = PPOCREngine(EngineOptions(threads=1, model="ppocr-v6-tiny"))
    assert engine.name == "ppocr-v6-tiny"
    assert len(engine.dictionary) == 6906
    assert engine.params.det.limit_side == engine.models.defaults["det_limit_side"]


def test_run_with_model_writes_records_naming_it(corpus, tmp_path):
    proc = run_cli("run", str(corpus / "gamma.png"), "-o", str(tmp_path / "o"), "--model", "ppocr-v6-tiny",
                   "-q", "--jsonl", "-", "--threads", "1")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert records and all(r["engine"] == "ppocr-v6-tiny" for r in records)
    bad = run_cli("run", str(corpus / "gamma.png"), "-o", str(tmp_path / "p"), "--model", "nope")
    assert bad.returncode == 2 and "ppocr-v6-tiny" in bad.stderr


def test_eval_with_model(eval_dir):
    proc = run_cli("eval", str(eval_dir / "scans" / "phototest.tif"), "--json", "--threads", "1",
                   "--model", "ppocr-v6-tiny")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["engine"] == "ppocr-v6-tiny" and report["overall"]["cer"] < 0.05


def test_models_list_and_verify_cover_every_shipped_model():
    listed = run_cli("models", "list")
    assert listed.returncode == 0
    # Piped: a header line, then one tab-separated line per model with its whole values.
    header, *rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert header == ["name", "engine", "where", "size", "languages", "pages/min", "mean CER"]
    by_name = {row[0].removesuffix(" (default)"): row for row in rows}
    assert {"ppocr-v5-mobile", "ppocr-v6-tiny"} <= set(by_name) and all(len(r) == 7 for r in rows)
    assert by_name["ppocr-v5-mobile"][0].endswith("(default)") and by_name["ppocr-v6-tiny"][2] == "bundled"
    assert all("kit PDFs" in by_name[n][6] for n in ("ppocr-v5-mobile", "ppocr-v6-tiny"))  # figures.json
    assert float(by_name["ppocr-v6-tiny"][5]) > float(by_name["ppocr-v5-mobile"][5])
    verified = run_cli("models", "verify")
    assert verified.returncode == 0
    assert "OK ppocr-v5-mobile" in verified.stderr and "OK ppocr-v6-tiny" in verified.stderr


def test_the_run_record_keeps_the_resolved_model_for_retry():
    from runner.job import _command_record
    config = RunConfig(inputs=["x.pdf"], out_dir=Path("out"))
    assert _command_record(config)["model"] == "ppocr-v5-mobile"
    config = RunConfig(inputs=["x.pdf"], out_dir=Path("out"), model="ppocr-v6-tiny")
    assert _command_record(config)["model"] == "ppocr-v6-tiny"
    assert _command_record(RunConfig(inputs=[], out_dir=Path("out"), engine="hunyuan"))["model"] is None


@pytest.mark.slow
def test_v6_tiny_reads_6pt_print_at_its_default_detector_size():
    """benchmarks/small_print.py: at det_limit_side 1280 6-pt print reads as at 1600 (CER 0.0137 vs
    0.0128); 5-pt print needs 1600 (0.054 vs 0.014), as the README says."""
    from PIL import ImageFont  # noqa: F401

    from benchmarks.small_print import FONT, small_print_page
    from runner.evaluation.metrics import cer
    if not Path(FONT).is_file():
        pytest.skip("DejaVu fonts are not installed")
    engine = PPOCREngine(EngineOptions(threads=2, model="ppocr-v6-tiny"))
    image, truth = small_print_page(6)
    assert cer(truth, engine.ocr(image).text) < 0.03


def test_line_crops_are_softened_by_default_and_rec_blur_sets_how_much():
    from model_cache.ppocr.engine import REC_BLUR
    assert params_from(EngineOptions()).rec.blur == REC_BLUR > 0
    assert params_from(EngineOptions(extra=(("rec_blur", "0"),))).rec.blur == 0
    assert params_from(EngineOptions(), {"rec_blur": 0.9}).rec.blur == 0.9
