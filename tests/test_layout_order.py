"""Reading order on synthetic layouts (boxes in, blocks out; no model needed)."""

import math

from model_cache.layout import from_line, layout_page
from model_cache.layout.geometry import LayoutParams, make_item, median_height
from model_cache.layout.tab_stops import trim_to_tab_stops
from outputs.model import Line, Word


def build_blocks(lines: list[Line], page_height: int):
    return layout_page([from_line(line) for line in lines], 1654, page_height)


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
    assert [b.kind for b in blocks] == ["title", "text", "text", "text"]  # the larger heading


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
    lines.append(_line("note B", 60, 460, 260, 22))  # a gloss set smaller than the body
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


def _words(blocks) -> list[str]:
    return " ".join(_order(blocks)).split()


def test_margin_notes_close_to_the_body_follow_their_paragraph_not_row_by_row():
    # option documentation: the option's name and dates sit in the margin, beside the syntax
    # line and the paragraph describing it; narrow enough to look like a table column
    full = "body " * 40
    lines = [_line("Usage", 400, 100, 700, 45),
             _line("encoding", 190, 240, 306), _line("encoding = <utf8|gbk>", 400, 240, 730),
             _line("New: 2017-09-16", 230, 285, 370, 20), _line("p1a " + full, 400, 280, 1500),
             _line("Updated: 2018-04-01", 195, 318, 370, 20), _line("p1b " + full, 400, 320, 1500),
             _line("p1end.", 400, 360, 460),
             _line("p2a " + full, 460, 400, 1500), _line("p2end " + full, 400, 440, 1200)]
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order == ["Usage", "encoding", "p1a", "p1b", "p1end.", "encoding", "New:", "Updated:",
                     "p2a", "p2end"]


def _entry_page() -> list[Line]:
    """Function documentation: names right-aligned in the margin a third of a line height
    from the body (no column gutter), each beside an entry of short lines."""
    full = "text " * 40
    lines = [_line(f"intro{k} " + full, 388, 1100 + 40 * k, 1500) for k in range(3)]
    lines += [_line("\\foo_seq", 170, 1313, 372, 36), _line("List of names.", 388, 1302, 590, 36),
              _line("\\foo_use:nn", 160, 1400, 372), _line("Outputs paragraphs.", 388, 1390, 590),
              _line("#1: name", 388, 1432, 580), _line("#2: list", 388, 1474, 640),
              _line("\\foo_if_exist:nTF", 80, 1545, 372),
              _line("Tests whether it exists.", 388, 1535, 790),
              _line("#1: name", 388, 1577, 580)]
    return lines


def test_a_margin_note_follows_the_whole_entry_it_stands_beside():
    words = _words(build_blocks(_entry_page(), 2339))
    start = words.index("Outputs")
    assert words[start:] == ["Outputs", "paragraphs.", "#1:", "name", "#2:", "list",
                             "\\foo_use:nn", "Tests", "whether", "it", "exists.", "#1:", "name",
                             "\\foo_if_exist:nTF"]


def test_a_one_line_note_on_the_row_of_a_one_line_entry_is_read_first():
    words = _words(build_blocks(_entry_page(), 2339))
    start = words.index("\\foo_seq")
    assert words[start:start + 4] == ["\\foo_seq", "List", "of", "names."]


def test_a_note_reaching_below_its_short_paragraph_is_read_before_it():
    # four variable names described by one line, then a code line: the names head the text
    full = "text " * 40
    lines = [_line(f"intro{k} " + full, 398, 1700 + 40 * k, 1500) for k in range(4)]
    lines += [_line("6.1 Internal variables", 398, 2005, 708, 37),
              _line("Temporary variables.", 398, 2072, 528, 33),
              _line("16 \\tl_new:N \\l_tmpa_tl", 404, 2117, 839, 28)]
    lines += [_line(f"\\l_tmp_{k}", 94, 2078 + 31 * k, 373) for k in range(4)]
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    names = [f"\\l_tmp_{k}" for k in range(4)]
    assert order[4:] == ["6.1"] + names + ["Temporary", "16"]


def test_list_labels_in_the_margin_stay_with_their_items():
    full = "word " * 40
    lines = []
    for k in range(4):
        lines.append(_line(f"{k + 1}.", 100, 200 + 100 * k, 128))
        lines.append(_line(f"item{k}a " + full, 160, 200 + 100 * k, 1500))
        lines.append(_line(f"item{k}b", 160, 240 + 100 * k, 600))
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order == [w for k in range(4) for w in (f"{k + 1}.", f"item{k}b")]


def test_a_two_level_table_header_is_read_level_by_level():
    cells = [("Support", 1204, 304, 1433, 32), ("Name", 505, 320, 567, 37),
             ("Paragraphs", 640, 324, 729, 29), ("Script", 796, 324, 875, 27),
             ("Description", 1007, 318, 1070, 39), ("utf8", 1201, 347, 1263, 25),
             ("gbk", 1281, 342, 1339, 35), ("big5", 1360, 345, 1427, 31)]
    lines = [_line("Table 1", 832, 237, 1060)]
    lines += [_line(t, x0, y0, x1, hh) for t, x0, y0, x1, hh in cells]
    for k, name in enumerate(["simp", "trad", "zhufu", "aspirin"]):
        y = 392 + 37 * k
        lines += [_line(name, 502, y, 569), _line(str(50 + k), 661, y, 697),
                  _line("S", 796, y, 830), _line(f"text{k}", 952, y, 1128)]
    lines.append(_line("•", 1224, 406, 1234, 8))  # the only support mark the detector found
    words = _words(build_blocks(lines, 2339))
    assert words[:12] == ["Table", "1", "Name", "Paragraphs", "Script", "Description", "Support",
                          "utf8", "gbk", "big5", "simp", "50"]
    assert words[-4:] == ["aspirin", "53", "S", "text3"]


def test_code_with_aligned_comments_is_read_row_by_row():
    code = ["\\cmd[2-4]", "\\cmd[4,12,3-8]", "\\cmd[-10,40-]", "\\cmd[-]", "\\cmd", "\\cmd[48-52]"]
    widths = [180, 247, 235, 190, 200, 209]
    lines = [_line("text " * 40, 400, 1273, 1500)]
    for k, (text, w) in enumerate(zip(code, widths)):
        y = 1402 + 30 * k
        lines += [_line(text, 429, y, 429 + w, 26),
                  _line(f"% comment {k}", 738, y, 1000 + 40 * k, 26)]
    words = _words(build_blocks(lines, 2339))[40:]
    assert words == [w for k, c in enumerate(code) for w in (c, "%", "comment", str(k))]


def test_a_narrow_table_column_is_not_taken_for_margin_notes():
    lines = []
    for r in range(8):  # a last column with a value on every row
        y = 120 + 64 * r
        lines += [_line(f"item{r}", 155, y, 300, 35), _line(str(10 + r), 716, y, 760, 35),
                  _line(f"{r}.50", 976, y, 1060, 35), _line(f"total{r}", 1276, y, 1380, 35)]
    words = _words(build_blocks(lines, 2339))
    assert words == [w for r in range(8) for w in (f"item{r}", str(10 + r), f"{r}.50", f"total{r}")]


def test_group_labels_of_table_rows_are_not_taken_for_margin_notes():
    lines = []
    for r in range(6):  # a label on the first row of each group only
        y = 300 + 40 * r
        if r % 3 == 0:
            lines.append(_line(f"Group{r // 3}", 100, y, 300))
        lines += [_line(f"c{r}{c}", x, y, x + 100) for c, x in enumerate((500, 800, 1100))]
    words = _words(build_blocks(lines, 2339))
    assert words[:4] == ["Group0", "c00", "c01", "c02"] and words[9:11] == ["c22", "Group1"]


def test_a_brace_below_indented_code_is_read_last_not_as_a_column():
    lines = [_line("Other := SEQUENCE {", 249, 677, 650, 27),
             _line("x", 324, 717, 350), _line("INTEGER,", 453, 712, 583, 32),
             _line("y", 324, 754, 349, 33), _line("CHOICE {", 453, 751, 588, 29),
             _line("y1 INTEGER,", 387, 783, 569, 39),
             _line("y2 OCTET STRING },", 389, 820, 677, 37),
             _line("}", 244, 859, 269, 31)]
    assert _words(build_blocks(lines, 2339)) == [
        "Other", ":=", "SEQUENCE", "{", "x", "INTEGER,", "y", "CHOICE", "{", "y1", "INTEGER,",
        "y2", "OCTET", "STRING", "},", "}"]


def test_a_margin_note_above_all_the_body_is_read_first():
    full = "body " * 40
    lines = [_line("Draft note", 60, 200, 300)]
    lines += [_line(f"p{k} " + full, 400, 400 + 40 * k, 1500) for k in range(4)]
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order == ["Draft", "p0", "p1", "p2", "p3"]


def test_right_margin_glosses_follow_their_paragraphs():
    full = "body " * 30
    lines = [_line(f"p1{k} " + full, 200, 300 + 40 * k, 1200) for k in range(3)]
    lines += [_line("p1end.", 200, 420, 500), _line("gloss one", 1240, 344, 1460, 22)]
    lines += [_line("p20 " + full, 260, 480, 1200), _line("p21 " + full, 200, 520, 1200),
              _line("p2end.", 200, 560, 600), _line("gloss two", 1240, 524, 1440, 22)]
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order == ["p10", "p11", "p12", "p1end.", "gloss", "p20", "p21", "p2end.", "gloss"]


def test_names_on_the_body_baselines_are_read_row_by_row():
    """A package manual: each command's name in the margin, in the body's type on the baseline of
    the line that describes it; the text layer (and a reader following the rows) reads each name
    with its line."""
    full = "is a declaration equivalent to an option " * 2
    lines = [_line(f"intro{k} " + full, 400, 100 + 40 * k, 1500) for k in range(5)]
    for k in range(6):
        lines += [_line(f"\\name{k}", 80, 300 + 40 * k, 330), _line(f"row{k} " + full, 400, 300 + 40 * k, 1500)]
    lines.append(_line("end of the paragraph.", 400, 540, 800))
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order[5:] == [w for k in range(6) for w in (f"\\name{k}", f"row{k}")] + ["end"]


def test_a_macro_name_beside_its_code_line_is_read_before_it():
    lines = [_line(f"{70 + k} \\code line {k}", 400, 300 + 36 * k, 1400, 27) for k in range(12)]
    lines.append(_line("\\the_macro:n", 80, 300 + 36 * 5, 330, 26))
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order == [str(70 + k) for k in range(5)] + ["\\the_macro:n"] + [str(70 + k) for k in range(5, 12)]


def test_a_note_in_the_body_type_in_the_right_margin_follows_its_line():
    full = "body " * 30
    lines = [_line(f"p{k} " + full, 200, 300 + 40 * k, 1200) for k in range(5)]
    lines.append(_line("note", 1240, 340, 1400))
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order == ["p0", "p1", "note", "p2", "p3", "p4"]


def test_a_table_of_multi_line_cells_is_read_row_by_row():
    """Blank bands across both sides, row after row, part table cells, not columns of text."""
    lines, expected = [], []
    y = 200
    for k in range(4):
        lines.append(_line(f"option{k} | alias{k} | other{k}", 100, y, 620))
        expected.append(f"option{k} | alias{k} | other{k}")
        for j in range(3):  # the explanation runs to three lines
            lines.append(_line(f"explanation {k}.{j} " + "w" * 20, 700, y + 40 * j, 1500))
            expected.append(f"explanation {k}.{j} " + "w" * 20)
        y += 40 * 3 + 60  # a blank line between rows
    assert _order(build_blocks(lines, 2339)) == expected


def test_a_centred_figure_comes_before_the_left_aligned_heading_under_it():
    lines = [_line("Some text above the figure " + "z" * 30, 100, 100, 1500),
             _line("label inside figure one", 600, 300, 900),
             _line("2.4 Heading", 100, 700, 300),
             _line("Text under the heading " + "z" * 30, 100, 760, 1500),
             _line("sub a label", 200, 1000, 500), _line("sub b label", 1000, 990, 1300)]
    figures = [(500, 250, 1100, 650), (900, 950, 1400, 1200), (150, 955, 650, 1205)]
    blocks = layout_page([from_line(line) for line in lines], 1654, 2339, figures=figures)
    assert _order(blocks) == ["Some text above the figure " + "z" * 30, "label inside figure one", "2.4 Heading",
                              "Text under the heading " + "z" * 30, "sub a label", "sub b label"]


def test_a_footline_under_a_picture_stays_one_row_of_page_text():
    """A slide's footline (author, title, date, page) set right under a picture: the figure's
    region, grown a line height for its labels, reaches over the two items in the middle, but
    the row runs on past the region's side: the page's last row, read as one."""
    lines = [_line("Slide title", 40, 60, 400, 45),
             _line("label in the picture", 600, 400, 900),
             _line("Author (Univ)", 90, 1230, 250), _line("Short title", 450, 1230, 600),
             _line("Lectures 31-34", 780, 1230, 940), _line("4 / 43", 960, 1230, 1020)]
    figures = [(320, 100, 975, 1280)]
    blocks = layout_page([from_line(line) for line in lines], 1040, 1280, figures=figures)
    figure = next(b for b in blocks if b.kind == "figure")
    assert [line.text for line in figure.lines] == ["label in the picture"]
    assert " ".join(_order(blocks[blocks.index(figure) + 1:])) == "Author (Univ) Short title Lectures 31-34 4 / 43"


def _inked(text: str, x0: float, y0: float, x1: float, pad: float = 8, h: float = 30) -> Line:
    """An OCR line whose word box is its ink and whose detector box is padded by `pad`."""
    return Line(text, 0.99, [[x0 - pad, y0], [x1 + pad, y0], [x1 + pad, y0 + h], [x0 - pad, y0 + h]],
                [Word(text, 0.99, [[x0, y0], [x1, y0], [x1, y0 + h], [x0, y0 + h]])])


def test_a_gutter_open_between_the_ink_only_parts_text_columns():
    """Two columns whose padded boxes nearly touch (4 px apart) while their ink leaves a gutter
    of 20 px: read column by column, not row by row."""
    lines = []
    for k in range(8):
        y = 200 + 40 * k
        lines += [_inked(f"left {k} " + "x" * 30, 100, y, 700), _inked(f"right {k} " + "y" * 30, 720, y, 1320)]
    expected = [f"left {k} " + "x" * 30 for k in range(8)] + [f"right {k} " + "y" * 30 for k in range(8)]
    assert _order(build_blocks(lines, 2339)) == expected


def test_a_small_page_number_a_blank_below_two_columns_starts_its_own_region():
    """A page number of one digit, set small in the gutter under the columns, is no detached
    mark between rows: joined to the columns' region it closed their gutter between the ink."""
    from model_cache.layout.order import merged_regions

    lines = [_inked(f"{side} {k} " + "x" * 30, x0, 200 + 40 * k, x0 + 600)
             for k in range(3) for side, x0 in (("left", 100), ("right", 760))]
    lines.append(_inked("7", 725, 400, 735, pad=2, h=18))
    regions = merged_regions([make_item(from_line(line)) for line in lines], 18.0, 30.0)
    assert [len(r.items) for r in regions] == [6, 1] and regions[0].gutters


def test_a_contents_beside_a_column_of_text_breaking_at_the_same_height_is_a_column():
    """tikz-planets' first page: the contents in the left column, sections in the right, the
    padded boxes touching across an ink gutter, and a blank across both columns where a contents
    group ends and a section begins. A grid of examples breaks at the same heights, but a side
    of contents entries (titles ending in page numbers) is a column, not grid cells."""
    lines, y = [], 200
    for group in range(2):
        for k in range(5):  # a title's leader dots run on to its page number
            lines += [_inked(f"{group}.{k} Entry title . . . . . {k}", 186, y + 40 * k, 835),
                      _inked(f"right {group}.{k} " + "y" * 28, 862, y + 40 * k, 1560)]
        y += 240
    order = _order(build_blocks(lines, 2339))
    assert order == ([f"{g}.{k} Entry title . . . . . {k}" for g in range(2) for k in range(5)]
                     + [f"right {g}.{k} " + "y" * 28 for g in range(2) for k in range(5)])



def test_a_description_list_as_close_as_an_inked_gutter_stays_row_by_row():
    """Labels and their descriptions 20-40 px apart in ink: each label is read with its item."""
    lines, y = [], 200
    for k in range(6):
        lines.append(_inked(f"label{k}", 100, y, 260 + 10 * (k % 3)))
        lines += [_inked(f"description {k}.{j} " + "d" * 40, 300, y + 40 * j, 1400) for j in range(2)]
        y += 100
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order[:4] == ["label0", "description", "label1", "description"]


def _fragmented_index() -> tuple[list[Line], list[str]]:
    """A tight two-column index: padded boxes touch across the gutter (its ink is 28 px wide) on
    most rows, while a heading over the left column, a letter heading and short entries in the
    right one leave box gutters on a few rows."""
    lines = [_inked("Symbols", 300, 160, 420), _inked("\\beta ... 5", 760, 160, 1100, pad=10)]
    left = [f"\\entry{k}() ... {k}" for k in range(10)]
    right = [f"\\other{k}() ... {k}" for k in range(4)] + ["E", "environments:", "pycode ... 4", "pysub ... 4"]
    for k, text in enumerate(left):
        lines.append(_inked(text, 100, 200 + 40 * k, 732, pad=12))
    for k, text in enumerate(right):
        x0, x1 = {"E": (900, 920)}.get(text, (760, 1100 if k < 4 else 1000))
        lines.append(_inked(text, x0, 200 + 40 * k, x1, pad=12))
    return lines, ["Symbols", *left, "\\beta ... 5", *right]


def test_an_index_cut_into_fragments_by_its_headings_is_read_column_by_column():
    lines, expected = _fragmented_index()
    assert _order(build_blocks(lines, 2339)) == expected


def test_fragments_of_a_three_column_index_are_joined_across_both_inked_gutters():
    """A tight three-column index whose box gutters open only on a few rows in the middle (short
    entries there): that fragment's two box gutters are both gutters the ink leaves open down all
    three fragments, so all three are joined and read as one region of columns."""
    from model_cache.layout.order import Region, _join_inked

    def fragment(rows: range, gutters: list[tuple[float, float]]) -> Region:
        lines = [_inked(f"\\{name}entry{k} ... {k}", x0, 200 + 40 * k, x0 + (380 if gutters else 460), pad=12)
                 for k in rows for name, x0 in zip("abc", (100, 588, 1076))]
        return Region([make_item(from_line(line)) for line in lines], gutters)

    regions = [fragment(range(0, 6), []), fragment(range(6, 11), [(492, 576), (980, 1064)]),
               fragment(range(11, 17), [])]
    joined = _join_inked(regions, LayoutParams(), 30.0)
    assert len(joined) == 1 and len(joined[0].items) == 51



def test_fragments_of_a_glossary_are_joined_without_the_two_column_section_under_it():
    """A tight glossary (terms described, no page numbers) and, after a blank, a section in two
    columns too, both starting at the same height: read with that section the glossary's
    fragments break level on both sides, as a grid's rows do, and no longer read as columns.
    Without it they do: they are joined. (Entries ending in page numbers are an index's or a
    contents' column whatever breaks beside them: intopdf's index over its change history.)"""
    from model_cache.layout.order import Region, _join_inked

    def fragment(rows: range, gutters: list[tuple[float, float]], top: float) -> Region:
        lines = [_inked(f"\\{name}entry{k} described", x0, top + 40 * k, x0 + (380 if gutters else 460), pad=12)
                 for k in rows for name, x0 in zip("ab", (100, 588))]
        return Region([make_item(from_line(line)) for line in lines], gutters)

    regions = [fragment(range(0, 5), [], 200), fragment(range(5, 9), [(492, 576)], 200),
               fragment(range(9, 14), [], 200), fragment(range(14, 16), [], 300)]
    joined = _join_inked(regions, LayoutParams(), 30.0)
    assert [len(region.items) for region in joined] == [28, 4]

def test_a_running_head_over_a_tight_index_is_no_piece_of_its_columns():
    """A tight two-column index (its ink 28 px apart, its boxes touching) under a running head
    whose two ends stand over the two columns, a blank under the head, and a letter group
    starting after a blank in each column at its own height: the columns are read one after
    the other, under the head. (The head's row is no piece read across both sides, which a
    grid of examples has; its page number still goes with the right column.)"""
    lines = [_inked("Code index", 100, 100, 300), _inked("11", 1300, 100, 1340)]
    left, right = [], []
    for k in range(14):
        left.append(f"\\leftentry{k} ... {k + 3}")
        right.append(f"\\rightentry{k} ... {k + 40}")
        lines.append(_inked(left[-1], 100, 200 + 40 * k + (60 if k >= 7 else 0), 732, pad=12))
        lines.append(_inked(right[-1], 760, 200 + 40 * k + (60 if k >= 4 else 0), 1392, pad=12))
    order = _order(build_blocks(lines, 2339))
    assert order[0] == "Code index" and [t for t in order if "entry" in t] == left + right


def test_a_contents_in_two_columns_is_read_column_by_column():
    """A contents set in two columns (multicol): chapter rows with their page number set apart,
    section rows, entries run over two lines. Its rows pair up across the gutter like a
    table's, but every row of both sides that ends does so in a page number after words."""
    lines, left, right = [], [], []
    for k in range(4):
        y = 300 + 100 * k
        left += [f"{k + 1} Chapter", f"{k + 2}", f"{k + 1}.1 Section ... {k + 2}"]
        lines += [_line(left[-3], 200, y, 420), _line(left[-2], 860, y, 880), _line(left[-1], 240, y + 50, 880)]
        right += [f"{k + 5}.{k} Long section", f"title ... {k + 12}"]
        lines += [_line(right[-2], 950, y, 1460), _line(right[-1], 1010, y + 50, 1460)]
    assert _order(build_blocks(lines, 2339)) == left + right


def test_a_table_of_numbers_beside_its_labels_is_still_read_row_by_row():
    """A table whose right half is numbers alone: no contents entries there, so its rows pair."""
    lines, expected = [], []
    for k in range(5):
        y = 300 + 45 * k
        cells = [f"Item {k}", f"{10 + k}", f"{20 + k}", f"{30 + k}"]
        lines += [_line(c, x, y, x + 120) for c, x in zip(cells, (200, 700, 900, 1100))]
        expected += cells
    assert _order(build_blocks(lines, 2339)) == expected


def test_a_grid_of_examples_with_a_blank_band_across_both_sides_is_read_cell_row_by_cell_row():
    """Two rows of two example cells (code over its rendering), their ink 28 px apart, a blank
    band between the rows across both sides: read as a grid, not as two columns."""
    lines, expected, y = [], [], 200
    for row in range(2):
        for side, x0 in (("left", 100), ("right", 760)):
            cell = [f"{side} cell {row} line {j} " + "c" * 20 for j in range(3)]
            lines += [_inked(text, x0, y + 40 * j, x0 + 632, pad=12) for j, text in enumerate(cell)]
        y += 3 * 40 + 60
    text = "\n".join(_order(build_blocks(lines, 2339)))
    assert text.index("right cell 0 line 2") < text.index("left cell 1 line 0")


def test_an_inked_gutter_does_not_join_a_region_that_its_own_box_gutters_read():
    """A listing's aligned fields (box gutters with seven rows down both sides) are not joined
    across an inked gutter elsewhere; a letter heading's box gutter (one row on its right) is,
    and so is a box gutter that is the inked gutter itself."""
    from model_cache.layout.order import Region, _agrees
    params = LayoutParams()
    fields = [make_item(from_line(_inked(f"{text}{k}", x0, 200 + 40 * k, x1)))
              for k in range(7) for text, x0, x1 in (("field", 100, 400), ("op", 440, 460), ("args", 500, 640))]
    assert not _agrees(Region(fields, [(408, 432), (468, 492)]), [(640, 672)], params)
    assert _agrees(Region(fields, [(630, 680)]), [(640, 672)], params)
    entries = [make_item(from_line(_inked(f"entry{k}", 760, 200 + 40 * k, 1000))) for k in range(5)]
    heading = make_item(from_line(_inked("E", 1200, 200, 1220)))
    assert _agrees(Region(entries + [heading], [(1008, 1192)]), [(730, 752)], params)


def test_a_page_number_after_a_blank_or_a_head_over_a_rule_is_not_joined_to_an_index():
    from model_cache.layout.order import _apart
    params = LayoutParams()
    rows = [make_item(from_line(_inked(f"entry{k}", 100, 200 + 40 * k, 700))) for k in range(5)]
    number = [make_item(from_line(_inked("133", 380, 470, 420)))]
    head = [make_item(from_line(_inked("Chapter 12 Index", 500, 160, 700)))]  # 10 px above the rows
    assert _apart(rows, number, (), params, 30) and not _apart(rows[:2], rows[2:], (), params, 30)
    assert _apart(head, rows, [(90, 193, 710, 196)], params, 30) and not _apart(head, rows, (), params, 30)


def _index_page(tail) -> list[Line]:
    """Two columns of twelve entries whose ink starts at x=100 and x=760, 40 px apart in ink.
    Their boxes are padded by 6 px, except one left entry's box (row 6), padded by 26 px: its
    box comes within 8 px of the right column's (less than the 18 px of a gutter)."""
    lines = []
    for k in range(12):
        y = 200 + 40 * k
        lines.append(_inked(f"left entry {k} {tail(k)}", 100, y, 720, pad=26 if k == 6 else 6))
        lines.append(_inked(f"right entry {k} {tail(k)}", 760, y, 1380, pad=6))
    return lines


def test_an_index_is_read_column_by_column_where_one_padded_box_closes_its_gutter():
    """The index's entries end in page numbers and start at two tab stops: the boxes reaching
    into the gap before the right column are trimmed to their ink, and the gutter holds."""
    order = _order(build_blocks(_index_page(lambda k: f"{k + 3}, {2 * k + 9}"), 2339))
    assert [t.split()[0] for t in order] == ["left"] * 12 + ["right"] * 12


def test_aligned_columns_without_page_numbers_keep_their_boxes():
    """The same layout whose lines do not end in page numbers (code beside a column of names)
    is no index: no box is trimmed (with page numbers, the padded boxes are)."""
    def boxes(tail):
        items = [make_item(from_line(line)) for line in _index_page(tail)]
        trimmed = trim_to_tab_stops(items, median_height(items), LayoutParams())
        return [(it.x0, it.x1) for it in items], [(it.x0, it.x1) for it in trimmed]
    before, after = boxes(lambda k: "{ x }")
    assert after == before
    before, after = boxes(lambda k: f"{k + 3}")
    assert after != before


def test_an_index_line_the_detector_ran_across_the_gutter_is_cut_there():
    """Row 6 of the index is one detector line over both columns; its word gap lies where the
    lines above and below stop and start again: it is cut there and each half read in its column."""
    lines = [line for line in _index_page(lambda k: f"{k + 3}") if "entry 6 " not in line.text]
    words = [Word("left entry 6 9", 0.99, [[100, 440], [720, 440], [720, 470], [100, 470]]),
             Word("right entry 6 9", 0.99, [[760, 440], [1380, 440], [1380, 470], [760, 470]])]
    lines.append(Line("left entry 6 9 right entry 6 9", 0.99, [[94, 440], [1386, 440], [1386, 470], [94, 470]],
                      words))
    order = _order(build_blocks(lines, 2339))
    assert order == [f"left entry {k} {k + 3}" for k in range(12)] + [f"right entry {k} {k + 3}" for k in range(12)]


def _crossing_last_row(word: str, h: float, chars: float) -> list[Line]:
    """The index without its last row, under which a line of two words stands over both
    columns, one starting at each column's edge, boxed `h` px tall (the index's rows: 30), its
    characters `chars` px wide (the index's: 36-41)."""
    lines = [line for line in _index_page(lambda k: f"{k + 3}") if "entry 11 " not in line.text]
    width = chars * len(word)
    words = [Word(word, 0.99, [[x, 640], [x + width, 640], [x + width, 640 + h], [x, 640 + h]]) for x in (100, 760)]
    return lines + [Line(f"{word} {word}", 0.99, [[94, 640], [766 + width, 640], [766 + width, 640 + h],
                                                  [94, 640 + h]], words)]


def test_a_scans_last_index_row_boxed_taller_across_the_gutter_is_still_cut_there():
    """hhtensor p4 (scan): the index's last row, boxed as one line over its three columns, stands
    a fifth taller than the rows above it (a long box on a scan), in the same type: it is cut at
    the gutter, not taken for a title spanning the columns."""
    order = _order(build_blocks(_crossing_last_row("entry", 37, 40), 2339))
    assert order.index("entry") < order.index("right entry 0 3")


def test_a_title_set_larger_over_both_columns_is_not_cut_at_their_gutter():
    order = _order(build_blocks(_crossing_last_row("Title", 48, 60), 2339))
    assert "Title Title" in order


def _worded(words: list[tuple[str, float, float]], y0: float, pad: float = 8, h: float = 30) -> Line:
    """An OCR line of the given (text, x0, x1) words, its box padded by `pad` past its end words."""
    boxes = [Word(t, 0.99, [[a, y0], [b, y0], [b, y0 + h], [a, y0 + h]]) for t, a, b in words]
    x0, x1 = words[0][1] - pad, words[-1][2] + pad
    return Line(" ".join(t for t, _, _ in words), 0.99, [[x0, y0], [x1, y0], [x1, y0 + h], [x0, y0 + h]], boxes)


def test_an_index_line_starting_at_a_page_number_past_its_column_is_cut_at_the_gutter():
    """snapshot's index: a row's page number stands out past its column's other lines and the
    detector boxed it with the next column's entry. Above and below, in the crossing line's span,
    there are only the next column's lines; the lines beside its start (within `cross_reach`)
    stop before the gap, and the gutter they leave (2.4 line heights) is cut."""
    from model_cache.layout.crossing import split_crossing

    lines = []
    for k in range(8):
        y = 200 + 40 * k
        if k == 3:
            lines += [_worded([("\\controldates", 300, 465)], y),
                      _worded([("515", 559, 595), ("\\kernel", 625, 860), ("457", 886, 923)], y)]
        else:
            lines += [_worded([(f"\\a{k}", 300, 465), (f"{500 + k}", 520, 553)], y),
                      _worded([(f"\\b{k}", 625, 860), (f"{400 + k}", 886, 923)], y)]
    items = split_crossing([make_item(from_line(line)) for line in lines], LayoutParams(), 0.0)
    texts = [it.line.text for it in items]
    assert "515" in texts and "\\kernel 457" in texts
    # Lines beside its start that stop far short of the gap (5 line heights) are no evidence
    far = [_worded([(t, 300, 465)], ln.box[0][1]) if ln.text.startswith("\\a") else ln
           for ln in lines for t in [ln.text.split()[0]]]
    items = split_crossing([make_item(from_line(line)) for line in far], LayoutParams(), 0.0)
    assert "515 \\kernel 457" in [it.line.text for it in items]


def _column_words(side: str, k: int, x0: float, x1: float) -> list[tuple[str, float, float]]:
    """Six words filling [x0, x1] with 10-14 px word gaps that move from row to row."""
    gap, width = 10 + 2 * (k % 3), (x1 - x0 - 5 * 12) / 6
    out, x = [], x0
    for j in range(6):
        w = width + (9 if (j + k) % 2 else -9) if j < 5 else x1 - x
        out.append((f"{side}{k}w{j}", x, x + w))
        x += w + gap
    return out


def test_two_columns_the_detector_boxed_row_by_row_are_read_column_by_column():
    """A narrow gutter (30 px of ink) that the detector ran across on eight rows of ten; the two
    rows it cut have boxes padded 20 px into the gutter. The band no word covers runs down all
    ten rows: the merged lines are cut there and the columns read one after the other."""
    lines = []
    for k in range(10):
        y = 200 + 40 * k
        left, right = _column_words("l", k, 100, 700), _column_words("r", k, 730, 1330)
        if k in (3, 7):
            lines += [_worded(left, y, pad=20), _worded(right, y, pad=20)]
        else:
            lines.append(_worded(left + right, y))
    words = [w for t in _order(build_blocks(lines, 2339)) for w in t.split()]
    assert [w[0] for w in words] == ["l"] * 60 + ["r"] * 60


def test_wide_word_gaps_that_do_not_line_up_leave_a_column_whole():
    """One column of justified text whose word gaps are as wide as a gutter (30 px) but fall at a
    different x on every row: no river, the lines stay whole and in order."""
    lines = []
    for k in range(12):
        x, words = 100.0, []
        for j in range(8):  # justified: the last word ends at the column's edge
            w = 100 + 37 * ((j * 5 + k * 3) % 7) if j < 7 else 1500 - x
            words.append((f"r{k}w{j}", x, x + w))
            x += w + 30
        lines.append(_worded(words, 200 + 40 * k))
    order = _order(build_blocks(lines, 2339))
    assert order == [" ".join(f"r{k}w{j}" for j in range(8)) for k in range(12)]


def test_a_bullet_list_whose_bullets_are_words_of_their_lines_keeps_its_lines():
    """Bullets 30 px before their items on every row line up like a gutter: they are a hanging
    indent, and each item stays one line after its bullet."""
    lines = [_worded([("•", 100, 115), (f"item{k}", 145, 400), ("text", 412, 700 + 20 * (k % 3))], 200 + 40 * k)
             for k in range(10)]
    blocks = build_blocks(lines, 2339)
    assert _order(blocks) == [f"• item{k} text" for k in range(10)]


def test_pairing_rows_across_a_gutter_tries_only_lines_that_can_overlap():
    """order._count_beside looks only at a window of the other side's lines: it must count what
    trying every pair counts, for lines of any heights and offsets."""
    import random

    from model_cache.layout.order import _beside, _count_beside

    rng = random.Random(7)
    params = LayoutParams()
    for _ in range(40):
        def side(x0: float) -> list:
            items = []
            for _ in range(rng.randint(1, 30)):
                y, hgt = rng.uniform(0, 900), rng.choice([4.0, 20.0, 30.0, 80.0])
                items.append(make_item(from_line(Line("cell", 0.9, [[x0, y], [x0 + 90, y], [x0 + 90, y + hgt],
                                                                    [x0, y + hgt]]))))
            return items
        short, other = side(100), side(400)
        brute = sum(1 for it in short if any(_beside(it, o, params) for o in other))
        assert _count_beside(short, other, params) == brute


def _paragraph_lines(top: float, count: int, pitch: float = 40, right: float = 1500,
                     last: float = 900, x0: float = 100) -> list[Line]:
    """A justified paragraph: full lines, the last one short."""
    return [_line(f"p{top:.0f} line {k} " + "w " * 25, x0, top + pitch * k, right if k < count - 1 else last)
            for k in range(count)]


def test_an_overfull_line_does_not_make_every_full_line_end_a_paragraph():
    lines = _paragraph_lines(200, 8)
    lines[3] = _line(lines[3].text + "http://example.org/a/long/url", 100, 320, 1580)  # past the margin
    blocks = build_blocks(lines, 2339)
    assert [len(b.lines) for b in blocks] == [8]


def test_a_line_far_into_the_margin_does_not_make_every_full_line_end_a_paragraph():
    """A manual's command line running seven line heights past the margin (R-admin p34): the
    full lines still end together, so they are the edge."""
    lines = _paragraph_lines(200, 4) + _paragraph_lines(380, 5)
    lines.insert(4, _line("./configure CC=clang CFLAGS=-O2 CXX=clang++ -arch arm64 " + "x" * 20,
                          180, 350, 1500 + 7 * 30))
    blocks = build_blocks(lines, 2339)
    assert len(blocks[0].lines) == 4 and len(blocks[-1].lines) >= 5


def test_a_line_with_a_shorter_box_stays_in_its_paragraph():
    lines = _paragraph_lines(200, 8)
    # a line without ascenders or descenders: a box two thirds as high on the same baseline pitch
    lines[4] = Line(lines[4].text, 0.99, [[100, 365], [1500, 365], [1500, 385], [100, 385]])
    blocks = build_blocks(lines, 2339)
    assert [len(b.lines) for b in blocks] == [8]


def test_paragraphs_set_apart_by_a_little_extra_space_are_split():
    # 15 px of extra space between paragraphs (the gap 18 px, under para_gap's 0.8 line heights)
    # and every paragraph's last line full: only the wider line pitch (48 against 33) parts them
    lines = _paragraph_lines(200, 4, 33, last=1500) + _paragraph_lines(347, 4, 33, last=1500) + \
        _paragraph_lines(494, 3, 33, last=1500)
    blocks = build_blocks(lines, 2339)
    assert [len(b.lines) for b in blocks] == [4, 4, 3]


def test_ragged_code_lines_still_end_their_blocks():
    widths = [700, 420, 1100, 380, 900, 560]
    lines = [_line(f"code {k} " + "x" * (w // 25), 100, 200 + 40 * k, 100 + w) for k, w in enumerate(widths)]
    blocks = build_blocks(lines, 2339)
    assert len(blocks) >= 4  # each line that stops short of the widest one ends a block, as before


def test_a_running_head_with_its_page_number_at_the_other_margin_is_marked():
    lines = [_line("Debian New Maintainers' Guide", 100, 100, 600), _line("12/57", 1450, 100, 1540)] + \
        _paragraph_lines(300, 6) + [_line("Chapter 3", 100, 2200, 400), _line("iv", 1500, 2200, 1540)]
    blocks = build_blocks(lines, 2339)
    assert (blocks[0].kind, blocks[-1].kind) == ("header", "footer")
    assert [b.kind for b in blocks[1:-1]] == ["text"]


def test_two_rows_at_the_top_are_no_running_head():
    lines = [_line("To: whom it may concern", 100, 100, 600), _line("February 8", 1300, 100, 1540),
             _line("Re: the application", 100, 140, 600)] + _paragraph_lines(300, 6)
    assert build_blocks(lines, 2339)[0].kind != "header"


def _ruled_table() -> tuple[list[Line], list[tuple[float, float, float, float]]]:
    """A two-column table of long cells, like a cheat sheet: a header row, a rule under it,
    then rows; without the rules its sides look like two columns of text."""
    lines, rules = [], [(100, 180, 1500, 183), (100, 232, 1500, 235)]
    for k in range(8):
        y = 190 if k == 0 else 200 + 40 * k
        lines.append(_line(f"label {k} " + "v" * 18, 100, y, 700))
        lines.append(_line(f"setting {k} " + "w" * 30, 760, y, 1500))
    rules.append((100, 200 + 40 * 7 + 35, 1500, 200 + 40 * 7 + 38))
    return lines, rules


def test_a_rule_across_the_gutter_between_rows_makes_a_table_read_row_by_row():
    lines, rules = _ruled_table()
    by_columns = _order(build_blocks(lines, 2339))
    assert by_columns[:2] == ["label 0 " + "v" * 18, "label 1 " + "v" * 18]  # the stage alone: columns
    blocks = layout_page([from_line(line) for line in lines], 1654, 2339, rules=rules)
    rows = _order(blocks)  # each row's two cells, joined into one line
    assert [(t.split()[:2], t.split()[3:5]) for t in rows] == [
        (["label", str(k)], ["setting", str(k)]) for k in range(8)]


def test_a_rule_under_a_running_head_leaves_two_columns_below_it():
    lines = [_line("Journal of Examples", 100, 100, 600), _line("Vol. 3", 1400, 100, 1540)]
    for k in range(12):
        lines.append(_line(f"left {k} " + "x" * 40, 100, 250 + 40 * k, 780))
        lines.append(_line(f"right {k} " + "x" * 40, 860, 250 + 40 * k, 1540))
    blocks = layout_page([from_line(line) for line in lines], 1654, 2339, rules=[(100, 150, 1540, 153)])
    order = [t.split()[0] for t in _order(blocks) if t.split()[0] in ("left", "right")]
    assert order == ["left"] * 12 + ["right"] * 12


def test_an_em_dash_item_is_a_list_item_like_an_en_dash_one():
    lines = [_line("• We all are volunteers.", 150, 200, 700), _line("— You cannot impose on others.", 190, 240, 800),
             _line("–  You should be motivated.", 190, 280, 800), _line("—as a word", 150, 320, 500)]
    blocks = build_blocks(lines, 2339)
    assert [b.kind for b in blocks[:3]] == ["list", "list", "list"]
    assert blocks[1].lines[0].text == "— You cannot impose on others."  # the mark stays in the text


def test_a_numbered_heading_set_a_little_larger_is_a_title_and_a_toc_entry_is_not():
    body = _paragraph_lines(300, 5) + _paragraph_lines(560, 5)
    lines = body + [_line("1.2 Programs needed for development", 100, 480, 900, 36),  # 1.2x the body
                    _line("3 Rules of the game", 100, 800, 500, 30)]  # numbered, body size
    blocks = build_blocks(lines, 2339)
    kinds = {b.lines[0].text.split(" ")[0]: b.kind for b in blocks}
    assert kinds["1.2"] == "title" and kinds["3"] != "title"
    toc = [_line("5.1 README.Debian ... 29", 100, 200, 900, 36)]  # a contents entry, as large
    assert all(b.kind != "title" for b in build_blocks(toc + body, 2339))


def test_a_ruled_table_above_two_columns_is_cut_out_and_the_columns_stay_columns():
    lines, rules = _ruled_table()  # rows at y 190-515, rules at 180, 232 and 515
    for k in range(12):  # two columns of text right below, their gutter where the table's gap is
        lines.append(_line(f"left {k} " + "x" * 30, 100, 560 + 40 * k, 700))
        lines.append(_line(f"right {k} " + "x" * 40, 760, 560 + 40 * k, 1500))
    blocks = layout_page([from_line(line) for line in lines], 1654, 2339, rules=rules)
    order = [t.split()[0] for t in _order(blocks)]
    assert order[:8] == ["label"] * 8  # each table row's two cells, joined
    assert order[8:] == ["left"] * 12 + ["right"] * 12


def _two_sides(rows: int = 8) -> list[Line]:
    lines = []
    for k in range(rows):
        lines.append(_line(f"label {k} " + "v" * 18, 100, 240 + 40 * k, 700))
        lines.append(_line(f"setting {k} " + "w" * 30, 760, 240 + 40 * k, 1500))
    return lines


def test_a_boxed_grid_without_rules_between_rows_is_read_row_by_row():
    box = [(90, 225, 1510, 228), (90, 560, 1510, 563), (729, 226, 731, 561)]  # top, bottom, the inner line
    blocks = layout_page([from_line(line) for line in _two_sides()], 1654, 2339, rules=box)
    assert [t.split()[:2] for t in _order(blocks)] == [["label", str(k)] for k in range(8)]


def test_a_rule_between_two_columns_of_text_leaves_them_columns():
    column_rule = [(729, 230, 731, 555)]  # \\columnseprule: no horizontal rules close it
    blocks = layout_page([from_line(line) for line in _two_sides()], 1654, 2339, rules=column_rule)
    assert [t.split()[0] for t in _order(blocks)] == ["label"] * 8 + ["setting"] * 8


def test_a_rule_down_a_gap_narrower_than_a_gutter_parts_columns():
    """hvfloat's two-column pages: a contents column's page numbers stand 14 px from the next
    column's text (under the 18 px gutter), across a \\columnseprule. Without the rule each
    number is read into the body line beside it; an open rule down the gap parts the columns.
    A rule closed by horizontal rules at both ends (a boxed table's inner line) does not."""
    lines = []
    for k in range(8):
        lines.append(_line(f"{k}.1 Heading number {k}", 140, 240 + 40 * k, 500))
        lines.append(_line(f"{k + 3}", 700, 240 + 40 * k, 722))
        lines.append(_line(f"body {k} " + "w" * 30, 736, 240 + 40 * k, 1500))

    def glued(rules) -> int:
        order = _order(layout_page([from_line(line) for line in lines], 1654, 2339, rules=rules))
        return sum(1 for text in order if "body" in text and text.split()[0].isdigit())

    assert glued([]) == 8
    assert glued([(728, 230, 730, 555)]) == 0
    assert glued([(90, 225, 1510, 228), (90, 560, 1510, 563), (728, 226, 730, 561)]) == 8


def test_two_numbered_lists_side_by_side_are_two_columns():
    """moreenum's examples: three rows of examples, in each an enumerated list on either side of
    the gutter, rows level, labels set flush right ("10." starts left of "2."). Like two
    bulleted lists, each pair is two columns, not a table read row by row."""
    lines = []
    for group in range(3):
        top = 200 + 330 * group
        for side, x in (("left", 200), ("right", 900)):
            lines.append(_line(f"\\enum{side}{group}", x + 60, top, x + 300))
            for k, (label, text) in enumerate([("1.", "Liberty"), ("2.", "Equality"), ("3.", "Fraternity"),
                                               ("10.", "Meaning")]):
                start = x + 40 - 15 * len(label)
                lines.append(_line(f"{label} {text} {side}", start, top + 50 + 40 * k, x + 60 + 18 * len(text)))
    order = _order(layout_page([from_line(line) for line in lines], 1654, 2339))
    assert [("left" in t) for t in order] == ([True] * 5 + [False] * 5) * 3


def test_consecutive_table_rows_stay_one_table_block_whatever_their_cells_widths():
    lines = []
    for k, (label, value) in enumerate([("general", "geometry, ifthen"), ("if footnotes", "manyfoot"),
                                        ("if prose", "[left]lineno"), ("if cropmarks", "crop")]):
        y = 300 + 40 * k + (8 if k == 2 else 0)  # one row a little lower: a taller cell above it
        lines += [_line(label, 100, y, 100 + 15 * len(label)), _line(value, 500, y, 500 + 15 * len(value))]
    blocks = build_blocks(lines, 2339)
    assert [b.kind for b in blocks] == ["table"] and blocks[0].grid is not None and len(blocks[0].grid) == 4


def _listing_with_aligned_fields(last_crosses: bool = True) -> list[Line]:
    """Rows 108-111 of a code listing whose last fields start at one tab stop, a blank line
    under row 107 and just over row 112, which runs across that stop (xCJK2uni's page 3)."""
    lines = [_line("107 \\cs_generate_variant:Nn \\CJKtu_use_enc_map:n { x }", 376, 1201, 1071)]
    for k, name in enumerate(("GB", "JIS", "KS", "Bg5")):
        y = 1254 + 31 * k
        lines += [_line(f"{108 + k} \\__CJKtu_set_enc:nnnnnn {{ {name} }} {{ U{name} }}", 376, y, 944),
                  _line(f'{{ "A{k} }} {{ "B{k} }} {{ }} {{ }}', 1008, y, 1323)]
    if last_crosses:
        lines.append(_line('112 \\__CJKtu_set_enc:nnnnnn { Bg5+ } { UBg5plus } { "81 } { "40 }', 373, 1378, 1429))
    else:  # two cells a word gap apart: they say nothing of the gutter
        lines += [_line("112 cell", 373, 1378, 990), _line("112 other", 1000, 1378, 1429)]
    return lines


def test_aligned_fields_of_a_few_listing_rows_are_read_row_by_row():
    text = " ".join(_order(build_blocks(_listing_with_aligned_fields(), 2339)))
    assert text.index('"A0') < text.index("109") < text.index('"A1') < text.index("110") < text.index('"A2')
    assert text.index('"A3') < text.index("112")


def test_a_gutter_a_few_rows_deep_stays_a_gutter_under_two_cells():
    text = " ".join(_order(build_blocks(_listing_with_aligned_fields(last_crosses=False), 2339)))
    assert text.index("111") < text.index('"A0') < text.index('"A3')


def test_a_line_running_past_where_the_lines_under_it_stop_is_read_whole_first():
    lines = [_line("113 \\__CJKtu_set_enc:nnnnnn { GBK } { UGBK }", 375, 1407, 953),
             _line('{ "81 } { "40 } { "7E } { "80 }', 1009, 1407, 1426)]
    lines += [_line(f"{114 + k} \\group_begin: " + "x" * (4 * k), 375, 1446 + 30 * k, 582 + 80 * k)
              for k in range(5)]
    text = " ".join(_order(build_blocks(lines, 2339)))
    assert text.index("113") < text.index('"81') < text.index("114")


def test_a_contents_heading_under_a_centred_title_is_not_a_column_beside_it():
    """postage's first page: a centred title block, then 'Contents' at the left margin and the
    first contents row with its page number at the right. The band between 'Contents' and the
    title's lines is the title's margin, not a gutter."""
    lines = [_line("The postage package", 690, 338, 1131, 57), _line("Jan Heinrich Reimer", 762, 428, 1058, 40),
             _line("heinrich@heinrichreimer.com", 700, 474, 1110, 31), _line("Released 2018/05/29", 760, 537, 1049, 33),
             _line("Contents", 390, 699, 582, 47), _line("1 Introduction", 388, 811, 601), _line("1", 1400, 813, 1421),
             _line("2 Usage", 384, 867, 517, 41), _line("1", 1398, 872, 1426)]
    lines += [_line(f"body {k} " + "x" * 60, 384, 1100 + 40 * k, 1426) for k in range(10)]
    order = _order(build_blocks(lines, 2339))
    assert order.index("The postage package") < order.index("Released 2018/05/29") < order.index("Contents")
    assert order.index("Contents") < order.index("1 Introduction")


def test_a_ruled_column_level_with_the_contents_heading_under_a_centred_title_stays_a_column():
    """hvfloat's first page: a centred title block, then a two-column contents parted by a
    \\columnseprule; the right column starts level with the 'Contents' heading on the left. The
    title's margins are no gutter: the title ends at its gap, and the rule parts the columns from
    their first row, so the right column's first entries are not read before the left column."""
    lines = [_line("Example for fullpage floats", 476, 320, 1180, 53), _line("Herbert Voss", 722, 425, 929, 37),
             _line("June 26, 2021", 713, 505, 933, 43), _line("Contents", 245, 636, 415, 41)]
    for k in range(12):
        lines.append(_line(f"{k + 1} Left heading number {k + 1}", 246, 722 + 40 * k, 684))
        lines.append(_line(f"{k + 1}", 790, 722 + 40 * k, 812))
    for k in range(14):
        lines.append(_line(f"{k + 5}.3 Right entry number {k}", 883, 642 + 40 * k, 1335))
        lines.append(_line(f"{k + 5}", 1388, 642 + 40 * k, 1409))
    rule = [(820, 640, 832, 1300)]
    order = _order(layout_page([from_line(line) for line in lines], 1654, 2339, rules=rule))

    def at(start: str) -> int:
        return next(i for i, text in enumerate(order) if text.startswith(start))

    assert at("June 26, 2021") < at("Contents") < at("1 Left heading number 1")
    assert at("12 Left heading number 12") < at("5.3 Right entry number 0")
    assert "Contents" not in " ".join(text for text in order if "Right" in text)


def test_a_column_rule_parts_columns_when_scanned_boxes_cross_it():
    """hvfloat's first page, scanned: the padded boxes of a few left-column lines reach past the
    column rule, and a heading in the right column starts on it, so the rows' free bands beside
    the rule do not overlap from one row to the next. The rule itself is the gutter."""
    lines = []
    for k in range(16):
        y = 640 + 40 * k
        lines.append(_line(f"left line {k} " + "v" * 20, 245, y, 847 if k % 4 == 1 else 828))
        right_x0 = 840 if k == 10 else 884
        lines.append(_line(f"right line {k} " + "w" * 20, right_x0, y, 1410))
    rule = [(832, 637, 841, 1300)]
    order = _order(layout_page([from_line(line) for line in lines], 1654, 2339, rules=rule))
    sides = [text.split()[0] for text in order]
    assert sides == ["left"] * 16 + ["right"] * 16


def test_a_column_rule_parts_columns_when_a_leader_box_runs_over_it():
    """mdframed's contents: a leader's box on the left runs 4 px past the column rule, to 4 px
    from the right column's entry, so that row's only free band misses the rule; the rule still
    parts the columns there, and the columns are read one after the other."""
    lines = []
    for k in range(16):
        y = 958 + 40 * k
        lines.append(_line(f"6.{k} left entry " + "." * 20 + f" {k}", 236, y, 837 if k == 8 else 818))
        lines.append(_line(f"{k + 7}. Right entry {k + 20}", 841 if k == 8 else 838, y, 1466))
    rule = [(822, 955, 833, 1600)]
    order = _order(layout_page([from_line(line) for line in lines], 1654, 2339, rules=rule))
    assert [text.split()[1] for text in order] == ["left"] * 16 + ["Right"] * 16


def test_an_index_line_across_the_gutter_below_a_heading_is_cut_where_its_word_gap_allows():
    """The last row of a two-column index is one detector line over both columns, under a letter
    heading after a blank, so only one line of each column lies within four line heights of it;
    and the recogniser's word boxes end its left half 60 px short of the column's ink (the gap's
    centre lies on the left column's ink). It is cut all the same, and each half read in its column."""
    lines = []
    for k in range(10):
        y = 200 + 40 * k
        lines.append(_inked(f"left entry {k} {k + 3}", 100, y, 720, pad=6))
        lines.append(_inked(f"right entry {k} {k + 3}", 760, y, 1380, pad=6))
    lines += [_inked("T", 400, 640, 420), _inked("right entry 10 13", 760, 640, 1380, pad=6)]
    words = [Word("left entry 11 14", 0.99, [[100, 700], [660, 700], [660, 730], [100, 730]]),
             Word("right entry 11 14", 0.99, [[750, 700], [1380, 700], [1380, 730], [750, 730]])]
    lines.append(Line("left entry 11 14 right entry 11 14", 0.99,
                      [[94, 700], [1386, 700], [1386, 730], [94, 730]], words))
    order = _order(build_blocks(lines, 2339))
    assert order == ([f"left entry {k} {k + 3}" for k in range(10)] + ["T", "left entry 11 14"]
                     + [f"right entry {k} {k + 3}" for k in range(11)] + ["right entry 11 14"])


def test_a_skewed_scans_line_across_the_gutter_is_cut_at_the_gutter_of_the_deskewed_page():
    """A scan turned a degree: at the foot of the page a row's x drifts 30 px. A line the
    detector ran across the gutter there has its word gaps in the page's pixels; they are
    measured where the lines around them are, in the deskewed frame, and it is cut at the
    gutter (pdfreview p1's scan: its two columns' rows read across, 0.414 -> 0.047)."""
    slope = math.tan(math.radians(1.0))

    def turned(x: float, y: float) -> list[float]:  # a point of the level page, turned by the skew
        return [x - slope * y, y + slope * x]

    def quad(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
        return [turned(x0, y0), turned(x1, y0), turned(x1, y1), turned(x0, y1)]

    lines = []
    for k in range(12):
        y = 1700 + 40 * k
        left, right = (f"left entry {k} " + "x" * 20, 100, 720), (f"right entry {k} " + "y" * 20, 744, 1380)
        if k == 6:
            words = [Word(t, 0.99, quad(a, y, b, y + 30)) for t, a, b in (left, right)]
            lines.append(Line(f"{left[0]} {right[0]}", 0.99, quad(94, y, 1386, y + 30), words))
        else:
            lines += [Line(t, 0.99, quad(a - 6, y, b + 6, y + 30), [Word(t, 0.99, quad(a, y, b, y + 30))])
                      for t, a, b in (left, right)]
    order = _order(layout_page([from_line(line) for line in lines], 1654, 2339, skew=math.radians(1.0)))
    assert [t.split()[0] for t in order] == ["left"] * 12 + ["right"] * 12


def _first_row_crossing(paragraph_y: float) -> list[str]:
    """The texts `split_crossing` leaves of a two-column index (entries from y=200, 40 px apart;
    ink from x=100 and x=760) whose first row the detector boxed as one line over both columns,
    under a full-width paragraph line at `paragraph_y`. The leader dots of the index go unread,
    so most left entries end at x=560 and the first row's page number "3" stands 25 px after
    the "." read of its dots, the gutter 40 px after it."""
    from model_cache.layout.crossing import split_crossing
    lines = [_worded([("Locations", 100, 400), ("in", 412, 450), ("bold", 462, 540), ("indicate", 552, 800),
                      ("primary", 812, 1000), ("reference.", 1012, 1380)], paragraph_y)]
    lines.append(_worded([("left", 100, 170), ("entry", 182, 450), ("0", 462, 600), (".", 612, 640),
                          ("3", 665, 720), ("right", 760, 850), ("entry", 862, 980), ("0", 992, 1010)], 200))
    for k in range(1, 10):
        y = 200 + 40 * k
        lines.append(_inked(f"left entry {k}", 100, y, 560, pad=6))
        lines.append(_inked(f"right entry {k} {k + 3}", 760, y, 1380, pad=6))
    items = [make_item(from_line(line)) for line in lines]
    return [it.line.text for it in split_crossing(items, LayoutParams(), 0.0)]


def test_an_index_first_row_run_across_the_gutter_under_a_paragraph_is_cut_at_the_gutter():
    """sample-index p7: a paragraph a blank above the index ran through the gutter's x and kept
    the first row whole, which closed the gutter for the whole page. The paragraph is not the
    index's: only lines of the row's own run (to a blank) close a gutter. Of the row's two word
    gaps where the lines below stop and start again, the wider is cut: the narrower is where
    the unread dots end before the page number."""
    texts = _first_row_crossing(125)
    assert "left entry 0 . 3" in texts and "right entry 0" in texts


def test_a_paragraphs_line_right_above_a_crossing_row_keeps_it_whole():
    """The same line set at the rows' own spacing above the first row is of its run: it runs
    through the gap, and the row is not cut."""
    assert "left entry 0 . 3 right entry 0" in _first_row_crossing(165)


def test_three_index_columns_with_a_box_gutter_beside_only_one_are_read_column_by_column():
    """A three-column index of short entries, 30 px apart in ink. The first two columns' padded
    boxes nearly touch (10 px) while a box gutter of 20 px parts the second from the third. The
    rows line up with short items on both sides, like a table's, but the column nearest that
    gutter on its left, found between the ink, is text filling its column: the region is cut
    there (verse p25's scan read its lower half row by row across the three columns)."""
    from model_cache.layout.order import Region, _column_split
    items = []
    for col, (x0, pad) in enumerate(((100, 12), (460, 8), (822, 4))):
        widths = [(120, 200, 330, 180)[k % 4] for k in range(12)]
        items += [make_item(from_line(_inked(f"c{col} e{k}", x0, 200 + 40 * k, x0 + w, pad=pad)))
                  for k, w in enumerate(widths)]
    split = _column_split(Region(items, [(798.0, 818.0)]), LayoutParams())
    assert split is not None
    assert [{it.line.text[:2] for it in side} for side in split] == [{"c0", "c1"}, {"c2"}]


def _lettered_index() -> tuple[list[Line], list[str]]:
    """A two-column index of short entries, its gutter five line heights wide (no narrow gutter):
    the left column breaks at two letter headings with a blank row above and below each, the
    right column runs on through those blanks; the rows of the two sides line up."""
    left = [f"left{k} {k}" for k in range(6)] + ["N"] + [f"nleft{k} {k}" for k in range(6)] + ["O"] + \
        [f"oleft{k} {k}" for k in range(6)]
    right = [f"right{k} {k}" for k in range(len(left) + 4)]
    lines, row = [], 0
    for text in left:
        if text in ("N", "O"):
            row += 1
        lines.append(_line(text, 360 if len(text) == 1 else 300, 200 + 40 * row, 380 if len(text) == 1 else 480))
        row += 2 if text in ("N", "O") else 1
    lines += [_line(text, 860, 200 + 40 * k, 1060) for k, text in enumerate(right)]
    return lines, left + right


def test_an_index_whose_columns_break_at_their_own_letter_headings_is_read_column_by_column():
    lines, expected = _lettered_index()
    assert _order(build_blocks(lines, 2339)) == expected


def test_line_numbers_beside_a_listing_with_blank_lines_stay_row_by_row():
    """A listing's line numbers run on through the code's blank lines: the numbers are labels,
    each read with its line of code."""
    lines = []
    for k in range(20):
        lines.append(_line(str(148 + k), 300, 200 + 40 * k, 340))
        if k % 6 != 5:
            lines.append(_line(f"\\code{k} {{x}}%", 460, 200 + 40 * k, 900))
    order = _order(build_blocks(lines, 2339))
    assert order.index("149") < order.index("\\code1 {x}%") < order.index("150")


def test_two_bulleted_lists_side_by_side_are_read_list_by_list():
    """Two columns of short bulleted items on one baseline grid (a package's macro list): each
    side's rows line up with the other's like a table's, but a bullet leads every row of both:
    two lists, read one after the other."""
    lines = []
    for k in range(8):
        y = 200 + 40 * k
        lines += [_line(f"• \\left{k} ⇒ L{k}", 240, y, 440), _line(f"• \\right{k} ⇒ R{k}", 900, y, 1100)]
    order = _order(build_blocks(lines, 2339))
    assert [t.split()[1] for t in order] == [f"\\left{k}" for k in range(8)] + [f"\\right{k}" for k in range(8)]


def test_two_bulleted_lists_of_two_line_items_side_by_side_are_read_list_by_list():
    """Most items a name on its bullet's line and its macro on a second line indented to the
    name (some only the macro): only about half the rows start with a bullet, yet every row at
    the list's edge does."""
    lines = []
    for side, x, short in (("left", 240, (2, 3, 4)), ("right", 900, ())):
        y = 200
        for k in range(8):
            if k in short:
                lines.append(_line(f"• \\{side}{k} ⇒ X", x, y, x + 200))
                y += 60
            else:
                lines += [_line(f"• {side} name {k}", x, y, x + 260), _line(f"\\{side}{k} ⇒ X", x + 34, y + 40, x + 200)]
                y += 100
    words = " ".join(_order(build_blocks(lines, 2339))).split()
    assert words.index("\\left7") < words.index("right")


def test_a_table_of_names_and_values_set_close_is_read_row_by_row():
    """A borderless table of command names and their values, 23 px apart: as close as an index's
    columns, but its value column is well over twice as wide as the name column (a table's
    columns are as wide as their cells, close columns of text are alike): read row by row."""
    lines = [_line("Command Name", 300, 200, 540), _line("Default Value", 596, 200, 820)]
    values = ["/", ":", "am", "pm", "\\amname if morning, otherwise \\pmname", "in the morning",
              "in the afternoon", "\\amstring if morning, otherwise \\pmstring", "Half past", "Quarter past"]
    for k, value in enumerate(values):
        y = 240 + 40 * k
        lines += [_line(f"\\name{k}", 300, y, 440 + 10 * (k % 4) + (103 if k == 7 else 0)),
                  _line(value, 596, y, 596 + max(30, 15 * len(value)))]
    order = _order(build_blocks(lines, 2339))
    assert order.index("\\name3") < order.index("pm") < order.index("\\name4")


def test_a_macro_name_in_the_gap_over_the_next_listing_is_read_before_that_listing():
    """A documented macro's name sits in the left margin in the blank between two code
    listings, a little above the second listing's first line: it heads the second listing."""
    lines = [_line(f"{2 + k} \\code line {k}", 400, 300 + 36 * k, 1400, 27) for k in range(6)]
    lines += [_line(f"{8 + k} \\more code {k}", 400, 560 + 36 * k, 1400, 27) for k in range(6)]
    lines += [_line("\\first_macro", 80, 250, 330, 26), _line("Described here.", 400, 250, 700, 27),
              _line("\\second_macro", 80, 512, 330, 26)]
    order = [t.split()[0] for t in _order(build_blocks(lines, 2339))]
    assert order == (["\\first_macro", "Described"] + [str(2 + k) for k in range(6)] + ["\\second_macro"]
                     + [str(8 + k) for k in range(6)])


def _commands_table() -> list[Line]:
    """A table of commands and comments whose comment cells are empty on two rows: blanks on one
    side that the other's rows run through, as a column's own breaks are."""
    lines = []
    for k in range(16):
        lines.append(_line(f"\\cmd{k}", 300, 200 + 40 * k, 460))
        if k not in (5, 10):
            lines.append(_line(f"note{k} on it", 700, 200 + 40 * k, 1500))
    return lines


def test_a_ruled_table_with_empty_cells_on_one_side_is_read_row_by_row():
    """Between rules over both sides, just above the first row and just below the last (a
    booktabs table's body), the empty cells do not make the two sides columns."""
    rules = [(280, 180, 1520, 183), (280, 200 + 40 * 16, 1520, 203 + 40 * 16)]
    ruled = " ".join(_order(layout_page([from_line(line) for line in _commands_table()], 1654, 2339,
                                        rules=rules))).split()
    assert ruled.index("note0") < ruled.index("\\cmd1") < ruled.index("note1")
    unruled = " ".join(_order(build_blocks(_commands_table(), 2339))).split()
    assert unruled.index("\\cmd15") < unruled.index("note0")  # without the rules: two columns


def test_a_letter_heading_over_one_column_after_a_blank_keeps_the_columns_whole():
    """An index's letter heading centred over its column, after the letter skip, where the next
    column's own heading was not read: the rows below still continue both columns, so the page
    is read column by column, not in two bands."""
    left, right, lines = [], [], []
    for k in list(range(8)) + list(range(10, 18)):
        left.append(f"\\left{k} ... {k}")
        right.append(f"\\right{k} ... {k}")
        lines += [_line(left[-1], 100, 200 + 40 * k, 520), _line(right[-1], 700, 200 + 40 * k, 1120)]
    lines.append(_line("S", 318, 200 + 40 * 9, 342))
    left.insert(8, "S")
    assert _order(build_blocks(lines, 2339)) == left + right


def _macro_names_page() -> list[Line]:
    """A LaTeX package's documented code (ltxdoc): macro names set flush right in the left
    margin, their padded boxes reaching past the body's edge (ink 28 px apart), stacked from
    the first row of the paragraph and code that describe them; a code line's box stands a
    few pixels lower than the name beside it (show2e p2)."""
    text = "described " * 12
    lines = [_inked(f"intro {k} " + text, 402, 200 + 36 * k, 1390) for k in range(3)]
    lines += [_inked("\\showcs", 250, 400, 374, pad=20), _inked("\\showenv", 232, 430, 374, pad=20),
              _inked("The two variants are only wrappers.", 402, 400, 1000),
              _inked("11 \\newcommand* \\showcs [1] {%", 402, 436, 960),
              _inked("12 \\expandafter \\showcmd \\csname#1\\endcsname}", 402, 472, 1100)]
    lines += [_inked("\\showe@macro@N", 120, 560, 374, pad=20), _inked("\\showe@space@N", 110, 590, 374, pad=20),
              _inked("Macros for showing the internal macros.", 402, 560, 1100),
              _inked("16 \\newcommand* \\showe@macro@N [1] {%", 402, 596, 1000)]
    return lines


def test_macro_names_in_the_margin_head_the_paragraph_they_stand_beside():
    order = _order(build_blocks(_macro_names_page(), 2339))
    start = order.index("\\showcs")
    assert order[start:] == ["\\showcs", "\\showenv", "The two variants are only wrappers.",
                             "11 \\newcommand* \\showcs [1] {%", "12 \\expandafter \\showcmd \\csname#1\\endcsname}",
                             "\\showe@macro@N", "\\showe@space@N", "Macros for showing the internal macros.",
                             "16 \\newcommand* \\showe@macro@N [1] {%"]


def test_macro_names_stacked_up_to_their_codes_first_line_are_read_before_it():
    """ltxdoc's macro environment straight over code (epsfig p1): the names stand flush right
    in the margin, the last on the first code line's row, the others above it, their boxes a
    little taller than the line pitch (the first name's reaches into the code's first row);
    they are read before the code, not after the listing."""
    text = "described " * 12
    lines = [_inked(f"intro {k} " + text, 402, 200 + 36 * k, 1390, h=38) for k in range(3)]
    lines += [_inked("\\psfig", 300, 520, 374, pad=20, h=38), _inked("\\epsfig", 290, 556, 374, pad=20, h=38)]
    code = [f"{5 + k} \\let\\Gin@ewidth{k}" for k in range(12)]
    lines += [_inked(line, 402, 556 + 36 * k, 900, h=38) for k, line in enumerate(code)]
    order = _order(build_blocks(lines, 2339))
    assert order[order.index("\\psfig"):] == ["\\psfig", "\\epsfig"] + code


def test_a_margin_name_boxed_with_its_row_is_cut_where_a_scans_word_box_starts_early():
    """nccthm p10 (scan): "\\NCC@secskip The package shares ..." boxed as one line; the
    recogniser started "The" 26 px before the body's ink (the edge), further than half a line
    height. It is still cut there and the name read before the paragraph, not joined to its row."""
    text = "described " * 12
    lines = [_inked(f"intro {k} " + text, 430, 200 + 36 * k, 1387) for k in range(4)]
    words = [Word("\\secskip", 0.99, [[250, 400], [380, 400], [380, 430], [250, 430]]),
             Word("The package shares these commands", 0.99, [[404, 400], [1300, 400], [1300, 430], [404, 430]])]
    lines.append(Line("\\secskip The package shares these commands", 0.99,
                      [[242, 400], [1308, 400], [1308, 430], [242, 430]], words))
    lines += [_inked(f"body line {k} " + text, 430, 436 + 36 * k, 1387) for k in range(3)]
    lines.append(_inked("\\runskip", 300, 436, 380, pad=20))
    order = _order(build_blocks(lines, 2339))
    assert "The package shares these commands" in order
    assert order.index("\\secskip") < order.index("The package shares these commands")


def test_names_heading_a_paragraph_lead_it_though_a_row_below_took_a_name():
    """exam-n p10: "\\rubric" and "\\norubric" stand in the margin from a paragraph's first row;
    lower down the same paragraph "\\baserubric" stands on its row's baseline and is read into
    that row. The paragraph's left edge is its own lines', not that name's: the two names head
    the paragraph (they stood after it)."""
    text = "described " * 12
    lines = [_inked(f"intro {k} " + text, 402, 200 + 36 * k, 1390) for k in range(3)]
    lines += [_inked(f"para {k} " + text, 402, 400 + 36 * k, 1390) for k in range(6)]
    lines += [_inked("\\rubric", 300, 400, 374, pad=20), _inked("\\norubric", 280, 436, 374, pad=20),
              _inked("\\baserubric", 250, 544, 374, pad=20)]
    order = _order(build_blocks(lines, 2339))
    assert order.index("\\norubric") < order.index("para 0 " + text)
    assert order.index("para 3 " + text) < order.index("\\baserubric") < order.index("para 4 " + text)


def test_names_read_into_rows_below_still_end_the_entry_above():
    """fontaxes p13 (dtx code, the page's own geometry): two names head a sentence and its code;
    the next entry's two names each stand on the baseline of a line beside them and are read
    into those rows. That next entry still starts an entry of its own: read on as the first
    one's paragraph, it carried the first entry's names down after its own rows."""
    lines = [_inked(f"intro {k} " + "described " * 12, 427, 500 + 36 * k, 1390, pad=4) for k in range(3)]
    lines += [_inked("3.7 Tools", 428, 704, 587, pad=4, h=35),
              _inked("Check if family switching would yield an existing shape.", 427, 761, 1101, pad=4, h=36),
              _inked("\\checkfam", 114, 766, 398, pad=4, h=28), _inked("\\iffam", 165, 798, 398, pad=4, h=28),
              _inked("298 \\newif\\iffam", 427, 804, 777, pad=4, h=26)]
    lines += [_inked(f"{299 + k} \\code{k}", 427, 835 + 30.3 * k, 460 + 20 * (k % 4), pad=4, h=30) for k in range(11)]
    lines += [_inked("The results of splitting a family name.", 427, 1190, 882, pad=4, h=32),
              _inked("\\prefix", 114, 1192, 398, pad=4, h=28), _inked("\\suffix", 114, 1224, 398, pad=4, h=30),
              _inked("310 \\newcommand*\\prefix{}", 427, 1228, 934, pad=4, h=30),
              _inked("311 \\newcommand*\\suffix{}", 427, 1259, 934, pad=4, h=28)]
    order = _order(build_blocks(lines, 2200))
    start = order.index("\\checkfam")
    assert order[start:start + 4] == ["\\checkfam", "\\iffam",
                                      "Check if family switching would yield an existing shape.", "298 \\newif\\iffam"]
    assert order[-5:] == ["\\prefix", "The results of splitting a family name.", "\\suffix",
                          "310 \\newcommand*\\prefix{}", "311 \\newcommand*\\suffix{}"]


def test_a_name_over_its_date_stamp_still_follows_the_paragraph():
    # zhlipsum (the kit): "\zhlipsum" over "Updated: 2020-04-08", set nearly as large, beside a
    # syntax line and its description: l3doc's text layer reads the pair after the paragraph
    lines = [l for l in _macro_names_page() if "showe" not in l.text]
    lines += [_inked("\\zhlipsum", 250, 560, 374, pad=20), _inked("Updated: 2020-04-08", 180, 592, 374, pad=20, h=25),
              _inked("\\zhlipsum[<paragraphs>][<options>]", 402, 560, 1000),
              _inked("Inserts the dummy text of the given paragraphs.", 402, 600, 1200),
              _inked("Both arguments are optional.", 402, 636, 900)]
    order = _order(build_blocks(lines, 2339))
    assert order[-3:] == ["Both arguments are optional.", "\\zhlipsum", "Updated: 2020-04-08"]


def test_two_ruled_tables_side_by_side_are_read_one_after_the_other():
    """nucleardata's page: a table of a nuclide's properties on the left, one of its half-life in
    several units on the right, each with a rule under every row and none across the gutter.
    Their rows line up, and short cells beside short cells read like one table's rows."""
    lines, rules = [], []
    for k in range(10):
        y = 300 + 48 * k
        lines += [_line(f"prop{k}", 250, y, 420), _line(f"{k}.5", 520, y, 620),
                  _line(f"unit{k}", 900, y, 980), _line(f"{k}7 s", 1100, y, 1300)]
        rules += [(190, y + 40, 690, y + 42), (900, y + 40, 1430, y + 42)]
    blocks = layout_page([from_line(line) for line in lines], 1654, 2339, rules=rules)
    words = [w for t in _order(blocks) for w in t.split()]
    assert [w for w in words if w.startswith(("prop", "unit"))] == (
        [f"prop{k}" for k in range(10)] + [f"unit{k}" for k in range(10)])



def test_two_framed_panels_laid_out_alike_are_read_panel_by_panel():
    """arevdoc's page of font samples: two framed slides side by side, each a title, a formula
    and a note with blank lines between them at the same heights on both sides. Read like a
    table's rows, the two slides' titles, formulas and notes came out interleaved."""
    lines, rules = [], []
    for side, (x0, x1) in enumerate([(250, 780), (880, 1410)]):
        name = "LR"[side]
        for k, (y, rows) in enumerate([(300, 3), (480, 2), (620, 3)]):
            lines += [_line(f"{name} piece{k} row{j} " + "v" * 20, x0 + 40, y + 36 * j, x1 - 40) for j in range(rows)]
        rules += [(x0, 250, x1, 252), (x0, 760, x1, 762), (x0, 250, x0 + 2, 762), (x1 - 2, 250, x1, 762)]
    order = _order(layout_page([from_line(line) for line in lines], 1654, 2339, rules=rules))
    assert [t[0] for t in order] == ["L"] * 8 + ["R"] * 8


def test_a_name_over_a_forms_rows_that_touches_the_first_row_leaves_it_a_form():
    """A CV's references on a scan (CVCTAN p003): a name, then the address beside Phone/Fax/Email
    labels and their values. The name's padded box reaches 8 px into the first row; it stands
    over the rows, beside nothing, and the rows are still read label by value."""
    lines = [_line("Prof. Dr. Pro. Fessor", 360, 505, 672, 39),
             _line("Thesis supervisor", 360, 537, 583, 43), _line("Phone:", 695, 537, 796, 39),
             _line("+31-50-312.3456", 813, 538, 1026, 37),
             _line("P.O. Box 800", 360, 570, 534, 40), _line("Fax:", 695, 572, 762, 39),
             _line("+31-50-567.123", 813, 570, 1013, 40),
             _line("9700 AV Groningen", 359, 603, 610, 41), _line("Email:", 696, 602, 806, 40),
             _line("p.fessor@xxx.rug.nl", 808, 605, 1061, 40), _line("The Netherlands", 362, 640, 574, 36)]
    words = [w for t in _order(build_blocks(lines, 2339)) for w in t.split()]
    assert words.index("supervisor") < words.index("Phone:") < words.index("P.O.") < words.index("Fax:")


def test_a_centred_heading_boxed_in_pieces_ends_before_ruled_columns():
    """cyklop's glyph list: a centred section heading that the detector boxed in three pieces,
    over two columns of code points and names with a rule down the gutter. The heading ends at
    its gap; the columns under it are read column by column, not row by row."""
    lines = [_line("4. Private", 553, 1396, 701), _line("unicodes [sc] E000", 710, 1396, 979),
             _line(".. E058", 989, 1396, 1098)]
    for k in range(12):
        y = 1460 + 44 * k
        lines += [_line(f"E0{k:02d}", 191, y, 264), _line(f"left{k}.sc", 354, y, 650),
                  _line(f"E1{k:02d}", 902, y, 965), _line(f"right{k}.sc", 980, y, 1400)]
    rules = [(820, 1460, 832, 2000)]
    order = _order(layout_page([from_line(line) for line in lines], 1654, 2339, rules=rules))
    names = [w for t in order for w in t.split() if w.endswith(".sc")]
    assert names == [f"left{k}.sc" for k in range(12)] + [f"right{k}.sc" for k in range(12)]


def test_a_table_with_one_long_cell_is_still_read_row_by_row():
    """epspdfconversion's table of options: each option beside its explanation, a blank line
    between rows, and one explanation running to eight lines. Its columns are not cut apart."""
    lines, expected, y = [], [], 400
    for k, depth in enumerate([3, 1, 2, 1, 1, 8, 3, 1, 2, 1]):
        lines.append(_line(f"option{k}={{value}} | option{k}=other |", 263, y, 757 if k == 0 else 600))
        expected.append(f"option{k}")
        for j in range(depth):
            lines.append(_line(f"explains{k}.{j} " + "e" * 40, 786, y + 33 * j, 1390))
            expected.append(f"explains{k}.{j}")
        y += 33 * depth + 34
    words = [w for t in _order(build_blocks(lines, 2339)) for w in t.split()]
    assert [w.split("=")[0] for w in words if w.startswith(("option", "explains")) and "=other" not in w] == expected


def test_a_list_beside_a_paragraph_at_another_line_pitch_is_read_column_by_column():
    """A beamer slide in two columns (simpleplus p005): a heading and a numbered list on the
    left, a paragraph on the right whose lines run at a tighter pitch. The short list items
    overlap the paragraph's lines but stand level with none of them: two columns, not a table."""
    lines = [_line("Heading", 53, 263, 180, 43), _line("1. Statement", 76, 311, 255, 36),
             _line("2. Explanation", 76, 357, 270, 37), _line("3. Example", 74, 401, 232, 39)]
    text = ["Lorem ipsum dolor sit amet, consectetur", "adipiscing elit. Integer lectus nisl, ultricies in",
            "feugiat rutrum, porttitor sit amet augue.", "Aliquam ut tortor mauris. Sed volutpat ante",
            "purus, quis accumsan dolor."]
    lines += [_line(t, 628, 262 + 37.5 * k, 1196 if k < 4 else 985, 33) for k, t in enumerate(text)]
    order = _order(build_blocks(lines, 768))
    assert order == ["Heading", "1. Statement", "2. Explanation", "3. Example"] + text

def _boxed_with_its_row(name: str, nx0: float, text: str, y: float, x1: float = 1387) -> Line:
    """A margin name and the body row beside it, a word space apart, boxed as one OCR line."""
    h = 30
    words = [Word(name, 0.99, [[nx0, y], [386, y], [386, y + h], [nx0, y + h]]),
             Word(text, 0.99, [[399, y], [x1, y], [x1, y + h], [399, y + h]])]
    return Line(f"{name} {text}", 0.99, [[nx0 - 8, y], [x1 + 8, y], [x1 + 8, y + h], [nx0 - 8, y + h]], words)


def test_margin_names_boxed_with_the_rows_beside_them_head_their_paragraph():
    """letter.cls's documented code (letter p21): four macro names flush right in the left margin
    stand a word space from the paragraph and the code line that describe them; the detector
    boxed each with its row. Cut at the body's left edge they are margin names, read before the
    paragraph as the text layer has them, not glued onto its rows."""
    text = "described " * 12
    lines = [_inked(f"intro {k} " + text, 399, 200 + 36 * k, 1387) for k in range(4)]
    lines += [_boxed_with_its_row("\\ccname", 296, "This document class is for documents", 400),
              _boxed_with_its_row("\\enclname", 272, "a version for another language, various", 432),
              _boxed_with_its_row("\\pagename", 272, "English words that require replacement.", 464, 1340),
              _boxed_with_its_row("\\headtoname", 246, "359 \\newcommand*\\ccname{cc}", 496, 742)]
    lines += [_inked(f"{360 + k} \\newcommand*\\name{k}", 399, 528 + 32 * k, 795) for k in range(3)]
    order = _order(build_blocks(lines, 2339))
    start = order.index("\\ccname")
    assert order[start:start + 8] == [
        "\\ccname", "\\enclname", "\\pagename", "\\headtoname", "This document class is for documents",
        "a version for another language, various", "English words that require replacement.",
        "359 \\newcommand*\\ccname{cc}"]



def _option_entries(flush_left: bool = False) -> list[Line]:
    """prooftrees' options: each option's name set flush right in the left margin on the row of
    its value syntax, its negation and its type under it, the type on the row of the entry's
    "Default:" line; then the description."""
    full = "text " * 40

    def label(text: str, y: float) -> Line:
        width = 11 * len(text)
        return _line(text, 100, y, 100 + width) if flush_left else _line(text, 372 - width, y, 372)

    lines = [_line(f"intro{k} " + full, 395, 100 + 36 * k, 1500) for k in range(3)]
    y = 220
    for name in ("auto move", "line numbering", "single branches"):
        lines += [label(name, y + 4), _line("= true|false", 395, y, 560), label(f"not {name}", y + 33),
                  label("Forest boolean register", y + 60), _line("Default: true", 395, y + 65, 580)]
        lines += [_line(f"describe {name} {k} " + full, 395, y + 115 + 36 * k, 1500) for k in range(3)]
        lines.append(_line(f"Example: {name}=false", 395, y + 240, 800))
        y += 320
    return lines


def test_an_options_label_box_is_read_row_by_row_with_its_entry():
    order = _order(build_blocks(_option_entries(), 2339))
    start = order.index("auto move")
    assert order[start:start + 6] == ["auto move", "= true|false", "not auto move", "Forest boolean register",
                                      "Default: true", "describe auto move 0 " + "text " * 40]


def test_a_note_set_flush_left_in_the_margin_is_read_whole():
    # cnltx's "Introduced in / version 1.3" beside a command's description is no label box:
    # its text layer keeps the note's lines together
    order = _order(build_blocks(_option_entries(flush_left=True), 2339))
    start = order.index("auto move")
    assert order[start:start + 3] == ["auto move", "not auto move", "Forest boolean register"]
