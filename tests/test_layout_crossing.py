"""Lines a detector boxed across a column gutter are cut at it (model_cache/layout/crossing.py)."""

from model_cache.layout import from_line, layout_page
from outputs.model import Line, Word


def _words_line(words: list[tuple[str, float, float]], y0: float, h: float = 30) -> Line:
    """A detector's line over these (text, x0, x1) words, its box padded as DB pads it."""
    box = [[words[0][1] - 3, y0], [words[-1][2] + 3, y0], [words[-1][2] + 3, y0 + h], [words[0][1] - 3, y0 + h]]
    return Line(" ".join(w[0] for w in words), 0.99, box,
                [Word(t, 0.99, [[x0, y0], [x1, y0], [x1, y0 + h], [x0, y0 + h]]) for t, x0, x1 in words])


def _order(lines: list[Line]) -> list[str]:
    blocks = layout_page([from_line(line) for line in lines], 1654, 2339)
    return [line.text for block in blocks for line in block.lines]


def _index(crossing_row: int, rows: int = 10) -> list[Line]:
    """A two-column index, gutter at x 760-790 (about one line height), each entry a short
    line; on one row the detector boxed both columns' entries as one line."""
    lines = []
    for k in range(rows):
        y = 200 + 40 * k
        left, right = (f"left{k}", 100, 400), (f"right{k}", 790, 1000)
        page, rpage = (f"{k + 1}", 420, 470), (f"{k + 2}", 1020, 1070)
        if k == crossing_row:
            lines.append(_words_line([left, page, right, rpage], y))
        else:
            lines.append(_words_line([left, page], y))
            lines.append(_words_line([right, rpage], y))
    return lines


def _column_order(rows: int = 10) -> list[str]:
    return [f"left{k} {k + 1}" for k in range(rows)] + [f"right{k} {k + 2}" for k in range(rows)]


def test_a_line_across_the_gutter_is_cut_and_the_columns_read_in_turn():
    for row in (0, 4, 9):  # the column's top, middle and foot
        assert _order(_index(row)) == _column_order(), row


def test_lines_of_one_column_with_aligned_word_gaps_are_not_cut():
    lines = []
    for k in range(8):  # word gaps at the same x on every line: no line stops short of it
        lines.append(_words_line([(f"alpha{k}", 100, 600), ("beta", 620, 900), ("gamma", 920, 1500)], 200 + 40 * k))
    order = _order(lines)
    assert order == [f"alpha{k} beta gamma" for k in range(8)]


def test_a_full_width_line_over_cut_columns_stays_whole_when_a_line_above_runs_through():
    lines = [_words_line([("A", 100, 300), ("full", 320, 700), ("width", 720, 1000), ("paragraph", 1020, 1500)], 100),
             _words_line([("ends", 100, 300), ("here", 320, 740), ("and", 800, 1000), ("there", 1020, 1070)], 140)]
    lines += _index(crossing_row=-1, rows=6)
    order = _order(lines)
    assert order[:2] == ["A full width paragraph", "ends here and there"]
