"""DB post-processing on synthetic probability maps (no model needed)."""

import numpy as np
import pytest

from model_cache.ppocr.detection import (DetParams, boxes_from_map, input_size, order_quad,
                                         unclip_rect)


def _map(h: int, w: int, rects: list[tuple[int, int, int, int, float]]) -> np.ndarray:
    prob = np.zeros((h, w), dtype=np.float32)
    for x0, y0, x1, y1, p in rects:
        prob[y0:y1, x0:x1] = p
    return prob


def test_two_text_regions_become_two_unclipped_quads():
    prob = _map(100, 200, [(10, 10, 110, 20, 0.9), (20, 50, 180, 62, 0.95)])
    boxes = sorted(boxes_from_map(prob, DetParams(), 200, 100), key=lambda b: b.quad[0, 1])
    assert len(boxes) == 2
    first = boxes[0].quad
    # the shrunk 100x10 region grows by d = area*1.5/perimeter = 1500/220 ~ 6.8 px per side
    d = 100 * 10 * 1.5 / 220
    assert first[0] == pytest.approx([10 - d, 10 - d], abs=1.5)
    assert first[2] == pytest.approx([110 + d - 1, 20 + d - 1], abs=1.5)
    assert boxes[0].score == pytest.approx(0.9, abs=0.01)


def test_coordinates_scale_back_to_the_original_image():
    prob = _map(100, 200, [(10, 10, 110, 20, 0.9)])
    (box,) = boxes_from_map(prob, DetParams(), 400, 200)
    assert box.quad[:, 0].min() == pytest.approx(2 * (10 - 6.8), abs=3)
    assert box.quad[:, 1].max() == pytest.approx(2 * (20 + 6.8 - 1), abs=3)


def test_low_score_and_tiny_regions_are_dropped():
    prob = _map(100, 200, [(10, 10, 110, 20, 0.5), (150, 80, 152, 82, 0.99)])
    assert boxes_from_map(prob, DetParams(), 200, 100) == []


def test_a_line_with_a_tall_glyph_at_one_end_is_kept():
    # A footnote mark over the line's start: the region's rectangle is half empty (score ~0.49,
    # under box_thresh), the region itself full. The whole line was lost before.
    prob = _map(100, 500, [(40, 50, 440, 58, 0.95), (40, 42, 52, 50, 0.95)])
    (box,) = boxes_from_map(prob, DetParams(), 500, 100)
    assert box.score < DetParams.box_thresh
    assert box.quad[:, 0].min() < 40 and box.quad[:, 0].max() > 440
    assert boxes_from_map(prob, DetParams(fill_thresh=1.1), 500, 100) == []


def test_a_frame_or_a_faint_region_is_not_filled_text():
    frame = _map(100, 200, [(20, 20, 180, 80, 0.95)])
    frame[24:76, 24:176] = 0.0  # a drawn box: the area its outline encloses is mostly empty
    faint = _map(100, 200, [(20, 40, 180, 50, 0.55)])
    assert boxes_from_map(frame, DetParams(), 200, 100) == []
    assert boxes_from_map(faint, DetParams(), 200, 100) == []


def test_a_skewed_region_gives_a_rotated_quadrilateral():
    prob = np.zeros((200, 300), dtype=np.float32)
    for x in range(40, 260):
        y = int(100 + (x - 40) * 0.1)
        prob[y - 5:y + 5, x] = 0.9
    (box,) = boxes_from_map(prob, DetParams(), 300, 200)
    tl, tr, br, bl = box.quad
    assert tr[1] - tl[1] == pytest.approx(22, abs=3)  # slope 0.1 over ~220 px
    assert tl[0] < tr[0] and bl[0] < br[0] and tl[1] < bl[1]


def test_input_size_is_a_multiple_of_32_within_the_limit():
    params = DetParams(limit_side=1920)
    w, h = input_size(1654, 2339, params)
    assert w % 32 == 0 and h % 32 == 0 and max(w, h) <= 1920 + 16
    assert input_size(640, 480, params) == (640, 480)
    assert min(input_size(400, 20, params)) >= 64


def test_unclip_and_order():
    (cx, cy), (w, h), _ = unclip_rect(((50, 50), (100, 10), 0), 1.5)
    assert (w, h) == pytest.approx((100 + 2 * 1500 / 220, 10 + 2 * 1500 / 220))
    quad = order_quad(np.array([[10, 20], [0, 0], [10, 0], [0, 20]]))
    assert quad.tolist() == [[0, 0], [10, 0], [10, 20], [0, 20]]
