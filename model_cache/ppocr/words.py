"""Word boxes for a recognised PP-OCR line, from the CTC time steps.

The recogniser reads a rectified crop of the line's quadrilateral and emits each character at
one time step (`RecResult.steps`, `frames` steps across the width the net saw). A word is a
run of characters between two recognised spaces that survived `verify_spaces`; its columns
run from the ink left of its first character to the ink right of its last, searched between
the spaces around it. The crop columns are mapped back onto the page through the inverse of
the perspective warp that made the crop, so skewed, vertical and upside-down lines keep word
boxes on their text. A word box's first point is the top-left corner of the word as read.
"""

from __future__ import annotations

import cv2
import numpy as np

from model_cache.ppocr.crops import stands_upright
from model_cache.ppocr.recognition import RecResult
from model_cache.ppocr.spacing import ink_columns
from outputs.model import Line, Word

STRAY_GAP = 0.5  # crop heights (~0.6 em): wider than a word space, as wide as a column gutter


def recognised_line(result: RecResult, quad: np.ndarray, crop: np.ndarray, input_width: int,
                    vertical_ratio: float, flipped: bool = False, *, ink: np.ndarray | None = None) -> Line:
    """The Line for `result`, read from `crop` (the rectified quad, turned 180 degrees when
    `flipped`); `input_width`: the width the recogniser saw (a narrow crop is padded);
    `vertical_ratio`: the h/w at which the crop was taken as vertical text (RecParams);
    `ink`: the crop's `ink_columns`, where the caller has them already."""
    box = quad.tolist()
    words = _words(result, _reading_quad(quad, vertical_ratio, flipped), crop, input_width, ink)
    return Line(result.text, result.conf, box, words)


def _reading_quad(quad: np.ndarray, vertical_ratio: float, flipped: bool) -> np.ndarray:
    """The quad's corners in the order rectify() warped them to the crop's corners."""
    src = quad[[1, 2, 3, 0]] if stands_upright(quad, vertical_ratio) else quad
    return src[[2, 3, 0, 1]] if flipped else src


def _words(result: RecResult, src: np.ndarray, crop: np.ndarray, input_width: int,
           ink: np.ndarray | None) -> list[Word] | None:
    chars, steps = result.chars, result.steps
    if result.frames <= 0 or not (len(chars) == len(steps) == len(result.char_probs)):
        return None
    kept = _kept(chars, result.text)
    if kept is None:
        return None
    height, width = crop.shape[:2]
    column = max(width, input_width) / result.frames
    ink = ink_columns(crop) if ink is None else ink
    to_page = _crop_to_page(src, width, height)
    spans = _word_spans(chars, kept)
    words = []
    for k, (first, last) in enumerate(spans):
        at = [(float(steps[i]) + 0.5) * column for i in (first, last)]
        left = _gap(ink, (float(steps[spans[k - 1][1]]) + 0.5) * column, at[0])[1] if k \
            else _past_stray_ink(ink, 0.0, at[0], height)
        right = _gap(ink, at[1], (float(steps[spans[k + 1][0]]) + 0.5) * column)[0] \
            if k + 1 < len(spans) else _past_stray_ink(ink, float(width), at[1], height)
        x0, x1 = _ink_extent(ink, left, right, steps[first], steps[last], column)
        corners = to_page(np.array([[x0, 0], [x1, 0], [x1, height], [x0, height]], dtype=np.float64))
        letters = [i for i in range(first, last + 1) if kept[i]]  # a dropped space is not in it
        text = "".join(chars[i] for i in letters)
        conf = float(np.mean(result.char_probs[letters]))
        words.append(Word(text, conf, [[float(x), float(y)] for x, y in corners]))
    if " ".join(w.text for w in words) != " ".join(result.text.split()):
        return None
    return words


def _kept(chars: tuple[str, ...], text: str) -> list[bool] | None:
    """Which emitted characters are in `text` (the stripped text, some spaces dropped)."""
    kept, pos = [], 0
    for char in chars:
        if char and text.startswith(char, pos):
            kept.append(True)
            pos += len(char)
        elif not char.strip():
            kept.append(False)
        else:
            return None
    return kept if pos == len(text) else None


def _word_spans(chars: tuple[str, ...], kept: list[bool]) -> list[tuple[int, int]]:
    spans, start = [], None
    for i, char in enumerate(chars):
        letter = kept[i] and bool(char.strip())
        if letter and start is None:
            start = i
        elif kept[i] and not char.strip() and start is not None:
            spans.append((start, _last_letter(chars, kept, start, i)))
            start = None
    if start is not None:
        spans.append((start, _last_letter(chars, kept, start, len(chars))))
    return spans


def _last_letter(chars: tuple[str, ...], kept: list[bool], start: int, end: int) -> int:
    return max(i for i in range(start, end) if kept[i] and chars[i].strip())


def _gap(ink: np.ndarray, start: float, end: float) -> tuple[float, float]:
    """The widest ink-free run of columns between two characters' columns (the space
    between two words); its middle when the words touch."""
    lo, hi = max(0, int(start)), min(len(ink), int(np.ceil(end)))
    blank = np.concatenate(([0], (~ink[lo:hi]).astype(np.int8), [0])) if hi > lo else np.zeros(2, np.int8)
    edges = np.flatnonzero(np.diff(blank))
    if not len(edges):
        middle = (start + end) / 2
        return middle, middle
    widest = int(np.argmax(edges[1::2] - edges[::2]))
    return float(lo + edges[2 * widest]), float(lo + edges[2 * widest + 1])


def _past_stray_ink(ink: np.ndarray, edge: float, char: float, height: int) -> float:
    """Where the line's first (last) word may start (end), looking from the crop's `edge` to
    its first (last) character's column `char`: past a blank at least STRAY_GAP line heights
    wide, if one stands there. A detector pads its box, so in a tight index or table the crop
    catches the end of the next column's word; no character was read from that ink."""
    lo, hi = sorted((edge, char))
    a, b = _gap(ink, lo, hi)
    if b - a < STRAY_GAP * height:
        return edge
    return b if edge < char else a


def _ink_extent(ink: np.ndarray, left: float, right: float, first_step: int, last_step: int,
                column: float) -> tuple[float, float]:
    lo, hi = max(0, int(left)), min(len(ink), int(np.ceil(right)))
    inked = np.flatnonzero(ink[lo:hi]) if hi > lo else np.zeros(0, np.int64)
    if len(inked):
        return float(lo + inked[0]), float(lo + inked[-1] + 1)
    # No ink found (a faint or light-on-dark word): the characters' own time steps, padded.
    return max(0.0, first_step * column), min(float(len(ink)), (last_step + 1) * column)


def _crop_to_page(src: np.ndarray, width: int, height: int):
    """Map crop pixels back through the warp rectify() made from `src` to the crop."""
    dst = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    inverse = cv2.getPerspectiveTransform(dst, src.astype(np.float32))

    def to_page(points: np.ndarray) -> np.ndarray:
        return cv2.perspectiveTransform(points.reshape(-1, 1, 2), inverse).reshape(-1, 2)

    return to_page
