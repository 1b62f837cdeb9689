"""Keep a recognised space only where the line image has a gap.

PP-OCRv5's recogniser sometimes emits a space inside a word ("Makefi le", "debhe lper"),
mostly next to narrow letters whose side bearings leave a few blank columns. CTC tells where
each character was read, so every space can be checked against the crop: between the two
characters around it there must be a run of ink-free columns at least `min_gap` of the line
height wide. Letter gaps at 48 pixels high are 1-7 columns; word spaces 8 and more (measured
on the kit's born-digital pages: every space with a gap under 0.15 of the height was wrong).
Blur narrows every gap of a scanned line alike, so a space is only dropped when its gap is also
well under the median gap of the line's other spaces.
"""

from __future__ import annotations

import cv2
import numpy as np

from model_cache.ppocr.recognition import RecResult

MIN_GAP = 0.15  # of the crop height
RELATIVE_GAP = 0.75  # of the median gap of the line's spaces


def ink_columns(crop: np.ndarray) -> np.ndarray:
    """True for every column of the crop (uint8 RGB) that holds ink: two or more dark pixels
    (Otsu threshold) in the middle 80 % of its height, where the neighbouring lines' ascenders
    and descenders that a line crop catches at its edges do not reach."""
    gray = cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY) if crop.ndim == 3 else crop
    _, dark = cv2.threshold(gray, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    if dark.mean() > 0.5:  # light text on a dark ground: ink is the bright part
        dark = 1 - dark
    height = dark.shape[0]
    band = dark[int(0.1 * height):height - int(0.1 * height)]
    return band.sum(axis=0) >= 2


def longest_blank_run(ink: np.ndarray) -> int:
    blank = np.concatenate(([0], (~ink).astype(np.int8), [0]))
    edges = np.flatnonzero(np.diff(blank))
    return int((edges[1::2] - edges[::2]).max()) if len(edges) else 0


def verify_spaces(result: RecResult, crop: np.ndarray, input_width: int | None = None,
                  min_gap: float = MIN_GAP) -> str:
    """The result's text with every space dropped that has no gap under it in the crop.
    `input_width`: the width the recogniser saw (a narrow crop is padded to a minimum)."""
    chars, steps = result.chars, result.steps
    if " " not in chars or result.frames == 0 or len(steps) != len(chars):
        return result.text
    ink = ink_columns(crop)
    column = max(crop.shape[1], input_width or 0) / result.frames
    gaps = {i: _gap(ink, steps, i, column) for i, char in enumerate(chars)
            if char == " " and 0 < i < len(chars) - 1 and chars[i - 1] != " " and chars[i + 1] != " "}
    if not gaps:
        return result.text
    need = min_gap * crop.shape[0]
    # A blurred scan narrows every gap of a line alike: a space is only suspect when it is also
    # much narrower than the line's other spaces.
    typical = float(np.median(list(gaps.values()))) if len(gaps) > 1 else float("inf")
    drop = {i for i, gap in gaps.items() if gap < need and gap < RELATIVE_GAP * typical}
    return "".join(char for i, char in enumerate(chars) if i not in drop).strip()


def _gap(ink: np.ndarray, steps: np.ndarray, i: int, column: float) -> int:
    start = int((steps[i - 1] + 0.5) * column)
    end = int((steps[i + 1] + 0.5) * column)
    return longest_blank_run(ink[start:end])
