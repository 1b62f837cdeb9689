"""A page's skew measured from the ink inside its text lines (model_cache/ppocr/skew.py)."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from model_cache.layout import LayoutLine
from model_cache.layout.geometry import page_skew
from model_cache.ppocr.skew import ink_skew, text_skew

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
W, H = 1654, 2339


def _index_page(degrees: float, *, boxes_degrees: float | None = None,
                level: bool = True) -> tuple[np.ndarray, list[LayoutLine]]:
    """Three columns of short index entries, the page turned `degrees` counterclockwise (as a
    scanner's skew turns it); each line's box is level, as a detector's box of a short line
    snaps to level, around where the line's ink went (`boxes_degrees`: where it would have
    gone at that angle instead); with `level` False the boxes are turned with the text."""
    font = ImageFont.truetype(FONT, 22)
    image = Image.new("L", (W, H), 255)
    draw = ImageDraw.Draw(image)
    spots = []
    for col, x in enumerate((150, 650, 1150)):
        for row in range(45):
            y = 200 + 42 * row
            text = f"\\entry{col}{row} . . . . {row + 3}"
            draw.text((x, y), text, fill=0, font=font)
            x0, y0, x1, y1 = draw.textbbox((x, y), text, font=font)
            spots.append((text, x0 - 4, y0 - 4, x1 + 4, y1 + 4))
    turned = np.asarray(image.rotate(degrees, center=(W / 2, H / 2), fillcolor=255))
    angle = math.radians(degrees if boxes_degrees is None else boxes_degrees)
    lines = []
    for text, x0, y0, x1, y1 in spots:
        corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64) - [W / 2, H / 2]
        c, s = math.cos(angle), math.sin(angle)  # a counterclockwise turn on the screen, y down
        moved = corners @ np.array([[c, -s], [s, c]]) + [W / 2, H / 2]
        lo, hi = moved.min(0), moved.max(0)
        box = [[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]] if level else moved.tolist()
        lines.append(LayoutLine(text, 0.99, box))
    return np.stack([turned] * 3, axis=-1), lines


def test_the_ink_tells_the_skew_of_a_page_whose_boxes_are_all_level():
    rgb, lines = _index_page(0.8)
    assert page_skew(lines) == 0.0  # the boxes cannot tell
    assert abs(math.degrees(text_skew(rgb, lines)) - (-0.8)) < 0.03  # baselines rise to the right: y falls


def test_a_level_page_measures_exactly_level():
    rgb, lines = _index_page(0.0)
    assert text_skew(rgb, lines) == 0.0


def test_where_the_ink_agrees_with_the_boxes_their_angle_stands():
    """Boxes turned with their text (a long line's box is): an ink angle within 0.2 degrees of
    theirs changes nothing, so a page the boxes already read right is laid out as before."""
    rgb, lines = _index_page(0.8, boxes_degrees=0.9, level=False)
    assert abs(math.degrees(page_skew(lines)) - (-0.9)) < 0.01
    assert abs(math.degrees(ink_skew(rgb, lines)) - (-0.8)) < 0.05
    assert text_skew(rgb, lines) == page_skew(lines)


def test_ink_far_from_the_boxes_angle_is_not_trusted():
    """Ink lining up three degrees off the boxes' own angle is not running text's skew (a slanted
    label, a formula): the stage keeps the boxes' angle."""
    rgb, lines = _index_page(3.0, boxes_degrees=0.0)
    assert abs(math.degrees(ink_skew(rgb, lines)) - (-3.0)) < 0.05
    assert text_skew(rgb, lines) is None


def test_too_little_ink_says_nothing():
    rgb = np.full((400, 400, 3), 255, np.uint8)
    assert text_skew(rgb, [LayoutLine("x", 0.9, [[10, 10], [30, 10], [30, 40], [10, 40]])]) is None
