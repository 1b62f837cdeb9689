"""Figures detected again at full size (model_cache/ppocr/figure_detail.py)."""

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from model_cache.ppocr.detection import DetParams, TextBox
from model_cache.ppocr.figure_detail import with_figure_detail
from tests.ppocr_helpers import ppocr_engine  # noqa: F401  (fixture)

PAGE = (1654, 2339)  # A4 at 200 dpi: the detector reads it at 0.68x
CHART = (400, 700, 1250, 1500)  # x0, y0, x1, y1 of the chart's axes


def box(x0: float, y0: float, x1: float, y1: float) -> TextBox:
    return TextBox(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32), 0.9)


def bounds(b: TextBox) -> tuple[int, ...]:
    return tuple(int(round(v)) for v in (b.quad[:, 0].min(), b.quad[:, 1].min(),
                                         b.quad[:, 0].max(), b.quad[:, 1].max()))


def chart_page(font: ImageFont.ImageFont | None = None) -> tuple[Image.Image, list[str]]:
    """A page of body text over a line chart whose tick labels are set in `font`; without a
    font, the chart alone."""
    page = Image.new("RGB", PAGE, "white")
    draw = ImageDraw.Draw(page)
    body = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", 33) if font else None
    for k, y in enumerate(range(200, 560, 48)):
        draw.text((200, y), f"Line {k + 1} of the body text above the chart, read as usual.", font=body,
                  fill="black")
    x0, y0, x1, y1 = CHART
    draw.line([(x0, y0), (x0, y1), (x1, y1)], fill="black", width=3)
    draw.line([(x0, y1 - 100), (700, 900), (950, 1100), (x1, 760)], fill="black", width=4)
    labels = []
    for k in range(6):
        label = f"0.{k * 25:03d}"
        x = x0 + k * (x1 - x0) // 5
        draw.line([(x, y1), (x, y1 + 8)], fill="black", width=2)
        if font:
            draw.text((x - 14, y1 + 12), label, font=font, fill="black")
            labels.append(label)
    for k in range(1, 9):  # the y axis's labels, close against its ticks as plotting tools set them
        label, y = f"{k / 2:.1f}", y1 - k * (y1 - y0) // 9
        draw.line([(x0 - 6, y), (x0, y)], fill="black", width=2)
        if font:
            width = draw.textlength(label, font=font)
            draw.text((x0 - 9 - width, y - font.size // 2), label, font=font, fill="black")
            labels.append(label)
    return page, labels


def test_figure_boxes_are_replaced_by_the_full_size_pass():
    page, _ = chart_page()
    rgb = np.array(page)
    mark = (800, 1000)  # a red pixel inside the chart: it tells the fake detector where its crop lies
    rgb[mark[1], mark[0]] = (255, 0, 0)
    body = [box(200, y, 1400, y + 40) for y in range(200, 560, 48)]
    coarse = box(380, 1510, 1270, 1530)  # the tick labels run together at the shrunk size
    outside = box(200, 1700, 1400, 1740)  # a caption line below the chart
    calls = []
    params = DetParams()
    with_figure_detail(rgb, body + [coarse, outside], params, lambda crop: calls.append(crop.shape) or [])
    assert len(calls) == 1  # one figure, one crop of it
    assert calls[0][1] < PAGE[0] and calls[0][0] < PAGE[1] // 2

    def finer(crop: np.ndarray) -> list[TextBox]:
        y, x = np.argwhere((crop[:, :, 0] == 255) & (crop[:, :, 1] == 0))[0]
        ox, oy = mark[0] - x, mark[1] - y  # page coordinates of the crop's origin
        labels = [box(CHART[0] + k * 170 - 14 - ox, 1512 - oy, CHART[0] + k * 170 + 36 - ox, 1528 - oy)
                  for k in range(6)]
        blob = box(700 - ox, 900 - oy, 900 - ox, 1050 - oy)  # a patch of curves, 150 px thick
        return labels + [box(0, 0, 30, 10), blob]  # and one cut by the crop's edge

    out = with_figure_detail(rgb, body + [coarse, outside], params, finer)
    got = [bounds(b) for b in out]
    assert all(bounds(b) in got for b in body + [outside])  # outside the figure: untouched
    assert bounds(coarse) not in got  # covered by the finer boxes
    assert {(CHART[0] + k * 170 - 14, 1512, CHART[0] + k * 170 + 36, 1528) for k in range(6)} <= set(got)
    assert len(out) == len(body) + 1 + 6  # the edge-cut box and the thick one are dropped


def test_a_first_pass_box_the_second_pass_misses_is_kept():
    page, _ = chart_page()
    rgb = np.asarray(page)
    body = [box(200, y, 1400, y + 40) for y in range(200, 560, 48)]
    label = box(700, 1000, 800, 1030)
    out = with_figure_detail(rgb, body + [label], DetParams(), lambda crop: [])
    assert {bounds(b) for b in out} == {bounds(b) for b in body + [label]}


def test_a_page_read_at_full_size_is_not_detected_again():
    page, _ = chart_page()
    body = [box(200, y, 1400, y + 40) for y in range(200, 560, 48)]
    calls = []
    out = with_figure_detail(np.asarray(page), body, DetParams(limit_side=2400),
                             lambda crop: calls.append(crop) or [])
    assert not calls and len(out) == len(body)


@pytest.mark.slow
def test_a_charts_small_tick_labels_are_read(ppocr_engine):
    """3-pt tick labels set close against a chart's y axis (8 px high at 200 dpi): at the
    detector's page size most of them run into the axis's ticks and are lost (6 of the 14 labels
    read with the second pass off), from the figure detected again at full size all 14 are read."""
    from model_cache.engine import EngineOptions
    from model_cache.ppocr.engine import create_engine

    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", round(3 / 72 * 200))
    except OSError:
        pytest.skip("DejaVu fonts are not installed")
    page, labels = chart_page(font)
    text = ppocr_engine.ocr(page).text
    off = create_engine(EngineOptions(threads=2, extra=(("det_figure_detail", "off"),))).ocr(page).text
    assert "Line 8 of the body text" in text and "Line 8 of the body text" in off
    assert sum(label in text for label in labels) >= len(labels) - 1, text
    assert sum(label in off for label in labels) <= len(labels) // 2, off
