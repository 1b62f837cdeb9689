"""HunyuanOCR through the product: convert a (tiny, random) checkpoint with `pagerunner models
convert`, verify it, and OCR pages with `pagerunner run --engine hunyuan` in worker processes."""

import json

import pytest
from PIL import Image

from model_cache.engine import EngineOptions
from tests.conftest import make_page, run_cli

pytest.importorskip("transformers")
pytest.importorskip("torch")


@pytest.mark.slow
def test_convert_verify_and_run(tmp_path):
    from model_cache.hunyuan import random_checkpoint as rc
    from model_cache.hunyuan.engine import create_engine

    model = rc.build_model(rc.TINY, seed=1)
    tokenizer = rc.build_tiny_tokenizer(tmp_path / "tokenizer.json")
    checkpoint = rc.save_checkpoint(model, tmp_path / "ckpt", rc.TINY, tokenizer)
    model_dir = tmp_path / "model"
    converted = run_cli("models", "convert", "hunyuanocr", "--checkpoint", str(checkpoint), "-o", str(model_dir),
                        timeout=900)
    assert converted.returncode == 0, converted.stderr
    verified = run_cli("models", "verify", str(model_dir))
    assert verified.returncode == 0 and "OK" in verified.stderr

    inputs = tmp_path / "in"
    inputs.mkdir()
    make_page("wide page", size=(320, 160)).save(inputs / "wide.png")
    make_page("tall page", size=(160, 300)).save(inputs / "tall.png")
    out = tmp_path / "out"
    proc = run_cli("run", str(inputs), "-o", str(out), "--engine", "hunyuan", "--model-dir", str(model_dir),
                   "--max-new-tokens", "12", "--jsonl", "-", "-q", timeout=900)
    assert proc.returncode == 0, proc.stderr
    records = {r["source"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert set(records) == {"wide.png", "tall.png"}

    engine = create_engine(EngineOptions(model_dir=model_dir, extra=(("max_new_tokens", "12"),)))
    for name, record in records.items():
        assert record["status"] == "ok" and record["mode"] == "ocr"
        expected = engine.ocr(Image.open(inputs / name).convert("RGB"))
        assert record["text"] == expected.text  # the runner changes nothing the engine produced
        assert record["engine"] == expected.engine
