"""Stray ideographs read from drawings on Latin pages (model_cache/ppocr/stray_glyphs.py)."""

from __future__ import annotations

from model_cache.layout.lines import LayoutLine
from model_cache.ppocr.stray_glyphs import without_stray_glyphs
from outputs.model import Word


def _line(text: str, y: float = 0.0) -> LayoutLine:
    return LayoutLine(text, 0.9, [[0, y], [100, y], [100, y + 20], [0, y + 20]])


LATIN = [_line(f"Some running text, line {k}.", 30.0 * k) for k in range(6)]


def test_an_icon_read_as_an_ideograph_on_a_latin_page_is_dropped():
    icon, label = _line("三", 400), _line("38子", 430)
    label.words = [Word("38子", 0.9, label.box)]
    out = without_stray_glyphs(LATIN + [icon, label])
    assert out[:-1] == LATIN
    assert out[-1].text == "38" and [w.text for w in out[-1].words] == ["38"]


def test_a_page_with_chinese_text_keeps_its_short_lines():
    lines = LATIN + [_line("三", 400), _line("这是一行中文文本。", 430)]
    assert without_stray_glyphs(lines) == lines


def test_a_table_of_glyphs_is_kept():
    glyphs = [_line(c, 400 + 30 * k) for k, c in enumerate("中文字体")]
    assert without_stray_glyphs(LATIN + glyphs) == LATIN + glyphs


def test_a_page_with_little_latin_text_keeps_its_glyphs():
    lines = LATIN[:2] + [_line("三", 400)]
    assert without_stray_glyphs(lines) == lines


def test_full_width_latin_and_cjk_punctuation_are_no_ideographs():
    lines = LATIN + [_line("ａｂ", 400), _line("：", 430)]
    assert without_stray_glyphs(lines) == lines
