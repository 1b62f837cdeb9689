"""The layout stage's contract: typed lines in, ordered typed blocks out (model_cache/layout)."""

from __future__ import annotations

import math

import pytest

from model_cache.layout import LayoutLine, from_line, layout_page
from outputs.model import Line, Word

W, H = 1654, 2339  # an A4 page at 200 dpi


def line(text: str, x0: float, y0: float, x1: float, h: float = 30, **notes) -> LayoutLine:
    return LayoutLine(text, 0.99, [[x0, y0], [x1, y0], [x1, y0 + h], [x0, y0 + h]], **notes)


def order(blocks) -> list[str]:
    return [ln.text for b in blocks for ln in b.lines]


@pytest.mark.parametrize("mark", ["•", "▶", "■", "◦", "-"])
def test_every_bullet_starts_a_list_item(mark):
    """The bullet sets had drifted: three "•" lines made 3 blocks, the same lines with "▶" made 1."""
    lines = [from_line(Line(f"{mark} item {k}", 0.99, line("", 100, 200 + 40 * k, 700).box))
             for k in range(3)]
    blocks = layout_page(lines, W, H)
    assert [(b.kind, b.text) for b in blocks] == [("list", f"{mark} item {k}") for k in range(3)]


def test_a_bullet_found_in_the_pixels_is_the_same_as_one_read():
    read = [from_line(Line(f"▶ item {k}", 0.99, line("", 100, 200 + 40 * k, 700).box)) for k in range(3)]
    found = [line(f"item {k}", 100, 200 + 40 * k, 700, bullet="▶") for k in range(3)]
    assert [b.text for b in layout_page(read, W, H)] == [b.text for b in layout_page(found, W, H)]


def column(prefix: str, x0: float, x1: float, y0: float, n: int, step: float = 40) -> list[LayoutLine]:
    return [line(f"{prefix}{k} " + "x" * 30, x0, y0 + step * k, x1) for k in range(n)]


def firsts(blocks) -> list[str]:
    return [t.split()[0] for t in order(blocks)]


def test_two_columns_with_a_spanning_title_and_figure():
    """A paper page: title and abstract across both columns, two columns, a figure (its labels
    scattered over both columns' width) and its caption across the page, two more columns."""
    lines = [line("A Title of the Paper", 400, 150, 1250, 60), line("abstract " + "a " * 60, 150, 260, 1500)]
    lines += column("L", 150, 800, 350, 10) + column("R", 860, 1500, 350, 10)
    labels = [line("0.5", 300, 820, 350), line("axis", 700, 900, 780), line("1.0", 1300, 820, 1350),
              line("time (s)", 800, 1000, 950)]
    caption = line("Figure 1: Results of the experiment across the page width.", 150, 1080, 1500)
    lines += labels + [caption] + column("M", 150, 800, 1180, 8) + column("N", 860, 1500, 1180, 8)
    got = firsts(layout_page(lines, W, H, figures=[(250, 800, 1400, 1050)]))
    want = (["A", "abstract"] + [f"L{k}" for k in range(10)] + [f"R{k}" for k in range(10)]
            + ["0.5", "1.0", "axis", "time", "Figure"] + [f"M{k}" for k in range(8)]
            + [f"N{k}" for k in range(8)])
    assert got == want


def test_two_columns_with_a_spanning_table_between_them():
    lines = column("L", 150, 800, 300, 10) + column("R", 860, 1500, 300, 10)
    lines.append(line("Table 2: Timings of the runs.", 500, 760, 1150))
    for r in range(4):  # a table across the page: cells on both sides of the gutter
        lines += [line(f"t{r}a", 200, 820 + 40 * r, 400), line(f"t{r}b", 700, 820 + 40 * r, 830),
                  line(f"t{r}c", 1000, 820 + 40 * r, 1100), line(f"t{r}d", 1300, 820 + 40 * r, 1400)]
    lines += column("M", 150, 800, 1040, 6) + column("N", 860, 1500, 1040, 6)
    blocks = layout_page(lines, W, H)
    want = ([f"L{k}" for k in range(10)] + [f"R{k}" for k in range(10)] + ["Table"]
            + [f"t{r}{c}" for r in range(4) for c in "abcd"] + [f"M{k}" for k in range(6)]
            + [f"N{k}" for k in range(6)])
    assert firsts(blocks) == want
    table = next(b for b in blocks if b.kind == "table")
    assert table.grid == [[f"t{r}{c}" for c in "abcd"] for r in range(4)]
    assert next(b for b in blocks if b.text.startswith("Table")).kind == "caption"


@pytest.mark.parametrize("text, kind", [("Table: Table caption", "caption"),
                                        ("Figure: A sketch of the setup", "caption"),
                                        ("Tables are set with booktabs", "text")])
def test_an_unnumbered_caption_is_a_caption(text, kind):
    """beamer sets a caption without a number as "Table: ..." (simpleplus p6); a sentence whose
    first word starts like a label ("Tables ...") is none."""
    lines = column("L", 150, 1500, 200, 6) + [line(text, 500, 500, 1100)] + column("M", 150, 1500, 600, 6)
    assert kind_of(text, layout_page(lines, W, H)) == kind


def test_three_columns_of_unequal_width():
    lines = column("A", 100, 400, 200, 12) + column("B", 460, 1000, 200, 12) + column("C", 1060, 1550, 200, 9)
    assert firsts(layout_page(lines, W, H)) == ([f"A{k}" for k in range(12)] + [f"B{k}" for k in range(12)]
                                               + [f"C{k}" for k in range(9)])


def test_footnotes_are_marked_and_follow_the_body():
    body = [line(f"b{k} " + "w " * 50, 150, 300 + 40 * k, 1500) for k in range(20)]
    notes = [line("1 A footnote set smaller than the body text.", 150, 2050, 1200, 22),
             line("2 And a second one.", 150, 2080, 700, 22)]
    footer = [line("7", 800, 2230, 830)]
    blocks = layout_page(notes + footer + body, W, H)
    assert [b.kind for b in blocks][-3:] == ["footnote", "footnote", "footer"]
    assert blocks[-3].text.startswith("1 A footnote")


def test_a_slide_title_bullets_and_a_text_box():
    sw, sh = 1280, 960
    lines = [line("Slide title", 100, 60, 700, 70)]
    lines += [line(f"point {k}", 160, 250 + 90 * k, 900, 45, bullet="▶") for k in range(3)]
    lines += [line("a text box", 950, 700, 1200, 35), line("in the corner", 950, 745, 1200, 35)]
    blocks = layout_page(lines, sw, sh)
    assert [b.kind for b in blocks] == ["title", "list", "list", "list", "text"]
    assert blocks[-1].text == "a text box\nin the corner"


def test_a_table_of_contents_with_leaders_is_read_row_by_row():
    lines = []
    for k in range(6):
        y = 300 + 45 * k
        lines += [line(f"{k + 1} Chapter {k}", 150, y, 600, leader=True), line(str(3 + 7 * k), 1450, y, 1490)]
    blocks = layout_page(lines, W, H)
    assert [b.kind for b in blocks] == ["table"]
    assert order(blocks) == [f"{k + 1} Chapter {k} ... {3 + 7 * k}" for k in range(6)]


def test_vertical_cjk_is_read_top_to_bottom_right_to_left():
    lines = [LayoutLine(f"第{k}列竖排文字内容", 0.99, [[1400 - 80 * k, 200], [1440 - 80 * k, 200],
                                                    [1440 - 80 * k, 900], [1400 - 80 * k, 900]])
             for k in range(8)]
    assert order(layout_page(list(reversed(lines)), W, H)) == [f"第{k}列竖排文字内容" for k in range(8)]


def test_a_line_set_vertically_is_never_joined_into_a_row():
    """A page turned for its sideways caption (hvfloat): the running head, upright on the
    original page, is now a vertical line close beside the caption's rows. It stays a line of
    its own instead of being glued onto the row its middle stands on."""
    rows = [line(f"caption row {k} of a figure turned on its page", 1270, 1064 + 40 * k, 2108, h=36)
            for k in range(4)]
    head = LayoutLine("2.1 Definition on an odd page", 0.99,
                      [[2157, 941], [2207, 941], [2207, 1327], [2157, 1327]])
    texts = [ln.text for b in layout_page(rows + [head], 2339, 1654) for ln in b.lines]
    assert "2.1 Definition on an odd page" in texts
    assert all(t.startswith("caption row") for t in texts if t != "2.1 Definition on an odd page")


def test_a_text_layer_that_reads_right_keeps_its_order_and_gets_kinds():
    """A running head drawn last in the content stream stays last (that order reads right),
    and still gets its kind."""
    lines = [line(f"p{k} " + "w " * 50, 150, 300 + 40 * k, 1500, origin="textlayer") for k in range(6)]
    lines.append(line("Running head", 150, 120, 600, origin="textlayer"))
    blocks = layout_page(lines, W, H, keep_order=True)
    assert order(blocks)[-1] == "Running head" and blocks[-1].kind == "header"


def test_a_text_layer_drawn_out_of_order_gets_the_stages_order():
    lines = [line(f"p{k} " + "w " * 50, 150, 300 + 40 * k, 1500, origin="textlayer") for k in range(6)]
    blocks = layout_page(list(reversed(lines)), W, H, keep_order=True)
    assert firsts(blocks) == [f"p{k}" for k in range(6)]


def test_pre_layout_lines_are_kept_and_replayed(tmp_path, monkeypatch):
    import numpy as np

    from model_cache.layout.replay import ENV, PageLines, cached
    rgb = np.zeros((4, 5, 3), dtype=np.uint8)
    page = PageLines([line("kept", 1, 2, 3, bullet="•", leader=True)], 5, 4, 90)
    calls = []

    def read() -> PageLines:
        calls.append(1)
        return page

    assert cached(rgb, "s", read) is page  # unset: nothing stored
    monkeypatch.setenv(ENV, str(tmp_path))
    first, again = cached(rgb, "s", read), cached(rgb, "s", read)
    assert len(calls) == 2 and again == first == page
    cached(rgb, "other settings", read)
    assert len(calls) == 3 and len(list(tmp_path.glob("*.json"))) == 2


def test_a_replay_only_run_never_recognises_an_unrecorded_page(tmp_path, monkeypatch):
    import numpy as np
    import pytest

    from model_cache.layout.replay import ENV, ONLY_ENV, PageLines, cached
    rgb = np.zeros((4, 5, 3), dtype=np.uint8)
    page = PageLines([line("kept", 1, 2, 3)], 5, 4)
    monkeypatch.setenv(ENV, str(tmp_path))
    cached(rgb, "s", lambda: page)  # recorded
    monkeypatch.setenv(ONLY_ENV, "1")
    assert cached(rgb, "s", lambda: pytest.fail("recognised")) == page
    with pytest.raises(LookupError):
        cached(rgb, "other settings", lambda: pytest.fail("recognised"))


def _hyphenated_paragraph() -> tuple[list[LayoutLine], Line]:
    """Eight text-layer rows of one paragraph; rows 3 and 4 are one line as PDFium reads it
    ("... com-parable ..."), its box two rows high."""
    rows = [line(f"r{k} " + "w " * 50, 150, 300 + 40 * k, 1500, origin="textlayer", font_size=30.0)
            for k in range(8)]
    rows[3].text = rows[3].text + " com-"
    rows[4].text = "parable " + rows[4].text
    whole = Line(rows[3].text + rows[4].text, 0.99, [[150, 420], [1500, 420], [1500, 490], [150, 490]])
    return rows, whole


def test_a_line_joined_over_a_hyphen_is_laid_out_as_rows_and_handed_back_whole():
    from model_cache.layout.lines import Joined

    rows, whole = _hyphenated_paragraph()
    for k in (3, 4):
        rows[k].joined = Joined(whole, k - 3, 2)
    for keep_order in (False, True):
        blocks = layout_page(rows, W, H, keep_order=keep_order)
        assert len(blocks) == 1 and blocks[0].kind == "text"
        assert [ln.text for ln in blocks[0].lines][2:5] == [rows[2].text, whole.text, rows[5].text]
        assert blocks[0].lines[3] is whole


def test_the_joined_line_as_one_tall_box_cuts_the_paragraph():
    """Why the rows are laid out: the same line given whole reads as larger type."""
    rows, whole = _hyphenated_paragraph()
    tall = line(whole.text, 150, 420, 1500, h=70, origin="textlayer", font_size=30.0)
    blocks = layout_page(rows[:3] + [tall] + rows[5:], W, H, keep_order=True)
    assert len(blocks) > 1


def test_rows_of_a_joined_line_not_kept_together_stay_rows():
    from model_cache.layout.lines import Joined, output_lines

    rows, whole = _hyphenated_paragraph()
    first, second = (replace_joined(rows[k], Joined(whole, k - 3, 2)) for k in (3, 4))
    assert [ln.text for ln in output_lines([first])] == [rows[3].text]
    assert [ln.text for ln in output_lines([second, first])] == [rows[4].text, rows[3].text]
    assert output_lines([first, second])[0] is whole


def replace_joined(layout_line: LayoutLine, joined) -> LayoutLine:
    from dataclasses import replace
    return replace(layout_line, joined=joined)


@pytest.mark.parametrize("note", ["1The document assumes a newer system.", "²Second note, raised."])
def test_a_footnote_whose_mark_is_glued_to_its_text(note):
    """A text layer reads a raised note mark glued to the note ("1The ..."), as OCR often does."""
    body = [line(f"b{k} " + "w " * 50, 150, 300 + 40 * k, 1500) for k in range(20)]
    blocks = layout_page(body + [line(note, 150, 2050, 1200, 22)], W, H)
    assert blocks[-1].kind == "footnote"


def test_a_small_closing_line_starting_with_a_number_is_no_footnote():
    body = [line(f"b{k} " + "w " * 50, 150, 300 + 40 * k, 1500) for k in range(20)]
    blocks = layout_page(body + [line("3D models are shown below.", 150, 2050, 1200, 22)], W, H)
    assert blocks[-1].kind != "footnote"


def test_a_contents_page_spaced_wide_is_one_table_of_contents():
    """A text layer's contents entries carry their dots in the text; set with more space between
    them than a paragraph's lines, each was a paragraph of its own (maint-guide's contents pages)."""
    entries = [line(f"5.{k} Entry number {k} " + ". " * 30 + f"{29 + k}", 200, 300 + 50 * k, 1500,
                    h=22, origin="textlayer") for k in range(6)]
    prose = [line("A paragraph after the contents, ending with a number like 2019", 200, 700, 1500,
                  h=22, origin="textlayer")]
    blocks = layout_page(entries + prose, W, H, keep_order=True)
    assert [(b.kind, len(b.lines)) for b in blocks] == [("table", 6), ("text", 1)]


def _skewed_index(degrees: float, gutter: float, box_height: float = 30, pitch: float = 40,
                  rows: int = 40) -> list[LayoutLine]:
    """Three columns of index entries (short lines, level boxes) on a page whose baselines run
    at `degrees` (image coordinates, y down): each column's edge drifts down the page."""
    slope = math.tan(math.radians(degrees))
    lines = []
    for col in range(3):
        x = 100 + col * (420 + gutter)
        for row in range(rows):
            y = 150 + pitch * row
            width = 420 - 60 * (row % 4)
            # turned by the skew: a point (x, y) of the level page moves to (x - slope y, y + slope x)
            lines.append(line(f"c{col}r{row}", x - slope * y, y + slope * x, x - slope * y + width, box_height))
    return lines


def test_a_skew_measured_in_the_pixels_opens_a_gutter_the_boxes_drift_across():
    """A detector's level boxes on a scan a degree off: the columns' edges drift 30 px down the
    page, more than the gutter. The ink's skew (model_cache/ppocr/skew.py) puts them back."""
    lines = _skewed_index(1.0, gutter=24)
    measured = layout_page(lines, W, H, skew=math.radians(1.0))
    assert order(measured) == [f"c{c}r{r}" for c in range(3) for r in range(40)]
    assert order(layout_page(lines, W, H)) != order(measured)  # the boxes say level: rows read across


def test_the_unit_of_a_blurred_scan_is_its_row_pitch_not_its_swollen_boxes():
    """On a blurred scan the detector's boxes grow taller (here 46 px at a 40 px pitch), and
    every threshold in line heights with them; a gutter of 0.6 units stays 0.6 of the pitch."""
    lines = _skewed_index(0.0, gutter=16, box_height=46)
    assert order(layout_page(lines, W, H)) == [f"c{c}r{r}" for c in range(3) for r in range(40)]


def test_figures_down_a_ruled_right_column_are_read_after_the_left_column():
    """hvfloat's page: text down the left column (a heading after a blank half way), charts and
    their captions down the right one, a \\columnseprule between. Each chart's region, grown for
    its labels, reaches over the rule into the left column. The left column is read first, whole;
    then the right one, each chart before its caption, the last chart at the column's end."""
    rule = [(820, 230, 832, 1890)]
    lines = column("L", 245, 812, 240, 14) + [line("Heading after a blank", 245, 900, 700, 38)]
    lines += column("M", 245, 812, 980, 12)
    charts = [(798, 240 + 420 * k, 1454, 420 + 420 * k) for k in range(4)]
    for k, (_, y0, _, y1) in enumerate(charts):
        lines.append(line(f"{200 + k}", 860, y0 + 40, 900))  # a tick label inside the chart
        if k < 3:
            lines.append(line(f"C{k} caption of the chart", 900, y1 + 10, 1360))
    got = firsts(layout_page(lines, W, H, figures=charts, rules=rule))
    want = ([f"L{k}" for k in range(14)] + ["Heading"] + [f"M{k}" for k in range(12)]
            + ["200", "C0", "201", "C1", "202", "C2", "203"])
    assert got == want


def _turned(box, angle: float):
    c, s = math.cos(angle), math.sin(angle)
    return [[x * c - y * s, x * s + y * c] for x, y in box]


def test_a_column_rule_on_a_turned_scan_still_parts_the_columns():
    """hvfloat on a scan turned 1.5 degrees: a \\columnseprule in a 12 px gap between the columns'
    boxes (under a gutter's width). The rule is found in the pixels, where its box is as wide as
    the turn makes it; the lines are laid out deskewed. Taken as found, the rule's middle falls
    inside the left column's boxes, and each row was read across both columns."""
    angle = math.radians(1.5)
    lines = []
    for k in range(20):
        y = 300 + 40 * k
        for name, x0, x1 in (("L", 150, 800), ("R", 812, 1460)):
            box = _turned([[x0, y], [x1, y], [x1, y + 30], [x0, y + 30]], angle)
            lines.append(LayoutLine(f"{name}{k} " + "x" * 30, 0.99, box))
    ends = _turned([[806, 280], [806, 1100]], angle)
    rule = [(min(p[0] for p in ends) - 1, ends[0][1], max(p[0] for p in ends) + 1, ends[1][1])]
    got = firsts(layout_page(lines, W, H, rules=rule, skew=angle))
    assert got == [f"L{k}" for k in range(20)] + [f"R{k}" for k in range(20)]


def body_with(head: LayoutLine, stroke: float = 1.4) -> list[LayoutLine]:
    """A paragraph above and below `head` (set at y=580, a blank line apart), all at the same box
    height, the body's strokes `stroke` wide."""
    above = [line("w " * 40, 150, 300 + 40 * k, 1500, stroke=stroke) for k in range(6)]
    below = [line("w " * 40, 150, 660 + 40 * k, 1500, stroke=stroke) for k in range(6)]
    return above + [head] + below


def kind_of(text: str, blocks) -> str:
    return next(b.kind for b in blocks if b.text == text)


@pytest.mark.parametrize("heading", ["6.3 Two column mode", "Related work", "3.1 设置选项"])
def test_a_heading_set_bold_at_the_body_size_is_a_title(heading):
    """Its box is no taller than the body's (no descenders, say); its strokes are heavier."""
    blocks = layout_page(body_with(line(heading, 150, 580, 600, stroke=2.2)), W, H)
    assert kind_of(heading, blocks) == "title"
    blocks = layout_page(body_with(line(heading, 150, 580, 600, stroke=1.45)), W, H)
    assert kind_of(heading, blocks) == "text"


@pytest.mark.parametrize("heading", ["Contents", "可用的样式"])
def test_a_heading_in_larger_type_whose_box_is_barely_taller_is_a_title(heading):
    """A short word without descenders, set a size up (a slide's frame title, \\section*{Contents}),
    boxed only 1.13 times as tall as the body's lines: its characters are half as wide again.
    The same box with the body's character width stays text; a Chinese character counts as two."""
    cells = 8 if heading == "Contents" else 10
    wide = line(heading, 150, 580, 150 + cells * 51, h=34, stroke=1.4)
    assert kind_of(heading, layout_page(body_with(wide), W, H)) == "title"
    narrow = line(heading, 150, 580, 150 + cells * 34, h=34, stroke=1.4)
    assert kind_of(heading, layout_page(body_with(narrow), W, H)) == "text"


@pytest.mark.parametrize("text", [
    "\\end{tikzpicture}",                     # code in a heavier font
    "85 \\immediate\\write\\@bibdataout{%",    # a numbered line of code
    "The package provides these commands:",   # a lead-in to a list
    "E(x) = ∫ f(x) dx",                       # a displayed formula
    "hidelinks 2",                            # an index entry with its page number
    "7 Getting Obsessed 5",                   # a bold contents entry
    "p.lineTo(xcenter, 1.5*inch)",            # a method call
    "from reportlab.lib.units import inch",   # an import
    "author@example.org",
    "www.internetmarke.de",
])
def test_heavy_lines_that_are_no_headings_stay_text(text):
    blocks = layout_page(body_with(line(text, 150, 580, 600, stroke=2.2)), W, H)
    assert kind_of(text, blocks) == "text"


def test_a_tall_footnote_sentence_or_formula_is_no_title():
    """A raised note mark or a formula's integral makes the box taller than a heading's."""
    for text in ["5 Note that capitalization may differ from the project.", "f(x) = ∑ a_k x^k"]:
        blocks = layout_page(body_with(line(text, 150, 575, 1200, h=40)), W, H)
        assert kind_of(text, blocks) == "text"


def test_a_bold_heading_at_the_top_of_the_text_is_a_title_but_a_bold_running_head_is_not():
    """Both stand in the page's top band; only the heading has a block (the running head) above it."""
    head = line("3.2 Ready lens settings", 150, 60, 700, stroke=2.2)
    heading = line("3.1.1 Object on the right", 150, 150, 700, stroke=2.2)
    body = [line("w " * 40, 150, 230 + 40 * k, 1500, stroke=1.4) for k in range(12)]
    blocks = layout_page([head, heading] + body, W, H)
    assert kind_of("3.1.1 Object on the right", blocks) == "title"
    assert kind_of("3.2 Ready lens settings", blocks) != "title"


def test_a_bold_heading_set_tight_over_its_lines_is_a_title_of_its_own():
    """No blank line under it, and as wide as the lines under it (a changes list under its
    author's name, a heading in a narrow column): the bold line alone is the title; a bold
    first line that reads as a sentence is not."""
    above = [line("w " * 12, 150, 300 + 40 * k, 560, stroke=1.4) for k in range(6)]
    rest = [f"added text {k} and more words to fill" for k in range(4)]
    for first, kind in [("Changes by green author", "title"), ("Note that the class sets these.", "text")]:
        para = [line(first, 150, 580, 560, stroke=2.2)]
        para += [line(text, 150, 620 + 40 * k, 560, stroke=1.4) for k, text in enumerate(rest)]
        blocks = layout_page(above + para, W, H)
        assert order(blocks)[-5:] == [first] + rest
        assert [b.kind for b in blocks if first in b.text] == [kind]


@pytest.mark.parametrize("number", ["55/92", "17"])
def test_a_running_head_with_its_page_number_at_the_other_margin_is_no_title(number):
    """The page number's box stands taller than the body's (a rule under it, say), and the
    row's boxes together read as large type."""
    head = [line("Debian Edu Manual", 150, 60, 700, h=34), line(number, 1400, 52, 1500, h=46)]
    body = [line("w " * 40, 150, 200 + 40 * k, 1500) for k in range(12)]
    blocks = layout_page(head + body, W, H)
    assert [b.kind for b in blocks if "Debian Edu Manual" in b.text] != ["title"]


def test_numbered_steps_set_heavy_one_after_another_are_list_items():
    """"1. Click ...", "2. Browse ...": a manual's steps, each its own block, drawn heavier than
    the body, are list items, not titles; a numbered heading with its text under it stays a title."""
    body = [line("w " * 40, 150, 300 + 40 * k, 1500, stroke=1.4) for k in range(6)]
    texts = ["点击屏幕右侧的导入标签", "浏览本地磁盘", "选择可用的用户模板", "点击右下角的导入按钮"]
    steps = [line(f"{k + 1}. {text}", 150, 580 + 70 * k, 900, stroke=2.2) for k, text in enumerate(texts)]
    heading = line("3.4 Adding users", 150, 900, 600, stroke=2.2)
    after = [line("w " * 40, 150, 970 + 40 * k, 1500, stroke=1.4) for k in range(6)]
    blocks = layout_page(body + steps + [heading] + after, W, H)
    assert [b.kind for b in blocks if any(t in b.text for t in texts)] == ["list"] * 4
    assert kind_of("3.4 Adding users", blocks) == "title"


def test_a_slides_numbered_items_are_list_items_whatever_their_size():
    """A slide's enumerate (simpleplus p5): "1. Statement" and "3. Example" set larger than
    "2. Explanation" were two headings and a paragraph; they count on, so they are three items."""
    body = [line("w " * 40, 150, 300 + 40 * k, 1500) for k in range(6)]
    items = [line("1. Statement", 150, 600, 420, h=40), line("2. Explanation", 150, 660, 430),
             line("3. Example", 150, 720, 390, h=40)]
    blocks = layout_page(body + items, W, H)
    assert [(b.kind, b.text) for b in blocks if b.text[:1].isdigit()] == [
        ("list", "1. Statement"), ("list", "2. Explanation"), ("list", "3. Example")]


def test_items_counting_on_inside_one_block_become_one_block_each():
    """Items whose lines fill the measure read as one paragraph; each label counting on from the
    last, where the first line starts, begins an item. A number inside an item's text does not."""
    fill = " w" * 30
    lines = [line("a) the first item runs on" + fill, 150, 300, 1400), line("over two lines" + fill, 150, 340, 1400),
             line("b) the second item" + fill, 150, 380, 1400), line("d) not the next label" + fill, 150, 420, 1400),
             line("c) the third" + fill, 150, 460, 1400)]
    blocks = layout_page(lines, W, H)
    assert [(b.kind, len(b.lines)) for b in blocks] == [("list", 2), ("list", 2), ("list", 1)]


def test_numbered_headings_with_text_between_stay_headings():
    lines = [line("1. Introduction", 150, 200, 600, h=44)]
    lines += [line("w " * 40, 150, 280 + 40 * k, 1500) for k in range(4)]
    lines += [line("2. Methods", 150, 480, 500, h=44)]
    lines += [line("w " * 40, 150, 560 + 40 * k, 1500) for k in range(4)]
    blocks = layout_page(lines, W, H)
    assert [kind_of(t, blocks) for t in ("1. Introduction", "2. Methods")] == ["title", "title"]


def worded(cells: list[str], y: float, starts: list[float], char: float = 20) -> LayoutLine:
    """One OCR line over a table row: each cell's words from its start, a word space apart."""
    words = []
    for cell, x in zip(cells, starts):
        for t in cell.split():
            words.append(Word(t, 0.99, [[x, y], [x + char * len(t), y], [x + char * len(t), y + 30], [x, y + 30]]))
            x += char * len(t) + 10
    x1 = words[-1].box[1][0]
    return LayoutLine(" ".join(cells), 0.99, [[starts[0], y], [x1, y], [x1, y + 30], [starts[0], y + 30]], words=words)


def test_a_table_boxed_one_line_a_row_gets_its_cells_from_the_gaps_between_words():
    """simpleplus p6: a slide's table set close, each row boxed as one line; its rows came out
    as one paragraph ("Treatment 1 0.0003262 0.562 Treatment 2 ...")."""
    rows = [["Treatment 1", "0.0003262", "0.562"], ["Treatment 2", "0.0015681", "0.910"],
            ["Treatment 3", "0.0009271", "0.296"]]
    lines = [worded(r, 310 + 38 * k, [362, 640, 880]) for k, r in enumerate(rows)]
    blocks = layout_page(lines + [line("Table: Table caption", 520, 450, 740)], 1280, 720)
    table = next(b for b in blocks if b.kind == "table")
    assert table.grid == rows
    assert table.text == "\n".join(" ".join(r) for r in rows)
    # its header, a rule's depth above, cut at the same columns
    header = worded(["Treatments", "Response 1", "Response 2"], 250, [362, 640, 880])
    blocks = layout_page([header] + lines, 1280, 720)
    assert [b.kind for b in blocks] == ["table"]
    assert blocks[0].grid == [["Treatments", "Response 1", "Response 2"], *rows]
    # a line whose words run across the columns' edges is no header
    blocks = layout_page([worded(["A sentence that runs on over the table's width"], 250, [362])] + lines, 1280, 720)
    assert [b.kind for b in blocks] == ["text", "table"]


def test_a_table_boxed_a_row_a_line_on_a_skewed_scan_gets_its_cells_in_the_deskewed_frame():
    """chemfig p7's scan: a key/value table turned a degree, its rows boxed one line a row. Down
    sixteen rows the word boxes drift 11 px in the page's pixels, closing the 35 px band between
    the columns to 24, under a line height; measured deskewed, as the lines are, it stays 35."""
    slope = math.tan(math.radians(1.0))

    def turned(x: float, y: float) -> list[float]:
        return [x - slope * y, y + slope * x]

    lines = []
    for k in range(16):
        y = 300 + 40 * k
        cells = [(f"key{k} sep", 100, 365), (f"{k}pt", 400, 460)]
        words = []
        for text, x0, x1 in cells:
            parts = text.split()
            step = (x1 - x0 + 10) / len(parts)
            for j, t in enumerate(parts):
                a = x0 + j * step
                words.append(Word(t, 0.99, [turned(a, y), turned(a + step - 10, y), turned(a + step - 10, y + 30),
                                            turned(a, y + 30)]))
        box = [turned(94, y), turned(466, y), turned(466, y + 30), turned(94, y + 30)]
        lines.append(LayoutLine(" ".join(t for t, _, _ in cells), 0.99, box, words=words))
    blocks = layout_page(lines, W, H, skew=math.radians(1.0))
    assert [b.kind for b in blocks] == ["table"]
    assert blocks[0].grid == [[f"key{k} sep", f"{k}pt"] for k in range(16)]


@pytest.mark.parametrize("rows, starts", [
    # two columns of prose read across: cells of many words
    ([["the first column runs on here", "and the second one too"]] * 4, [150, 860]),
    # a listing's line numbers before its code
    ([[f"{k}", "total = total + value"] for k in range(1, 5)], [150, 260]),
])
def test_lines_with_aligned_gaps_that_are_no_table_stay_text(rows, starts):
    lines = [worded(r, 300 + 38 * k, starts) for k, r in enumerate(rows)]
    assert "table" not in [b.kind for b in layout_page(lines, W, H)]
