"""Keep a recognised space only where the line image has a gap.

PP-OCRv5's recogniser sometimes emits a space inside a word ("Makefi le", "debhe lper"),
mostly next to narrow letters whose side bearings leave a few blank columns. CTC tells where
each character was read, so every space can be checked against the crop: between the two
characters around it there must be a run of ink-free columns at least `min_gap` of the line
height wide. Letter gaps at 48 pixels high are 1-7 columns; word spaces 8 and more (measured
on the kit's born-digital pages: every space with a gap under 0.15 of the height was wrong).
Blur narrows every gap of a scanned line alike, so a space is only dropped when its gap is also
well under the median gap of the line's other spaces.

Typewriter (monospace) fonts space their letters far apart: "build-essential" set in code font
has letter gaps of 0.15-0.2 of the height, as wide as a word space in the running text beside
it, and the recogniser reads "bui ld - es sent ia l". There a space is also judged against the
letters' pitch (their advance, from the CTC time steps) and against the gaps between the
letters around it: in code font a false space is under 0.4 of an advance (0.7 beside a hyphen,
period, comma or slash, which sit narrow in cells of their own: "package. links") and under
1.5x (2x) the letter gaps beside it, while a real space, even one that blur has narrowed to the
same pitch ratio, stands between letters that nearly touch (measured on the kit's maint-guide
pages, clean and simulated scans). The two spaces of a " - " dash go together or not at all.
"""

from __future__ import annotations

import cv2
import numpy as np

from model_cache.ppocr.recognition import RecResult

MIN_GAP = 0.15  # of the crop height
GUTTER_GAP = 0.5  # of the crop height: a blank this wide between two characters parts two words
RELATIVE_GAP = 0.75  # of the median gap of the line's spaces
PITCH_GAP = 0.4  # of the letters' advance around the space
MARK_PITCH_GAP = 0.7  # the same beside a hyphen or other narrow mark, alone in a wide cell
LETTER_GAP = 1.5  # ... and of the widest gap between the letters around it
MARK_LETTER_GAP = 2.0
HYPHENS = frozenset("-‐‑")
NARROW_MARKS = HYPHENS | frozenset(".,:;/")
PITCH_WINDOW = 6  # characters each side of a space that measure the advance


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
                  min_gap: float = MIN_GAP, *, ink: np.ndarray | None = None) -> str:
    """The result's text with every space dropped that has no gap under it in the crop.
    `input_width`: the width the recogniser saw (a narrow crop is padded to a minimum); `ink`:
    the crop's `ink_columns`, where the caller has them already."""
    chars, steps = result.chars, result.steps
    if " " not in chars or result.frames == 0 or len(steps) != len(chars):
        return result.text
    ink = ink_columns(crop) if ink is None else ink
    column = max(crop.shape[1], input_width or 0) / result.frames
    gaps = {i: _blank_between(ink, steps, i - 1, i + 1, column) for i, char in enumerate(chars)
            if char == " " and 0 < i < len(chars) - 1 and chars[i - 1] != " " and chars[i + 1] != " "}
    if not gaps:
        return result.text
    need = min_gap * crop.shape[0]
    # A blurred scan narrows every gap of a line alike: a space is only suspect when it is also
    # much narrower than the line's other spaces.
    typical = float(np.median(list(gaps.values()))) if len(gaps) > 1 else float("inf")
    drop = {i for i, gap in gaps.items() if gap < need and gap < RELATIVE_GAP * typical}
    drop |= _false_in_code_font(chars, steps, ink, column, gaps, typical)
    return "".join(char for i, char in enumerate(chars) if i not in drop).strip()


def gutter_spaces(result: RecResult, crop: np.ndarray, input_width: int | None = None,
                  min_gap: float = GUTTER_GAP, *, ink: np.ndarray | None = None) -> RecResult:
    """The result with a space added between two characters read with none between them that
    stand apart by a blank at least `min_gap` of the line height, wider than any word space:
    the recogniser ran on across a column gutter that the detector boxed into one line
    ("17,42\\pearl ... 34" of two index columns). The layout stage cuts such a line at a word
    gap over the gutter, and needs the gap to be there."""
    chars, steps = result.chars, result.steps
    if len(chars) < 2 or result.frames == 0 or len(steps) != len(chars):
        return result
    column = max(crop.shape[1], input_width or 0) / result.frames
    need = min_gap * crop.shape[0]
    # A blank that wide lies between characters read at least as far apart (a column's slack).
    far = np.flatnonzero(np.diff(steps) * column >= need - 1)
    if not len(far):
        return result
    ink = ink_columns(crop) if ink is None else ink
    at = [int(i) for i in far if chars[i].strip() and chars[i + 1].strip()
          and _inked(ink, steps[i], column) and _inked(ink, steps[i + 1], column)
          and _blank_between(ink, steps, i, i + 1, column) >= need]
    if not at:
        return result
    new_chars, new_steps, new_probs = list(chars), list(steps), list(result.char_probs)
    for i in reversed(at):
        new_chars.insert(i + 1, " ")
        new_steps.insert(i + 1, (int(steps[i]) + int(steps[i + 1])) // 2)
        new_probs.insert(i + 1, min(result.char_probs[i], result.char_probs[i + 1]))
    return RecResult("".join(new_chars).strip(), result.conf, np.asarray(new_probs, dtype=np.float32),
                     tuple(new_chars), np.asarray(new_steps, dtype=np.int64), result.frames)


def _inked(ink: np.ndarray, step: int, column: float) -> bool:
    """Ink within a time step or so of where a character was read: where there is none the
    threshold missed the text (grey type beside a black rule) and its gaps say nothing."""
    centre = (int(step) + 0.5) * column
    return bool(ink[max(0, int(centre - 1.5 * column)):int(centre + 1.5 * column) + 1].any())


def _false_in_code_font(chars: tuple[str, ...], steps: np.ndarray, ink: np.ndarray, column: float,
                        gaps: dict[int, int], typical: float) -> set[int]:
    """The spaces (indices into `chars`) that are letter gaps of a typewriter font."""
    # Against the letters' pitch: a gap too narrow for it goes if it is also not much wider than
    # the gaps between the letters around it (blur narrows a real space after a short word to
    # the same pitch ratio, but then the letters beside it touch) and narrower than the line's
    # spaces that pass (or, where none does, than its typical space).
    narrow = set()
    for i, gap in gaps.items():
        pitch, letters = (MARK_PITCH_GAP, MARK_LETTER_GAP) if _by_mark(chars, i) else (PITCH_GAP, LETTER_GAP)
        if gap < pitch * _advance(chars, steps, i, column) and gap < letters * _letter_gap(ink, chars, steps, i, column):
            narrow.add(i)
    words = [gap for i, gap in gaps.items() if i not in narrow]
    word_gap = float(np.median(words)) if words else typical
    false = {i for i in narrow if gaps[i] < word_gap}
    for i in [i for i in false if _by_mark(chars, i, HYPHENS)]:
        partner = i + 2 if chars[i + 1] in HYPHENS else i - 2  # " - ": a dash, unless both spaces are false
        if partner in gaps and partner not in false:
            false.discard(i)
    return false


def _blank_between(ink: np.ndarray, steps: np.ndarray, left: int, right: int, column: float) -> int:
    """Widest ink-free run between the time steps of characters `left` and `right`."""
    return longest_blank_run(ink[int((steps[left] + 0.5) * column):int((steps[right] + 0.5) * column)])


def _by_mark(chars: tuple[str, ...], i: int, marks: frozenset[str] = NARROW_MARKS) -> bool:
    return chars[i - 1] in marks or chars[i + 1] in marks


def _letter_gap(ink: np.ndarray, chars: tuple[str, ...], steps: np.ndarray, i: int, column: float) -> int:
    """Widest blank run between two neighbouring letters (no space between them) near `i`."""
    widest = 0
    for j in range(max(0, i - 4), min(len(chars) - 1, i + 4)):
        if chars[j] != " " and chars[j + 1] != " ":
            widest = max(widest, _blank_between(ink, steps, j, j + 1, column))
    return widest


def _advance(chars: tuple[str, ...], steps: np.ndarray, i: int, column: float) -> float:
    """Mean advance (columns per character) of the letters around the space at `i`."""
    around = [j for j in range(max(0, i - PITCH_WINDOW), min(len(chars), i + PITCH_WINDOW + 1))
              if chars[j] != " "]
    if len(around) < 3:
        return 0.0
    return float(steps[around[-1]] - steps[around[0]]) * column / (len(around) - 1)
