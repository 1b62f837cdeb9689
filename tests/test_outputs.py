import json
from pathlib import Path

import jsonschema
import pytest

from outputs.files import write_atomic
from outputs.jsonl import JsonlReadError, document_failure_line, jsonl_lines, read_jsonl
from outputs.markdown import join_lines, markdown_document
from outputs.model import Block, ErrorCode, Line, PageError, PageResult, Word
from outputs.paths import output_path, safe_relative_stem
from outputs.text import text_document

SCHEMA = json.loads((Path(__file__).parents[1] / "outputs/schema/pagerunner.page.1.schema.json").read_text())
BOX = [[0, 0], [10, 0], [10, 5], [0, 5]]


def page(number: int, blocks: list[Block]) -> PageResult:
    result = PageResult.from_blocks(blocks, width=100, height=50, engine="test", timings={"ocr": 0.5})
    result.source, result.doc_id, result.page, result.dpi = "a/b.pdf", "d" * 64, number, 200.0
    return result


def sample_pages() -> list[PageResult]:
    first = page(1, [Block([Line("Title", 0.99, BOX)]),
                     Block([Line("A para-", 0.9, BOX, [Word("A", 0.9, BOX), Word("para-", 0.9, BOX)]),
                            Line("graph here.", 0.9, BOX)]),
                     Block([Line("a text layer's devel-opment line", 0.9, BOX, breaks=[21])])])
    failed = PageResult.failed(source="a/b.pdf", doc_id="d" * 64, page=2, engine="test",
                               error=PageError(ErrorCode.RENDER_FAILED, "cannot render page 2"))
    return [first, failed]


def test_jsonl_records_match_schema_and_round_trip():
    lines = list(jsonl_lines(sample_pages()))
    assert all(line.endswith("\n") and line.count("\n") == 1 for line in lines)
    for line in lines:
        record = json.loads(line)
        jsonschema.validate(record, SCHEMA)
        assert PageResult.from_dict(record).to_dict() == record
    failure = json.loads(document_failure_line("x.pdf", "e" * 64, "ppocr", "corrupt_pdf", "bad"))
    jsonschema.validate(failure, SCHEMA)
    assert failure["page"] is None and failure["status"] == "failed"


def test_schema_lists_every_error_code():
    codes = SCHEMA["properties"]["error"]["oneOf"][1]["properties"]["code"]["enum"]
    assert sorted(codes) == sorted(code.value for code in ErrorCode)


def test_page_text_joins_blocks():
    assert sample_pages()[0].text == "Title\n\nA para-\ngraph here.\n\na text layer's devel-opment line"


def test_markdown_paragraphs_and_failures():
    md = "".join(markdown_document("a/b.pdf", sample_pages()))
    assert md.startswith("# a/b.pdf\n")
    assert "<!-- page 1 -->" in md and "\nTitle\n" in md
    assert "A paragraph here." in md
    assert "a text layer's development line" in md  # mended at the line's break
    assert "Page 2 failed** (render_failed)" in md


def test_markdown_escapes_markup_at_line_start():
    md = "".join(markdown_document("t", [page(1, [Block([Line("# not a heading", 1, BOX)]),
                                                  Block([Line("<script>", 1, BOX)])])]))
    assert "\\# not a heading" in md and "&lt;script>" in md


def test_markdown_escapes_a_number_that_would_start_a_list_before_its_mark():
    # "\\1." shows its backslash: a backslash escapes only punctuation
    md = "".join(markdown_document("t", [page(1, [Block([Line("1. Introduction", 1, BOX)])])]))
    assert "\n1\\. Introduction\n" in md


def test_markdown_enumerated_list_items():
    blocks = [Block([Line("1. Statement", 1, BOX)], "list"), Block([Line("2. Explanation", 1, BOX),
                                                                   Line("on two lines", 1, BOX)], "list"),
              Block([Line("b) a lettered item", 1, BOX)], "list"), Block([Line("3、点击导入", 1, BOX)], "list")]
    md = "".join(markdown_document("t", [page(1, blocks)]))
    assert "\n1. Statement\n\n2. Explanation on two lines\n\n- b) a lettered item\n\n- 3、点击导入\n" in md


def test_markdown_bulleted_lines_become_list_items():
    lines = ["Goals:", "▶ the first goal, which", "takes two lines", "• second", "■", "after"]
    md = "".join(markdown_document("t", [page(1, [Block([Line(t, 1, BOX) for t in lines])])]))
    assert "\nGoals:\n- the first goal, which takes two lines\n- second\n- after\n" in md
    plain = "".join(markdown_document("t", [page(1, [Block([Line("no bullets", 1, BOX), Line("here", 1, BOX)])])]))
    assert "\nno bullets here\n" in plain


def test_join_lines_cjk_and_hyphens():
    assert join_lines(["中文第一行", "第二行"]) == "中文第一行第二行"
    assert join_lines(["well-", "Known"]) == "well- Known"
    assert join_lines(["exam-", "ple"]) == "example"


def test_text_document_form_feeds():
    assert "".join(text_document(sample_pages())) == \
        "Title\n\nA para-\ngraph here.\n\na text layer's devel-opment line\n\f\n"


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "x" / "out.txt"
    write_atomic(target, ["a", "b"])
    assert target.read_text() == "ab"

    def failing():
        yield "partial"
        raise RuntimeError("crash mid-write")

    with pytest.raises(RuntimeError):
        write_atomic(target, failing())
    assert target.read_text() == "ab"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_read_jsonl_skips_torn_last_line_only(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}\n{"c":')
    assert list(read_jsonl(path)) == [{"a": 1}, {"b": 2}]
    path.write_text('{"a": 1}\nnot json\n{"b": 2}\n')
    with pytest.raises(JsonlReadError):
        list(read_jsonl(path))


@pytest.mark.parametrize("relname,stem", [
    ("a/b/scan 1.pdf", "a/b/scan 1"),
    ("../../etc/passwd.pdf", "etc/passwd"),
    ("/abs/x.png", "abs/x"),
    (".hidden.pdf", "hidden"),
    ("a\\..\\..\\b.pdf", "a/b"),
    ("bad\udcff.pdf", "bad\ufffd"),
])
def test_safe_stems(relname, stem):
    assert safe_relative_stem(relname) == stem


def test_long_names_are_bounded_and_distinct(tmp_path):
    a = safe_relative_stem("x" * 400 + "a.pdf")
    b = safe_relative_stem("x" * 400 + "b.pdf")
    assert a != b and all(len(part.encode()) <= 180 for part in a.split("/"))
    assert output_path(tmp_path, a, ".md").parent == tmp_path


def test_output_path_stays_inside(tmp_path):
    assert output_path(tmp_path, "a/b", ".md") == tmp_path / "a" / "b.md"
    with pytest.raises(ValueError):
        output_path(tmp_path, "../x", ".md")


def _blocks(*specs: tuple[str, list[str]], grid=None) -> list[Block]:
    return [Block([Line(t, 1, BOX) for t in texts], kind, grid if kind == "table" else None)
            for kind, texts in specs]


def test_markdown_renders_block_kinds():
    blocks = _blocks(("header", ["Running head"]), ("title", ["1 Intro-", "duction"]),
                     ("text", ["A para-", "graph."]), ("footnote", ["1 A note."]),
                     ("list", ["• first"]), ("list", ["▶ second", "item"]),
                     ("caption", ["Table 1: *Sizes*"]), ("table", ["a", "b", "1", "2"]),
                     ("figure", ["0.5", "axis"]), ("footer", ["7"]),
                     grid=[["a", "b"], ["1", "2|3"]])
    md = "".join(markdown_document("t", [page(1, blocks)]))
    body = md.split("<!-- page 1 -->\n", 1)[1]
    assert body.split("\n\n") == [
        "\n<!-- header: Running head -->", "## 1 Introduction", "A paragraph.", "- first",
        "- second item", "*Table 1: \\*Sizes\\**", "| a | b |\n| --- | --- |\n| 1 | 2\\|3 |",
        "<!-- figure: 0.5 / axis -->", "<!-- footer: 7 -->", "1 A note.\n"]


def test_a_table_without_a_clear_grid_keeps_its_rows():
    md = "".join(markdown_document("t", [page(1, _blocks(("table", ["Intro ... 3", "Rules ... 7"])))]))
    assert "\nIntro ... 3  \nRules ... 7\n" in md


def test_block_kinds_and_grids_round_trip_through_jsonl_and_the_schema():
    blocks = _blocks(("title", ["T"]), ("table", ["a", "b"]), grid=[["a", "b"], ["", "c"]])
    record = page(1, blocks).to_dict()
    jsonschema.validate(record, SCHEMA)
    assert record["blocks"][1]["grid"] == [["a", "b"], ["", "c"]] and "grid" not in record["blocks"][0]
    again = PageResult.from_dict(json.loads(json.dumps(record)))
    assert [(b.kind, b.grid) for b in again.blocks] == [("title", None), ("table", [["a", "b"], ["", "c"]])]


def test_a_table_without_a_clear_grid_keeps_each_row_on_one_line():
    def cell(text: str, x0: float, y0: float) -> Line:
        return Line(text, 1, [[x0, y0], [x0 + 80, y0], [x0 + 80, y0 + 30], [x0, y0 + 30]])
    rows = [cell("simp", 100, 100), cell("50", 300, 102), cell("简", 400, 98),
            cell("trad", 100, 150), cell("50 繁", 300, 150), cell("nanshanjing 43", 100, 200)]
    md = "".join(markdown_document("t", [page(1, [Block(rows, "table")])]))
    assert "\nsimp 50 简  \ntrad 50 繁  \nnanshanjing 43\n" in md
    # The page's plain text (JSONL "text", the .txt file) reads the table row by row too, where
    # it had one cell to a line; other blocks keep one line to a line.
    result = page(1, [Block(rows, "table"), Block(rows[:2])])
    assert result.text == "simp 50 简\ntrad 50 繁\nnanshanjing 43\n\nsimp\n50"


def test_list_items_led_by_dashes_are_items_nested_by_their_indent():
    def item(text: str, x0: float, y0: float) -> Block:
        return Block([Line(text, 1, [[x0, y0], [x0 + 600, y0], [x0 + 600, y0 + 30], [x0, y0 + 30]])], "list")
    blocks = [item("• We all are volunteers.", 150, 100), item("– You cannot impose on others.", 190, 140),
              item("– You should be motivated.", 191, 180), item("• Friendly cooperation.", 151, 220),
              Block([Line("- 3 is not an item here", 1, BOX)], "text")]
    md = "".join(markdown_document("t", [page(1, blocks)]))
    assert ("- We all are volunteers.\n\n  - You cannot impose on others.\n\n  - You should be motivated.\n\n"
            "- Friendly cooperation.\n\n\\- 3 is not an item here") in md


def test_markdown_reads_a_text_layers_dot_leader_as_ocr_does():
    blocks = [Block([Line("5.1 README.Debian . . . . . . . . . . . . 29", 0.9, BOX)]),
              Block([Line("Wait... then go.", 0.9, BOX)])]
    md = "".join(markdown_document("t.pdf", [page(1, blocks)]))
    assert "5.1 README.Debian ... 29" in md and "Wait... then go." in md
    toc = [Block([Line(f"5.{k} Entry . . . . . . . . {k}", 0.9, [[0, 10 * k], [90, 10 * k], [90, 10 * k + 5],
                                                              [0, 10 * k + 5]]) for k in range(2)], kind="table")]
    md = "".join(markdown_document("t.pdf", [page(1, toc)]))
    assert "5.0 Entry ... 0  \n5.1 Entry ... 1" in md
