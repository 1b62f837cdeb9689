"""Dot leaders between the boxes of a TOC row become '...' and join the row."""

import numpy as np

from model_cache.ppocr.layout import build_blocks
from model_cache.ppocr.leaders import leader_lines
from outputs.model import Line


def _page_with(gap_pattern: str) -> np.ndarray:
    """A 40 px high row: 'title' ink at x 20-200, 'number' ink at x 900-930, and in between
    either dots on the baseline, an underline, or nothing."""
    img = np.full((100, 1000, 3), 255, dtype=np.uint8)
    img[35:65, 20:200] = 0
    img[35:65, 900:930] = 0
    if gap_pattern == "dots":
        for x in range(215, 890, 16):
            img[58:63, x:x + 5] = 0
    elif gap_pattern == "rule":
        img[60:62, 210:890] = 0
    return img


def _lines() -> list[Line]:
    return [Line("Introduction", 0.99, [[15, 30], [205, 30], [205, 70], [15, 70]]),
            Line("29", 0.99, [[895, 30], [935, 30], [935, 70], [895, 70]])]


def test_dots_between_boxes_are_found():
    found = leader_lines(_page_with("dots"), _lines())
    assert [line.text for line in found] == ["..."]


def test_rules_and_blank_gaps_are_not_leaders():
    assert leader_lines(_page_with("rule"), _lines()) == []
    assert leader_lines(_page_with("blank"), _lines()) == []


def test_layout_joins_a_leader_row_into_one_line():
    lines = _lines()
    blocks = build_blocks(lines + leader_lines(_page_with("dots"), lines), 1000)
    assert [line.text for block in blocks for line in block.lines] == ["Introduction ... 29"]
