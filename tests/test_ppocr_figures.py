"""Figures are found from the ink left once the text is erased (model_cache/ppocr/figures.py)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from model_cache.layout import LayoutLine
from model_cache.ppocr.figures import figure_regions, non_text


def _line(text: str, x0: int, y0: int, x1: int, h: int = 30) -> LayoutLine:
    return LayoutLine(text, 0.99, [[x0, y0], [x1, y0], [x1, y0 + h], [x0, y0 + h]])


def _page(draw_extra) -> tuple[np.ndarray, list[LayoutLine]]:
    image = Image.new("RGB", (1600, 1400), "white")
    draw = ImageDraw.Draw(image)
    lines = []
    for k in range(6):  # text lines: solid bars where the words would be
        y = 100 + 40 * k
        draw.rectangle([150, y + 6, 1450, y + 24], fill="black")
        lines.append(_line(f"line {k}", 145, y, 1455))
    lines += draw_extra(draw)
    return np.asarray(image), lines


def _chart(draw) -> list[LayoutLine]:
    draw.line([(300, 500), (300, 1000), (1200, 1000)], fill="black", width=3)  # axes
    xs = np.linspace(300, 1200, 60)
    draw.line(list(zip(xs, 1000 - 400 * np.abs(np.sin(xs / 150)))), fill="black", width=3)
    draw.rectangle([700, 1020, 800, 1040], fill="black")  # an axis label's ink
    return [_line("time", 695, 1015, 805)]


def test_a_chart_is_a_figure_that_takes_in_its_labels():
    rgb, lines = _page(_chart)
    (x0, y0, x1, y1), = figure_regions(rgb, lines)
    assert x0 <= 300 and x1 >= 1200 and y0 <= 500 and y1 >= 1040


def test_a_frame_or_a_shaded_box_around_text_is_not_a_figure():
    def framed(draw) -> list[LayoutLine]:
        draw.rectangle([140, 600, 1460, 900], outline="black", width=3)
        draw.rectangle([160, 950, 1440, 1300], fill=(90, 90, 90))
        out = []
        for k in range(5):
            y = 620 + 50 * k
            draw.rectangle([180, y + 6, 1400, y + 24], fill="black")
            out.append(_line(f"boxed {k}", 175, y, 1405))
            y = 970 + 60 * k
            draw.rectangle([180, y + 6, 1400, y + 24], fill="white")
            out.append(_line(f"shaded {k}", 175, y, 1405))
        return out
    rgb, lines = _page(framed)
    assert figure_regions(rgb, lines) == []


def test_a_short_frame_with_text_on_its_left_only_is_not_a_figure():
    """A framed three-line listing, its code in the left half: the empty right half of the frame
    is no drawing (its top and bottom borders are not ink inside it). The code's boxes reach
    the borders, so the frame's left half is erased with the text, as on a scanned page."""
    def listing(draw) -> list[LayoutLine]:
        draw.rectangle([476, 684, 1476, 796], outline="black", width=3)
        out = []
        for k in range(3):
            y = 682 + 39 * k
            draw.rectangle([486, y + 8, 920, y + 30], fill="black")
            out.append(_line(f"code {k}", 482, y, 923, 40))
        return out
    rgb, lines = _page(listing)
    assert figure_regions(rgb, lines) == []


def test_a_ruled_table_is_not_a_figure():
    def ruled(draw) -> list[LayoutLine]:
        out = []
        for r in range(8):
            y = 600 + 50 * r
            draw.line([(300, y), (1300, y)], fill="black", width=2)
            for c in range(4):
                x = 320 + 250 * c
                draw.rectangle([x, y + 14, x + 200, y + 36], fill="black")
                out.append(_line(f"cell {r}{c}", x - 5, y + 10, x + 205))
        for c in range(5):
            draw.line([(300 + 250 * c, 600), (300 + 250 * c, 1000)], fill="black", width=2)
        return out
    rgb, lines = _page(ruled)
    assert figure_regions(rgb, lines) == []


def test_rules_are_found_between_rows_and_not_in_the_text():
    def booktabs(draw) -> list[LayoutLine]:
        draw.line([(150, 600), (1450, 600)], fill="black", width=2)  # top rule
        draw.line([(150, 660), (1450, 660)], fill="black", width=1)  # under the header row
        draw.line([(150, 800), (1450, 800)], fill="black", width=2)  # bottom rule
        return [_line("head", 150, 620, 400), _line("body", 150, 680, 400)]
    rgb, lines = _page(booktabs)  # the page's six text lines are solid bars: long runs of ink
    _, rules = non_text(rgb, lines)
    assert [round((y0 + y1) / 2) for _, y0, _, y1 in sorted(rules, key=lambda r: r[1])] == [602, 662, 802]
    assert all(y1 - y0 <= 12 for _, y0, _, y1 in rules)  # to the 4 px it works in, a pixel grown
    assert all(x0 <= 152 and x1 >= 1448 for x0, _, x1, _ in rules)


def test_a_rule_two_degrees_off_level_is_still_one_rule():
    def skewed(draw) -> list[LayoutLine]:
        draw.line([(150, 600), (1450, 600 + 45)], fill="black", width=2)  # ~2 degrees
        return []
    rgb, lines = _page(skewed)
    _, rules = non_text(rgb, lines)
    assert len(rules) == 1 and rules[0][0] <= 160 and rules[0][2] >= 1440


def test_vertical_rules_are_found_too():
    def grid(draw) -> list[LayoutLine]:
        draw.line([(700, 500), (700, 900)], fill="black", width=2)
        return []
    rgb, lines = _page(grid)
    _, rules = non_text(rgb, lines)
    (x0, y0, x1, y1), = rules
    assert y1 - y0 > x1 - x0 and y0 <= 504 and y1 >= 896 and x0 <= 700 <= x1


def test_the_shrunk_ink_keeps_every_inked_block():
    """The page's ink is shrunk by taking each scale x scale block's maximum, so a one-pixel
    stroke survives; OpenCV does it (a dilation sampled every `scale` pixels), checked here
    against the plain block maximum on random pages of odd sizes."""
    from model_cache.ppocr.figures import FigureParams, _ink_beside_text

    s = FigureParams().scale
    rng = np.random.default_rng(0)
    line = LayoutLine("x", 1.0, [[0, 0], [4, 0], [4, 4], [0, 4]])
    for shape in ((203, 157), (64, 64), (9, 7)):
        for density in (0.002, 0.3):
            gray = np.where(rng.random(shape) < density, 0, 255).astype(np.uint8)
            ink, _, _ = _ink_beside_text(np.stack([gray] * 3, axis=2), [line], FigureParams())
            rows, cols = shape[0] // s, shape[1] // s
            blocks = (gray[:rows * s, :cols * s] < 128).reshape(rows, s, cols, s).max(axis=(1, 3))
            assert np.array_equal(ink, blocks.astype(np.uint8))


def _dark_chart(draw, x0: int, y0: int) -> None:
    """A plot on a dark ground, the area under its curve light."""
    draw.rectangle([x0, y0, x0 + 600, y0 + 170], fill=(30, 30, 30))
    xs = np.linspace(x0 + 20, x0 + 580, 80)
    curve = list(zip(xs, y0 + 90 - 60 * np.sin(xs / 25)))
    draw.polygon(curve + [(x0 + 580, y0 + 160), (x0 + 20, y0 + 160)], fill=(235, 235, 235))  # the area under it


def test_charts_down_a_ruled_column_are_figures_of_their_own():
    """hvfloat's two-column page: charts down the right column, a \\columnseprule just left of
    them. Joined through the rule they were one region over the captions between them; the
    rule is the page's, not theirs."""
    def column(draw) -> list[LayoutLine]:
        draw.line([(820, 330), (820, 1380)], fill="black", width=3)
        out = []
        for k, y in enumerate((380, 800, 1180)):
            _dark_chart(draw, 836, y)
            draw.rectangle([900, y + 190, 1300, y + 210], fill="black")
            out.append(_line(f"({'abc'[k]}) A caption", 895, y + 185, 1305))
        return out
    rgb, lines = _page(column)
    regions = figure_regions(rgb, lines)
    assert len(regions) == 3
    for (x0, y0, x1, y1), top in zip(regions, (380, 800, 1180)):
        assert x0 <= 836 and x1 >= 1436 and y0 <= top and top + 170 <= y1 < top + 240


def test_a_chart_keeps_its_own_frame():
    """The long rules round a framed chart are its own (no longer than the drawing): the region
    still takes them and the labels just outside."""
    def framed(draw) -> list[LayoutLine]:
        draw.rectangle([300, 500, 1300, 1100], outline="black", width=3)
        xs = np.linspace(320, 1280, 60)
        draw.line(list(zip(xs, 800 - 200 * np.sin(xs / 120))), fill="black", width=3)
        draw.rectangle([700, 1120, 800, 1140], fill="black")
        return [_line("time", 695, 1115, 805)]
    rgb, lines = _page(framed)
    (x0, y0, x1, y1), = figure_regions(rgb, lines)
    assert x0 <= 300 and x1 >= 1300 and y0 <= 500 and y1 >= 1140
