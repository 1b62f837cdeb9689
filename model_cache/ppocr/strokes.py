"""How heavy each line's type is: the mean width of its strokes, from the page's pixels.

A bold heading set at the body's size (LaTeX's subsections in many classes, a manual's numbered
sections, DocBook's run of bold titles) has a box no taller than a line of body text; what
sets it apart is its weight. For a glyph drawn with strokes of width w and total length L the
ink covers w*L pixels and its edge is about 2*L pixels long, so twice the ink's area over the
length of its edge is the stroke width, whatever the letters. The layout stage's kinds compare
each line's width with the body text's on the same page (`model_cache/layout/kinds.py`).
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from model_cache.layout.lines import LayoutLine, line_bounds

MIN_CONTRAST = 60  # grey levels between paper and ink; less is no text to measure


def stroke_width(gray: np.ndarray, box: tuple[float, float, float, float]) -> float | None:
    """Twice the ink's area over its edge's length inside `box` (x0, y0, x1, y1) of the grey
    page, in pixels; None where the box is empty or holds no contrast. Ink is darker than the
    midpoint between the box's lightest and darkest grey, so coloured type counts as well."""
    x0, y0, x1, y1 = box
    xs, xe = max(0, int(x0)), min(gray.shape[1], int(np.ceil(x1)))
    ys, ye = max(0, int(y0)), min(gray.shape[0], int(np.ceil(y1)))
    if xe - xs < 2 or ye - ys < 2:
        return None
    band = gray[ys:ye, xs:xe]
    lo, hi = int(band.min()), int(band.max())
    if hi - lo < MIN_CONTRAST:
        return None
    ink = band < (lo + hi) / 2
    edge = np.count_nonzero(ink[1:] != ink[:-1]) + np.count_nonzero(ink[:, 1:] != ink[:, :-1])
    return 2.0 * np.count_nonzero(ink) / edge if edge else None


def with_strokes(rgb: np.ndarray, lines: list[LayoutLine]) -> list[LayoutLine]:
    """`lines`, each annotated with its stroke width where it can be measured."""
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    return [replace(line, stroke=stroke_width(gray, line_bounds(line))) for line in lines]
