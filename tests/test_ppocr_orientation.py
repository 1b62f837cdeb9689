"""Whole-page orientation on the kit's rotated scans, and the geometry helpers."""

import numpy as np
import pytest
from PIL import Image

from model_cache.ppocr.orientation import rotate_image, rotate_quad

from tests.ppocr_helpers import kit_cer, ppocr_engine  # noqa: F401  (fixture)


@pytest.mark.parametrize("name,rotation", [
    ("phototest.tif", 0), ("phototest-rotated-L.png", 90), ("phototest-rotated-R.png", 270),
    ("phototest-rotated-180.png", 180)])
def test_rotated_scans_come_out_upright(ppocr_engine, eval_dir, name, rotation):
    result = ppocr_engine.ocr(Image.open(eval_dir / "scans" / name))
    assert result.rotation == rotation
    assert (result.width, result.height) == (640, 480)
    assert kit_cer(eval_dir / "scans" / "phototest.gt.txt", result.text) < 0.02
    first = result.blocks[0].lines[0]
    assert first.text.startswith("This is a lot of 12 point text")
    assert max(p[1] for p in first.box) < 150  # boxes in the upright image: the first line is on top


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_rotate_quad_matches_rotate_image(degrees):
    img = np.zeros((60, 100, 3), dtype=np.uint8)
    img[10:20, 30:70] = 255
    quad = np.array([[30, 10], [70, 10], [70, 20], [30, 20]], dtype=np.float32)
    turned = rotate_image(img, degrees)
    q = rotate_quad(quad, degrees, 100, 60)
    ys, xs = np.nonzero(turned[..., 0])
    assert (xs.min(), ys.min()) == pytest.approx(tuple(q.min(0)), abs=1)
    assert (xs.max() + 1, ys.max() + 1) == pytest.approx(tuple(q.max(0)), abs=1)
