"""Dot leaders between the boxes of a TOC row become '...' and join the row."""

import numpy as np

from model_cache.layout import from_line, layout_page
from model_cache.ppocr.leaders import leader_pairs, missed_targets, with_leaders
from outputs.model import Line


def leader_lines(img: np.ndarray, lines: list[Line]) -> list[tuple[int, int]]:
    return leader_pairs(img, [from_line(line) for line in lines])


def build_blocks(img: np.ndarray, lines: list[Line], page_height: int):
    return layout_page(with_leaders(img, [from_line(line) for line in lines]), img.shape[1], page_height)


def _page_with(gap_pattern: str) -> np.ndarray:
    """A 40 px high row: 'title' ink at x 20-200, 'number' ink at x 900-930, and in between
    either dots on the baseline, an underline, or nothing."""
    img = np.full((100, 1000, 3), 255, dtype=np.uint8)
    img[35:65, 20:200] = 0
    img[35:65, 900:930] = 0
    if gap_pattern == "dots":
        for x in range(215, 890, 16):
            img[58:63, x:x + 5] = 0
    elif gap_pattern == "broken dots":  # two leaders with a column gutter between them
        for x in list(range(215, 500, 16)) + list(range(620, 890, 16)):
            img[58:63, x:x + 5] = 0
    elif gap_pattern == "rule":
        img[60:62, 210:890] = 0
    return img


def _lines() -> list[Line]:
    return [Line("Introduction", 0.99, [[15, 30], [205, 30], [205, 70], [15, 70]]),
            Line("29", 0.99, [[895, 30], [935, 30], [935, 70], [895, 70]])]


def test_dots_between_boxes_are_found():
    assert leader_lines(_page_with("dots"), _lines()) == [(0, 1)]


def test_dots_broken_by_a_gutter_lead_nowhere():
    """A tight index: one column's leader ends at its edge, the next column's entry starts with
    dots after the gutter. No leader runs across (it joined the columns' rows: verse p25)."""
    assert leader_lines(_page_with("broken dots"), _lines()) == []


def test_dots_that_run_to_an_unboxed_number_do_not_lead_to_the_next_column():
    """The detector missed the page number the dots run to ('... 2'); the next box on the row is
    the next column's line (metrix p42's scan: '(see 4.1) ... v1.2'). A glyph after the dots,
    however much of it the dot band cuts off, ends the leader there."""
    img = _page_with("dots")
    img[:, 862:895] = 255  # the last dot at x 855-860
    img[40:65, 866:880] = 0  # the missed "2" after it
    assert leader_lines(img, _lines()) == []
    img[40:52, 866:880] = 255  # only its lower part inside the dot band
    assert leader_lines(img, _lines()) == []
    img[40:65, 866:880] = 255  # nothing after the dots: they lead to the box
    assert leader_lines(img, _lines()) == [(0, 1)]


def test_dots_that_run_to_a_thin_red_number_do_not_lead_to_the_next_column():
    """sample-index p7: a hyperlinked index sets its page numbers in red, and "i" is one thin
    stroke. In the channels' mean, after the median filter, it is gone, and the dots seemed to
    run on over the gutter to the next column's line; in the darkest channel it ends them."""
    img = _page_with("dots")
    img[:, 862:895] = 255  # the last dot at x 855-860
    # the missed red "i" as rendered at 200 dpi: a 1 px core between two lighter edges
    for x, light in ((868, 172), (869, 10), (870, 99)):
        img[40:65, x] = (255, light, light)
    assert leader_lines(img, _lines()) == []


def test_dots_may_stop_further_short_of_a_page_number():
    """LaTeX's contents stop the dots an em before a 1.55 em box that right-aligns the page
    number, so before a one-digit number the last dot is ~2.6 pitches off the number's box
    (covington's contents, 200 dpi). Before a box that is no page number they must still reach
    within 2.5 pitches."""
    img = _page_with("blank")
    for x in range(215, 850, 16):  # the last dot's centre 3.1 pitches left of the band's end
        img[58:63, x:x + 5] = 0
    assert leader_lines(img, _lines()) == [(0, 1)]
    words = [_lines()[0], Line("Packaging", 0.99, _lines()[1].box)]
    assert leader_lines(img, words) == []


def test_rules_and_blank_gaps_are_not_leaders():
    assert leader_lines(_page_with("rule"), _lines()) == []
    assert leader_lines(_page_with("blank"), _lines()) == []


def test_layout_joins_a_leader_row_into_one_line():
    lines = _lines()
    blocks = build_blocks(_page_with("dots"), lines, 1000)
    assert [line.text for block in blocks for line in block.lines] == ["Introduction ... 29"]


def _noisy_skewed_row(seed: int = 3, drop: int = 14) -> tuple[np.ndarray, list[Line]]:
    """A TOC row as a cheap scanner leaves it: the row drops `drop` px over 900 px (14: 0.9 degrees),
    dots are 4 px, and the page carries noise (sigma 10) that speckles the gap."""
    rng = np.random.default_rng(seed)
    img = np.full((120, 1000), 235.0)
    slope = drop / 900
    img[30:60, 20:200] = 30  # title ink (its box is level enough at this width)
    for x in range(215, 890, 21):
        y = int(round(53 + slope * (x - 20)))
        img[y:y + 4, x:x + 4] = 30
    y_num = int(round(30 + slope * 880))
    img[y_num:y_num + 30, 900:930] = 30  # page number, 14 px lower than the title
    img = np.clip(img + rng.normal(0, 10, img.shape), 0, 255).astype(np.uint8)
    title = Line("Introduction", 0.99, [[15, 27], [205, 27 + 185 * slope], [205, 63 + 185 * slope], [15, 63]])
    number = Line("29", 0.99, [[895, y_num - 3], [935, y_num - 3], [935, y_num + 33], [895, y_num + 33]])
    return np.repeat(img[:, :, None], 3, axis=2), [title, number]


def test_noisy_skewed_leaders_are_found():
    page, lines = _noisy_skewed_row()
    assert leader_lines(page, lines) == [(0, 1)]


def test_noise_alone_is_not_a_leader():
    page, lines = _noisy_skewed_row()
    page = page.copy()
    page[40:100, 210:890] = np.clip(235 + np.random.default_rng(1).normal(0, 10, (60, 680, 1)), 0, 255)
    assert leader_lines(page, lines) == []


def test_specks_at_different_heights_are_not_a_leader():
    """In a tight index on a blurred scan, the gap between two columns' entries can hold a few
    specks from the tops of the next row's letters, evenly spaced by chance. They are not on one
    baseline, so they lead nowhere (sample-idxgloss p12, scan copy: its columns were read as rows)."""
    img = _page_with("blank")
    for x, y in ((260, 50), (470, 50), (690, 59)):  # pitches within a third of their median
        img[y:y + 3, x:x + 3] = 0
    assert leader_lines(img, _lines()) == []


def test_a_stray_speck_does_not_hide_a_leader():
    img = _page_with("dots")
    img[40:43, 600:603] = 0  # one speck well above the dots' baseline
    assert leader_lines(img, _lines()) == [(0, 1)]


def test_a_short_title_follows_the_page_slope():
    """'dirs ........ 31' on a skewed scan: the title box is too short to show the skew, so the
    row is matched along the page's long boxes (here a long line above it)."""
    page, (title, number) = _noisy_skewed_row(drop=24)  # 1.5 degrees: the boxes no longer overlap enough
    slope = 24 / 900
    short = Line("dirs", 0.99, [[15, 27], [60, 27 + 45 * slope], [60, 63 + 45 * slope], [15, 63]])
    long_line = Line("a long line of body text above", 0.99,
                     [[15, 0], [900, 0 + 885 * slope], [900, 20 + 885 * slope], [15, 20]])
    page = page.copy()
    page[30:60, 60:200] = page[5:6, 60:200]  # only 'dirs' is left of the title ink ...
    for x in range(68, 215, 21):  # ... and the dots start right after it
        y = int(round(53 + slope * (x - 20)))
        page[y:y + 4, x:x + 4] = 30
    assert leader_lines(page, [long_line, short, number]) == [(1, 2)]


def test_a_table_of_contents_keeps_its_rows_in_markdown():
    """Rows joined by leaders form a block of kind 'table', so Markdown keeps one row per line
    instead of running the whole table of contents into one paragraph."""
    from outputs.markdown import block_markdown
    img = np.full((200, 1000, 3), 255, dtype=np.uint8)
    lines = []
    for top, (title, number) in zip((30, 74), (("Introduction", "29"), ("Packaging", "31"))):
        img[top + 5:top + 35, 20:200] = 0
        img[top + 5:top + 35, 900:930] = 0
        for x in range(215, 890, 16):
            img[top + 28:top + 33, x:x + 5] = 0
        lines += [Line(title, 0.99, [[15, top], [205, top], [205, top + 40], [15, top + 40]]),
                  Line(number, 0.99, [[895, top], [935, top], [935, top + 40], [895, top + 40]])]
    blocks = build_blocks(img, lines, 1000)
    assert len(blocks) == 1 and blocks[0].kind == "table"
    assert block_markdown(blocks[0]).split("  \n") == ["Introduction ... 29", "Packaging ... 31"]


def test_contents_rows_without_dots_join_the_contents_block():
    """A LaTeX contents' chapter lines ("1 Introduction   2") have no dots: a title and a page
    number set apart on one row are contents rows too, so the chapters' blocks and the
    sections' leader blocks between them are one table of contents (covington p1 came out as
    four blocks, two kinds of Markdown)."""
    from model_cache.layout.geometry import Group, Item
    from model_cache.layout.paragraphs import join_toc_rows

    def item(text: str, x0: float, y0: float, x1: float, leaders: int = 0) -> Item:
        box = [[x0, y0], [x1, y0], [x1, y0 + 30], [x0, y0 + 30]]
        return Item(from_line(Line(text, 0.99, box)), x0, y0, x1, y0 + 30, 30, leaders=leaders)

    chapters = [[item("1 Introduction", 20, 0, 200), item("2", 900, 0, 930)],
                [item("2 Packages", 20, 40, 180), item("3", 900, 40, 930)]]
    sections = [[item("2.1 Files ... 3", 50, 80, 930, leaders=1)], [item("2.2 Rules ... 4", 50, 120, 930, leaders=1)]]
    prose = [[item("The end of the contents.", 20, 300, 600)]]
    groups = [Group([it for row in rows for it in row], "table", rows) for rows in (chapters, sections)]
    joined = join_toc_rows(groups + [Group(prose[0])], 30)
    assert [g.kind for g in joined] == ["table", "text"] and len(joined[0].rows) == 4


def _targets(img: np.ndarray, lines: list[Line]) -> list[tuple[float, float, float, float]]:
    return missed_targets(img, [from_line(line) for line in lines])


def test_a_leader_to_no_box_gives_the_ink_at_its_end():
    """The detector found 'Introduction' but not '29': the dots lead to the number's ink."""
    (box,) = _targets(_page_with("dots"), _lines()[:1])
    x0, y0, x1, y1 = box
    assert 890 <= x0 <= 900 and 930 <= x1 <= 940 and (y0, y1) == (30, 70)


def test_no_target_where_a_box_was_found_or_nothing_follows_the_dots():
    assert _targets(_page_with("dots"), _lines()) == []  # the number has its box
    img = _page_with("dots")
    img[35:65, 900:930] = 255  # dots running to nothing
    assert _targets(img, _lines()[:1]) == []
    assert _targets(_page_with("broken dots"), _lines()[:1]) == []  # a gutter between two leaders
    assert _targets(_page_with("rule"), _lines()[:1]) == []


def test_the_engine_reads_the_number_a_leader_runs_to():
    """A page number the detector missed is read from its ink and joins the row."""
    from PIL import Image, ImageDraw, ImageFont

    from model_cache.engine import EngineOptions
    from model_cache.registry import create_engine

    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", 28)
    image = Image.new("RGB", (1000, 100), "white")
    draw = ImageDraw.Draw(image)
    draw.text((20, 30), "Introduction", font=font, fill="black")
    draw.text((900, 30), "29", font=font, fill="black")
    img = np.asarray(image).copy()
    for x in range(240, 880, 16):
        img[56:60, x:x + 4] = 0
    title = Line("Introduction", 0.99, [[15, 28], [205, 28], [205, 68], [15, 68]])
    engine = create_engine("ppocr", EngineOptions(threads=1))
    lines = with_leaders(img, [from_line(title)], lambda boxes: engine._read_boxes(img, boxes))
    assert [line.text for line in lines] == ["Introduction", "29"]
    assert lines[0].leader
    blocks = layout_page(lines, 1000, 100)
    assert [line.text for block in blocks for line in block.lines] == ["Introduction ... 29"]


def test_what_a_leader_may_run_to():
    from model_cache.layout.lines import reads_as_page_numbers
    assert all(map(reads_as_page_numbers, ["29", "4, 117", "16, 42, 44", "xiv", "12-15", " 7 "]))
    assert not any(map(reads_as_page_numbers, ["", "Fischer)", "a.b", "29 and", "..."]))
