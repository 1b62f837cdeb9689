"""Recognition spread over line crops (model_cache/ppocr/crop_threads.py): the same results as
one crop at a time through the engine's per-layer (OpenMP) path, in the crops' order."""

import numpy as np
import pytest
from PIL import Image

from model_cache.engine import EngineError, EngineOptions
from model_cache.ppocr.engine import PPOCREngine, to_rgb
from model_cache.ppocr.crops import rectify
from tests.test_ppocr_batch import line_crops


def engine(model: str, parallel: str, threads: int = 2) -> PPOCREngine:
    return PPOCREngine(EngineOptions(threads=threads, model=model,
                                     extra=(("rec_batch", "off"), ("rec_parallel", parallel))))


@pytest.mark.parametrize("model", ["ppocr-v5-mobile", "ppocr-v6-tiny"])
def test_crop_threads_give_the_results_of_one_crop_at_a_time(model, eval_dir):
    layers, crops_engine = engine(model, "layers"), engine(model, "crops")
    assert layers.crop_threads is None and crops_engine.crop_threads is not None
    rgb = to_rgb(Image.open(eval_dir / "scans" / "phototest.tif"))
    page = layers._detect(rgb, {})
    crops = [rectify(page.rgb, box.quad, layers.params.rec) for box in page.boxes]
    crops += line_crops(eval_dir / "lines", 6)
    assert len({c.shape[1] for c in crops}) > 5  # unequal widths: longest-first reorders them
    one = layers._rec_many(crops)
    many = crops_engine._rec_many(crops)
    assert [r.text for r in many] == [r.text for r in one]
    for a, b in zip(one, many):
        assert abs(a.conf - b.conf) < 1e-4
        assert np.array_equal(a.steps, b.steps) and a.frames == b.frames
    assert crops_engine.rec.stats.calls == len(crops)


def test_auto_keeps_ncnn_threads_inside_layers():
    assert engine("ppocr-v6-tiny", "auto", threads=2).crop_threads is None
    assert engine("ppocr-v6-tiny", "crops", threads=1).crop_threads is not None
    with pytest.raises(EngineError, match="rec_parallel"):
        engine("ppocr-v6-tiny", "sideways")


def test_the_mmap_threshold_cap_takes_on_glibc():
    import platform
    from model_cache.heap import cap_mmap_threshold
    if platform.libc_ver()[0] == "glibc":
        assert cap_mmap_threshold()
