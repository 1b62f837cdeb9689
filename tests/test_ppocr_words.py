"""Word boxes from CTC time steps (model_cache/ppocr/words.py), on synthetic crops and quads."""

from __future__ import annotations

import numpy as np
import pytest

from model_cache.ppocr.crops import rectify
from model_cache.ppocr.recognition import RecParams, RecResult
from model_cache.ppocr.words import recognised_line

COLUMN = 8  # crop columns per CTC time step in these synthetic results


def _crop_with_words(spans: list[tuple[int, int]], width: int = 400, height: int = 48) -> np.ndarray:
    crop = np.full((height, width, 3), 255, np.uint8)
    for x0, x1 in spans:
        crop[8:40, x0:x1] = 0
    return crop


def _result(text_chars: list[tuple[str, int]], kept_text: str | None = None) -> RecResult:
    chars = tuple(c for c, _ in text_chars)
    steps = np.array([s for _, s in text_chars], np.int64)
    probs = np.linspace(0.8, 0.99, len(chars)).astype(np.float32)
    text = kept_text if kept_text is not None else "".join(chars).strip()
    return RecResult(text, float(probs.mean()), probs, chars, steps, 400 // COLUMN)


def _chars(word_spans: list[tuple[str, int, int]]) -> list[tuple[str, int]]:
    """Characters spread over their word's columns, a space in the middle of each gap."""
    out: list[tuple[str, int]] = []
    for k, (word, x0, x1) in enumerate(word_spans):
        if k:
            gap = (word_spans[k - 1][2] + x0) // 2
            out.append((" ", gap // COLUMN))
        for i, char in enumerate(word):
            out.append((char, int((x0 + (i + 0.5) * (x1 - x0) / len(word)) // COLUMN)))
    return out


AXIS_QUAD = np.array([[100, 50], [500, 50], [500, 98], [100, 98]], np.float32)  # 400 x 48, scale 1


def test_words_follow_the_ink_between_spaces():
    spans = [("This", 10, 80), ("is", 110, 140), ("a", 170, 185), ("test.", 220, 330)]
    crop = _crop_with_words([(x0, x1) for _, x0, x1 in spans])
    line = recognised_line(_result(_chars(spans)), AXIS_QUAD, crop, 400, RecParams.vertical_ratio)
    assert [w.text for w in line.words] == ["This", "is", "a", "test."]
    for word, (_, x0, x1) in zip(line.words, spans):
        xs = [p[0] for p in word.box]
        ys = [p[1] for p in word.box]
        assert min(xs) == pytest.approx(100 + x0, abs=1) and max(xs) == pytest.approx(100 + x1, abs=1)
        assert min(ys) == pytest.approx(50, abs=0.5) and max(ys) == pytest.approx(98, abs=0.5)
    assert 0.8 <= min(w.conf for w in line.words) <= max(w.conf for w in line.words) <= 0.99


def test_a_dropped_space_joins_two_words():
    spans = [("Make", 10, 60), ("file", 66, 110), ("rules", 150, 230)]
    crop = _crop_with_words([(x0, x1) for _, x0, x1 in spans])
    result = _result(_chars(spans), kept_text="Makefile rules")  # verify_spaces dropped one
    line = recognised_line(result, AXIS_QUAD, crop, 400, RecParams.vertical_ratio)
    assert [w.text for w in line.words] == ["Makefile", "rules"]
    assert min(p[0] for p in line.words[0].box) == pytest.approx(110, abs=1)
    assert max(p[0] for p in line.words[0].box) == pytest.approx(210, abs=1)


def test_text_that_does_not_match_the_characters_gives_no_words():
    spans = [("abc", 10, 60)]
    crop = _crop_with_words([(10, 60)])
    line = recognised_line(_result(_chars(spans), kept_text="xyz"), AXIS_QUAD, crop, 400, 1.5)
    assert line.words is None and line.text == "xyz"


def test_a_sliver_of_the_next_columns_ink_at_the_crop_edges_is_no_part_of_a_word():
    # A detector's padded box catches the end of the word left of it and the start of the
    # word right of it (a tight index); the recogniser read neither.
    spans = [("\\thepage", 40, 200), ("108", 320, 370)]
    crop = _crop_with_words([(0, 3)] + [(x0, x1) for _, x0, x1 in spans] + [(396, 400)])
    line = recognised_line(_result(_chars(spans)), AXIS_QUAD, crop, 400, RecParams.vertical_ratio)
    assert min(p[0] for p in line.words[0].box) == pytest.approx(140, abs=1)
    assert max(p[0] for p in line.words[-1].box) == pytest.approx(470, abs=1)


def test_ink_a_word_space_before_the_first_character_stays_in_the_word():
    # An opening quote or a bullet the recogniser merged: the blank is narrower than a gutter.
    spans = [("word", 30, 100)]
    crop = _crop_with_words([(12, 18), (30, 100)])
    line = recognised_line(_result(_chars(spans)), AXIS_QUAD, crop, 400, RecParams.vertical_ratio)
    assert min(p[0] for p in line.words[0].box) == pytest.approx(112, abs=1)


def _page_with_marks(quad: np.ndarray, marks: list[tuple[float, float]], size=(700, 500)) -> np.ndarray:
    """A white page with black bars drawn at fractions (t0, t1) of the way along the quad."""
    import cv2

    page = np.full((size[1], size[0], 3), 255, np.uint8)
    top, bottom = (quad[0], quad[1]), (quad[3], quad[2])
    def at(edge, t):
        return edge[0] + (edge[1] - edge[0]) * t

    for t0, t1 in marks:
        a0, a1, b0, b1 = at(top, t0), at(top, t1), at(bottom, t0), at(bottom, t1)
        poly = np.array([a0 + (b0 - a0) * 0.2, a1 + (b1 - a1) * 0.2, a1 + (b1 - a1) * 0.8,
                         a0 + (b0 - a0) * 0.8], np.int32)
        cv2.fillPoly(page, [poly], (0, 0, 0))
    return page


@pytest.mark.parametrize("quad", [
    np.array([[100, 100], [520, 130], [517, 178], [97, 148]], np.float32),  # skewed 4 degrees
    np.array([[300, 40], [348, 40], [348, 460], [300, 460]], np.float32),  # vertical text
])
@pytest.mark.parametrize("flipped", [False, True])
def test_word_boxes_land_on_the_page_through_the_quad(quad, flipped):
    params = RecParams()
    marks = [(0.05, 0.3), (0.45, 0.6), (0.7, 0.95)]
    vertical = (quad[3] - quad[0])[1] > (quad[1] - quad[0])[0]
    reading = quad[[1, 2, 3, 0]] if vertical else quad  # rectify reads vertical text top down
    page = _page_with_marks(reading, marks)
    crop = rectify(page, quad, params)
    if flipped:
        crop = np.ascontiguousarray(crop[::-1, ::-1])
        marks = [(1 - t1, 1 - t0) for t0, t1 in reversed(marks)]
    width = crop.shape[1]
    spans = [(w, int(t0 * width), int(t1 * width)) for w, (t0, t1) in zip(("one", "two", "three"), marks)]
    result = RecResult("one two three", 0.9, np.full(13, 0.9, np.float32), tuple(_join(spans)),
                       np.array(_steps(spans, width), np.int64), width // COLUMN)
    line = recognised_line(result, quad, crop, width, params.vertical_ratio, flipped)
    assert [w.text for w in line.words] == ["one", "two", "three"]
    if flipped:
        reading = reading[[2, 3, 0, 1]]
    for word, (t0, t1) in zip(line.words, marks):
        start = reading[0] + (reading[1] - reading[0]) * t0  # along the reading top edge
        end = reading[0] + (reading[1] - reading[0]) * t1
        assert np.hypot(*(np.array(word.box[0]) - start)) < 6
        assert np.hypot(*(np.array(word.box[1]) - end)) < 6


def _join(spans):
    out = []
    for k, (word, _, _) in enumerate(spans):
        if k:
            out.append(" ")
        out.extend(word)
    return out


def _steps(spans, width):
    out = []
    for k, (word, x0, x1) in enumerate(spans):
        if k:
            out.append(((spans[k - 1][2] + x0) // 2) // COLUMN)
        out.extend(int((x0 + (i + 0.5) * (x1 - x0) / len(word)) // COLUMN) for i in range(len(word)))
    return out
