"""Bullets the detector misses are found left of their line and named by shape (model_cache/ppocr/bullets.py)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from model_cache.layout import from_line
from model_cache.ppocr.bullets import DISC, SQUARE, TRIANGLE, classify, with_bullets
from outputs.model import Line

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def glyph_mask(char: str, size: int) -> np.ndarray:
    font = ImageFont.truetype(FONT, size)
    image = Image.new("L", (size * 3, size * 3), 255)
    ImageDraw.Draw(image).text((size, size), char, font=font, fill=0)
    ink = np.asarray(image) < 128
    ys, xs = np.nonzero(ink)
    return ink[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


@pytest.mark.parametrize("size", [16, 28])
def test_bullet_shapes_are_named(size):
    assert classify(glyph_mask("▶", size)) == TRIANGLE
    assert classify(glyph_mask("•", size)) == DISC
    assert classify(glyph_mask("●", size)) == DISC
    assert classify(glyph_mask("■", size)) == SQUARE


@pytest.mark.parametrize("char", list("DEFLPRbpdoaeIl-–>*◆"))
def test_letters_and_other_marks_are_not_bullets(char):
    for size in (16, 28):
        assert classify(glyph_mask(char, size)) is None


def page_with_item(bullet: str | None, words_left: str = "", box_left: float = 134.0) -> tuple[np.ndarray, Line]:
    """A white strip with `bullet` (drawn as a glyph at x=95) left of a text line starting at
    x=140, whose box (from `box_left`) is returned as the recognised line."""
    font = ImageFont.truetype(FONT, 20)
    image = Image.new("RGB", (600, 60), "white")
    draw = ImageDraw.Draw(image)
    if words_left:
        draw.text((128 - font.getlength(words_left), 18), words_left, font=font, fill="black")
    if bullet:
        draw.text((95, 18), bullet, font=font, fill="black")
    draw.text((140, 18), "first item of the list", font=font, fill="black")
    right = 140 + font.getlength("first item of the list")
    box = [[box_left, 14.0], [right + 6, 14.0], [right + 6, 46.0], [box_left, 46.0]]
    return np.asarray(image), from_line(Line("first item of the list", 0.95, box))


@pytest.mark.parametrize("bullet,name", [("▶", TRIANGLE), ("•", DISC), ("■", SQUARE)])
def test_a_bullet_left_of_a_line_leads_its_text(bullet, name):
    rgb, line = page_with_item(bullet)
    (found,) = with_bullets(rgb, [line])
    assert (found.bullet, found.text) == (name, "first item of the list")
    x0 = min(x for x, _ in found.box)
    assert 90 <= x0 < 134  # the box now takes in the bullet, drawn at x=95
    assert found.box[1:3] == line.box[1:3]


def test_no_bullet_where_there_is_none():
    rgb, line = page_with_item(None)
    assert with_bullets(rgb, [line]) == [line]


def test_text_to_the_left_is_not_a_bullet():
    """Words of another column (several marks) are not taken for a bullet, nor is a letter."""
    rgb, line = page_with_item(None, words_left="p. 4")
    assert with_bullets(rgb, [line]) == [line]
    rgb, line = page_with_item("D")
    assert with_bullets(rgb, [line]) == [line]


def test_a_box_that_starts_inside_its_bullet():
    """The detector's box may take in part of the bullet (not enough for the recogniser to read
    it); the bullet is still found, and the line's narrow first letters are not taken for one."""
    rgb, line = page_with_item("▶", box_left=100.0)
    assert [b.output_text for b in with_bullets(rgb, [line])] == [f"{TRIANGLE} first item of the list"]


def test_a_line_that_already_starts_with_its_bullet_gets_no_second_one():
    rgb, line = page_with_item("•")
    line = from_line(Line("• first item of the list", line.conf, line.box))
    assert with_bullets(rgb, [line]) == [line]
