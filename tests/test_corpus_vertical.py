"""The rule that finds vertical CJK pages (benchmarks/corpus_vertical.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from corpus_vertical import vertical_share  # noqa: E402


class _Page:
    """A text page of characters with PDF boxes (left, bottom, right, top; y grows upwards)."""

    def __init__(self, chars):
        self.chars = chars

    def count_chars(self):
        return len(self.chars)

    def get_text_range(self, i, n):
        return self.chars[i][0]

    def get_charbox(self, i):
        return self.chars[i][1]


def test_characters_set_down_a_column_read_as_vertical_and_along_a_row_not():
    column = [("漢", (100, 700 - 12 * k, 110, 710 - 12 * k)) for k in range(10)]
    row = [("漢", (100 + 12 * k, 700, 110 + 12 * k, 710)) for k in range(10)]
    assert vertical_share(_Page(column)) == (10, 1.0)
    assert vertical_share(_Page(row)) == (10, 0.0)
    assert vertical_share(_Page([("a", (0, 0, 5, 5))] * 5))[0] == 0  # Latin letters are not counted
