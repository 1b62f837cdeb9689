"""Line crops: the warp to the recogniser's height, and the softening of rendered edges."""

import numpy as np

from model_cache.ppocr.crops import rectify
from model_cache.ppocr.recognition import RecParams


def _page_with_a_bar() -> tuple[np.ndarray, np.ndarray]:
    """A white page with one black bar, and the quad of a 48 px high line around it (no scaling)."""
    page = np.full((100, 300, 3), 255, dtype=np.uint8)
    page[30:70, 100:104] = 0  # a glyph's thin stroke, edges one pixel sharp
    quad = np.array([[20, 26], [280, 26], [280, 74], [20, 74]], dtype=np.float32)
    return page, quad


def test_an_unsoftened_crop_keeps_a_stroke_sharp():
    page, quad = _page_with_a_bar()
    row = rectify(page, quad, RecParams(blur=0.0))[24, :, 0]
    assert set(np.unique(row)) == {0, 255}


def test_a_softened_crop_spreads_the_stroke_edges_and_keeps_its_size_and_ink():
    page, quad = _page_with_a_bar()
    sharp = rectify(page, quad, RecParams(blur=0.0))
    soft = rectify(page, quad, RecParams(blur=0.6))
    assert soft.shape == sharp.shape and soft.dtype == np.uint8
    row = soft[24, :, 0].astype(int)
    assert row.min() < 60 and 0 < row[79] < 255 and 0 < row[84] < 255  # grey either side of the bar
    assert abs(int(soft.astype(int).sum()) - int(sharp.astype(int).sum())) < 0.01 * sharp.size * 255
