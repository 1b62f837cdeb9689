"""Blank-page check: a page without ink is never sent to the model (vision-language OCR models
are known to invent text for empty pages); it gets an empty record marked "blank_page"."""

from __future__ import annotations

import numpy as np
from PIL import Image

INK_CONTRAST = 64  # grey levels from the page's background for a pixel to count as ink
MAX_INK_FRACTION = 1e-5  # ~40 pixels of an A4 page at 200 dpi: a speck of dust, not a digit


def is_blank(image: Image.Image) -> bool:
    gray = np.asarray(image.convert("L"))
    if gray.size == 0:
        return True
    histogram = np.bincount(gray.ravel(), minlength=256)
    background = int(np.searchsorted(np.cumsum(histogram), gray.size / 2))  # the median level
    levels = np.arange(256)
    ink = histogram[np.abs(levels - background) > INK_CONTRAST].sum()
    return ink <= MAX_INK_FRACTION * gray.size
