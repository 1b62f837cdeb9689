"""Each line's stroke width, measured in the page's pixels (model_cache/ppocr/strokes.py)."""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from model_cache.layout import LayoutLine
from model_cache.ppocr.strokes import stroke_width, with_strokes

FONTS = "/usr/share/fonts/truetype/dejavu/"
TEXT = "Results of the second experiment"


def rendered(text: str, font: str, size: int, ink: tuple[int, int, int] = (0, 0, 0)) -> tuple[np.ndarray, tuple]:
    """A white page with one line of `text`; (its grey pixels, the line's box x0, y0, x1, y1)."""
    face = ImageFont.truetype(FONTS + font, size)
    image = Image.new("RGB", (40 + 30 * size, 4 * size), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.text((20, size), text, font=face, fill=ink)
    x0, y0, x1, y1 = draw.textbbox((20, size), text, font=face)
    pad = 0.15 * size  # a detector's box stands a little off the ink
    return cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2GRAY), (x0 - pad, y0 - pad, x1 + pad, y1 + pad)


def test_bold_type_measures_much_heavier_than_regular_type_of_the_same_size():
    for size in (24, 33):
        regular = stroke_width(*rendered(TEXT, "DejaVuSerif.ttf", size))
        bold = stroke_width(*rendered(TEXT, "DejaVuSerif-Bold.ttf", size))
        assert bold > 1.4 * regular


def test_the_width_hardly_depends_on_the_words_or_their_colour():
    one = stroke_width(*rendered(TEXT, "DejaVuSerif.ttf", 30))
    other = stroke_width(*rendered("Quick brown foxes jump over lazy dogs", "DejaVuSerif.ttf", 30))
    blue = stroke_width(*rendered(TEXT, "DejaVuSerif.ttf", 30, ink=(20, 40, 200)))
    assert abs(one - other) < 0.15 * one
    assert abs(one - blue) < 0.15 * one


def test_a_box_without_ink_or_off_the_page_has_no_width():
    gray, _ = rendered(TEXT, "DejaVuSerif.ttf", 30)
    assert stroke_width(gray, (0, 0, 15, 15)) is None  # blank paper
    assert stroke_width(gray, (5000, 10, 5100, 40)) is None


def test_every_line_gets_its_width():
    gray, (x0, y0, x1, y1) = rendered(TEXT, "DejaVuSerif-Bold.ttf", 30)
    line = LayoutLine(TEXT, 0.99, [[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    (annotated,) = with_strokes(cv2.cvtColor(gray, cv2.COLOR_GRAY2RGB), [line])
    assert annotated.stroke == stroke_width(gray, (x0, y0, x1, y1))
    assert annotated.text == TEXT and line.stroke is None
