"""Spaces the recogniser emits are kept only where the crop has a gap (model_cache/ppocr/spacing.py)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from model_cache.ppocr.recognition import RecResult
from model_cache.ppocr.spacing import gutter_spaces, ink_columns, longest_blank_run, verify_spaces

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
MONO_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
COLUMNS_PER_STEP = 8  # the recogniser's time step covers 8 columns of a 48-pixel-high crop


def line_crop(text: str, font_path: str = FONT) -> tuple[np.ndarray, list[float]]:
    """A 48-pixel-high crop of `text` and the centre column of each character."""
    try:
        font = ImageFont.truetype(font_path, 30)
    except OSError:
        font = ImageFont.load_default(30)
    width = int(font.getlength(text)) + 16
    image = Image.new("RGB", (width, 48), "white")
    ImageDraw.Draw(image).text((8, 6), text, font=font, fill="black")
    centres = [8 + (font.getlength(text[:i]) + font.getlength(text[:i + 1])) / 2 for i in range(len(text))]
    return np.asarray(image), centres


def recognised(chars: list[str], centres: list[float], width: int) -> RecResult:
    steps = np.array([int(c // COLUMNS_PER_STEP) for c in centres])
    return RecResult("".join(chars).strip(), 0.9, np.ones(len(chars), np.float32), tuple(chars), steps,
                     width // COLUMNS_PER_STEP)


def with_spaces_before(text: str, cuts: set[int], centres: list[float], width: int) -> RecResult:
    """`text` as the recogniser would read it with false spaces before the characters at `cuts`."""
    chars, spots = [], []
    for i, (char, centre) in enumerate(zip(text, centres)):
        if i in cuts:
            chars.append(" ")
            spots.append((centres[i - 1] + centre) / 2)
        chars.append(char)
        spots.append(centre)
    return recognised(chars, spots, width)


def test_space_inside_a_word_is_dropped_and_a_real_one_kept():
    crop, centres = line_crop("Makefile rules")
    chars = list("Makefile rules")
    # the model's mistake: a space read between "fi" and "le" (placed where 'l' begins)
    chars.insert(6, " ")
    centres.insert(6, (centres[5] + centres[6]) / 2)
    result = recognised(chars, centres, crop.shape[1])
    assert result.text == "Makefi le rules"
    assert verify_spaces(result, crop) == "Makefile rules"


def test_every_real_space_survives():
    text = "the quick brown fox, jumps over 12 lazy dogs"
    crop, centres = line_crop(text)
    result = recognised(list(text), centres, crop.shape[1])
    assert verify_spaces(result, crop) == text


def test_light_text_on_dark_ground():
    crop, centres = line_crop("one two")
    inverted = 255 - crop
    chars = list("one two")
    result = recognised(chars, centres, crop.shape[1])
    assert verify_spaces(result, inverted) == "one two"
    assert ink_columns(inverted).sum() == ink_columns(crop).sum()


def test_blank_runs():
    assert longest_blank_run(np.array([True, False, False, True, False])) == 2
    assert longest_blank_run(np.array([True, True])) == 0
    assert longest_blank_run(np.array([False] * 5)) == 5


def test_results_without_positions_are_left_as_they_are():
    result = RecResult("a b", 0.9, np.ones(3, np.float32))
    assert verify_spaces(result, np.zeros((48, 40, 3), np.uint8)) == "a b"


def test_neighbouring_lines_at_the_crop_edge_do_not_fill_a_gap():
    text = "quick brown"
    crop, centres = line_crop(text)
    crop = crop.copy()
    crop[-1, :, :] = 0  # the next line's ascenders caught along the bottom edge
    crop[0, ::3, :] = 0  # and descenders of the line above along the top
    result = recognised(list(text), centres, crop.shape[1])
    assert verify_spaces(result, crop) == text


def test_a_line_whose_spaces_are_all_narrow_keeps_them():
    """A blurred scan narrows every word gap of a line below the absolute threshold; spaces
    that are as wide as the line's other spaces stay, a much narrower one still goes."""
    text = "one two three four"
    crop, centres = line_crop(text)
    crop = crop.copy()
    ink = ink_columns(crop)
    # Fill every word gap but its middle 5 columns (~0.1 of the height: under the absolute minimum).
    for i, char in enumerate(text):
        if char == " ":
            left, right = int(centres[i - 1]), int(centres[i + 1])
            blank = [x for x in range(left, right) if not ink[x]]
            middle = (blank[0] + blank[-1]) // 2
            for x in blank:
                if abs(x - middle) > 2:
                    crop[20:30, x] = 0
    chars = list(text)
    chars.insert(9, " ")  # "thr ee": a space where there is no gap at all
    centres.insert(9, (centres[8] + centres[9]) / 2)
    result = recognised(chars, centres, crop.shape[1])
    assert verify_spaces(result, crop) == text


def test_letter_gaps_of_a_typewriter_font_are_not_spaces():
    """Code font spaces its letters as far apart as the words of running text: the recogniser
    read "build-essential" as "bui ld - es sent ia l" (maint-guide p5). Judged against the
    letters' pitch these gaps go, and the real spaces of the same line stay."""
    text = "apt install build-essential now"
    crop, centres = line_crop(text, MONO_FONT)
    word = text.index("build")
    cuts = {word + k for k in (3, 5, 6, 8, 12, 14)}  # before these letters: "bui|ld|-|es|sent|ia|l"
    result = with_spaces_before(text, cuts, centres, crop.shape[1])
    assert result.text == "apt install bui ld - es sent ia l now"
    assert verify_spaces(result, crop) == text


def test_a_period_in_code_font_is_not_followed_by_a_space():
    text = "5.13 package.links and {pre,post}"
    crop, centres = line_crop(text, MONO_FONT)
    cuts = {text.index("links"), text.index("post")}
    result = with_spaces_before(text, cuts, centres, crop.shape[1])
    assert result.text == "5.13 package. links and {pre, post}"
    assert verify_spaces(result, crop) == text


def test_a_dash_between_words_keeps_both_spaces():
    for text in ("devscripts - this package is useful", "see the page - or the next one"):
        crop, centres = line_crop(text)
        assert verify_spaces(recognised(list(text), centres, crop.shape[1]), crop) == text
        crop, centres = line_crop(text, MONO_FONT)
        assert verify_spaces(recognised(list(text), centres, crop.shape[1]), crop) == text


def _two_columns_read_as_one(gutter: int) -> tuple[np.ndarray, RecResult]:
    """ "17,42" and "\\pearl" a `gutter`-pixel blank apart (two index columns' entries boxed as one
    line), read with no space between them."""
    left, left_centres = line_crop("17,42")
    right, right_centres = line_crop("\\pearl")
    blank = np.full((48, gutter, 3), 255, np.uint8)
    crop = np.concatenate([left[:, :-8], blank, right[:, 8:]], axis=1)
    shift = left.shape[1] - 8 + gutter - 8
    centres = left_centres + [c + shift for c in right_centres]
    return crop, recognised(list("17,42\\pearl"), centres, crop.shape[1])


def test_a_gutter_wide_blank_inside_a_word_becomes_a_space():
    crop, result = _two_columns_read_as_one(gutter=30)
    spaced = gutter_spaces(result, crop)
    assert spaced.text == "17,42 \\pearl"
    assert len(spaced.chars) == len(spaced.steps) == len(spaced.char_probs) == len(result.chars) + 1
    assert list(spaced.steps) == sorted(spaced.steps)


def test_a_word_space_wide_blank_adds_nothing():
    """A blank as wide as a word space that the recogniser did not read as one is left alone:
    only a gutter (half the line height and more) parts the words."""
    crop, result = _two_columns_read_as_one(gutter=12)
    assert gutter_spaces(result, crop) is result
    plain, centres = line_crop("Makefile rules")
    read = recognised(list("Makefile rules"), centres, plain.shape[1])
    assert gutter_spaces(read, plain) is read


def test_no_space_is_added_where_the_threshold_missed_the_text():
    """Grey type over a black rule: the threshold takes the rule for the ink and the letters for
    paper, so every letter gap looks blank; no gap is trusted away from ink."""
    crop, centres = line_crop("content, but the length")
    grey = np.where(crop < 128, 170, 255).astype(np.uint8)
    grey[-5:, :] = 0  # a black rule along the crop's foot, and one down its left edge
    grey[:, :2] = 0
    assert ink_columns(grey).sum() <= 2  # only the left rule is ink to the threshold
    read = recognised(list("content, but the length"), centres, crop.shape[1])
    assert gutter_spaces(read, grey) is read
