"""Stray glyphs: a Chinese or Japanese character read from a drawing on a page of Latin text.

The recognisers read Chinese and Latin script with one dictionary, so a small drawing that the
detector boxes on its own (a slide's navigation icon, a tick mark, an arrow in a figure) is
read as the ideograph it most resembles: "三" for beamer's "frame" icon, "十" for a cross
hair, "下" or "厂" for an arrow head. On a page whose text is otherwise all Latin such a line
is noise: in one or two lines of a few characters holding an ideograph or kana, where no other
line of the page holds one, those characters are dropped (and the line, if nothing else is
left: "38子" keeps its "38"). A page with Chinese or Japanese text in a longer line keeps every
character, and so does a page with more such short lines (a table of glyphs).
"""

from __future__ import annotations

import re
from dataclasses import replace

from model_cache.layout.lines import LayoutLine
from outputs.model import Word

# CJK ideographs (and extension A, compatibility), hiragana and katakana: not the CJK
# punctuation or full-width Latin forms, which NFKC reads as ASCII.
_IDEOGRAPH = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
MAX_CHARS = 3  # a stray glyph's line: at most this many characters, spaces not counted
MAX_STRAY = 2  # ...and at most this many of them on the page
MIN_LATIN_LINES = 5  # ...on a page with at least this many lines holding a Latin word


def without_stray_glyphs(lines: list[LayoutLine]) -> list[LayoutLine]:
    """`lines` less the ideographs and kana of one or two short lines on an otherwise Latin page
    (and less those lines where nothing else is left)."""
    with_ideographs = [line for line in lines if _IDEOGRAPH.search(line.text)]
    if not 0 < len(with_ideographs) <= MAX_STRAY or not all(_short(line) for line in with_ideographs):
        return lines
    if sum(1 for line in lines if _LATIN_WORD.search(line.text)) < MIN_LATIN_LINES:
        return lines
    kept = [_without_ideographs(line) if _IDEOGRAPH.search(line.text) else line for line in lines]
    return [line for line in kept if line is not None]


def _without_ideographs(line: LayoutLine) -> LayoutLine | None:
    text = " ".join(_IDEOGRAPH.sub("", line.text).split())
    if not text:
        return None
    words = None
    if line.words:
        words = [Word(_IDEOGRAPH.sub("", w.text), w.conf, w.box) for w in line.words]
        words = [w for w in words if w.text.strip()]
        if " ".join(w.text for w in words) != text:
            words = None  # the word boxes no longer spell the line: the layout guesses from its box
    return replace(line, text=text, words=words)


def _short(line: LayoutLine) -> bool:
    return len("".join(line.text.split())) <= MAX_CHARS
