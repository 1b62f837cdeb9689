"""Reading order on synthetic layouts (boxes in, blocks out; no model needed)."""

from model_cache.ppocr.layout import build_blocks
from outputs.model import Line


def _line(text: str, x0: float, y0: float, x1: float, h: float = 30) -> Line:
    return Line(text, 0.99, [[x0, y0], [x1, y0], [x1, y0 + h], [x0, y0 + h]])


def _order(blocks) -> list[str]:
    return [line.text for block in blocks for line in block.lines]


def _two_columns() -> list[Line]:
    lines = [_line("Title across both columns", 300, 100, 1300, 50)]
    for k in range(12):  # baselines aligned across the columns, as LaTeX sets them
        y = 250 + 40 * k
        lines.append(_line(f"left {k} " + "x" * 40, 100, y, 780 if k != 5 else 500))
        lines.append(_line(f"right {k} " + "x" * 40, 860, y, 1540))
    lines.append(_line("3", 800, 2200, 830))
    return lines


def test_two_columns_are_read_column_by_column():
    lines = _two_columns()
    order = _order(build_blocks(list(reversed(lines)), 2339))
    expected = (["Title across both columns"] + [f"left {k} " + "x" * 40 for k in range(12)]
                + [f"right {k} " + "x" * 40 for k in range(12)] + ["3"])
    assert order == expected


def test_columns_survive_aligned_paragraph_gaps_and_a_lone_line():
    lines = []
    for k in range(10):
        y = 200 + 40 * k + (30 if k >= 5 else 0)  # both columns have a paragraph gap at k = 5
        lines.append(_line(f"L{k} " + "y" * 40, 100, y, 780))
        if k != 9:  # the right column ends one line earlier
            lines.append(_line(f"R{k} " + "y" * 40, 860, y, 1540))
    order = _order(build_blocks(lines, 2339))
    assert [t.split()[0] for t in order] == [f"L{k}" for k in range(10)] + [f"R{k}" for k in range(9)]


def test_toc_rows_with_separate_page_numbers_are_read_row_by_row():
    lines = []
    for k, title in enumerate(["Introduction", "Getting started with packaging", "Rules", "Index"]):
        y = 200 + 45 * k
        lines.append(_line(title, 100, y, 100 + 22 * len(title)))
        lines.append(_line(str(3 + 4 * k), 1400, y, 1430))
    assert _order(build_blocks(lines, 2339)) == [
        "Introduction", "3", "Getting started with packaging", "7", "Rules", "11", "Index", "15"]


def test_table_rows_are_read_left_to_right_and_marked():
    lines = []
    for r in range(4):
        for c, x in enumerate((100, 600, 900)):
            lines.append(_line(f"r{r}c{c}", x, 300 + 40 * r, x + 120))
    blocks = build_blocks(lines, 1000)
    assert _order(blocks) == [f"r{r}c{c}" for r in range(4) for c in range(3)]
    assert blocks[0].kind == "table"


def test_paragraphs_split_at_gaps_indents_and_short_lines():
    full = "w " * 30
    lines = [_line("Heading", 100, 100, 400, 45),
             _line(full, 100, 200, 1500), _line(full, 100, 240, 1500), _line("end.", 100, 280, 300),
             _line(full, 160, 320, 1500), _line(full, 100, 360, 1500), _line(full, 100, 400, 900),
             _line(full, 100, 500, 1500)]
    blocks = build_blocks(lines, 2339)
    assert [len(b.lines) for b in blocks] == [1, 3, 3, 1]
    assert all(b.kind == "text" for b in blocks)


def test_header_and_footer_are_marked():
    lines = [_line("Running head", 100, 30, 600)] + [
        _line("body " * 20, 100, 300 + 40 * k, 1500) for k in range(5)] + [
        _line("12", 800, 2290, 840, 25)]
    blocks = build_blocks(lines, 2339)
    assert blocks[0].kind == "header" and blocks[-1].kind == "footer"


def test_margin_notes_follow_the_paragraph_they_stand_beside():
    full = "body " * 30
    lines = [_line("note A", 60, 200, 260), _line("New: 2018", 60, 240, 260, 20)]
    for k in range(4):
        lines.append(_line(f"p1 line {k} " + full, 400, 200 + 40 * k, 1500))
    lines.append(_line("p1 end.", 400, 360, 700))
    for k in range(3):
        lines.append(_line(f"p2 line {k} " + full, 400, 460 + 40 * k, 1500))
    lines.append(_line("note B", 60, 460, 260))
    order = [t.split(" line")[0].split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order == ["p1"] * 4 + ["p1", "note", "New:"] + ["p2"] * 3 + ["note"]


def test_a_skewed_toc_still_pairs_titles_with_page_numbers():
    import numpy as np
    angle = np.deg2rad(1.2)
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    lines = []
    for k in range(8):
        y = 200 + 40 * k
        for text, x0, x1 in ((f"Section {k} title", 100, 500), (str(10 + k), 1500, 1540)):
            box = (np.array([[x0, y], [x1, y], [x1, y + 30], [x0, y + 30]]) @ rot.T).tolist()
            lines.append(Line(text, 0.99, box))
    order = _order(build_blocks(lines, 2339))
    assert order == [t for k in range(8) for t in (f"Section {k} title", str(10 + k))]
