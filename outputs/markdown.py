"""Markdown per document, from the blocks' kinds: titles as headings, paragraphs with their lines
rejoined, list items, tables (as Markdown tables where the grid is clear), italic captions, a
page's footnotes after its body; running heads and feet and a figure's inner text are kept as
comments. A comment marks each page."""

from __future__ import annotations

import re
import statistics
import unicodedata
from typing import Iterable, Iterator

from outputs.enumeration import ENUMERATION
from outputs.model import BULLETS, Block, Line, PageResult, table_rows

# What would start a heading, quote, rule or list at a line's start: escaped ("\#", "1\." since a
# backslash before a digit is no escape and shows).
_LINE_START_MARKUP = re.compile(r"^(\s*)(?:([#>=+]|[-*](?=\s))|(\d+)([.)])(?=\s))")
_HYPHENATED = re.compile(r"[^\W\d_]-$")
_DOT_LEADER = re.compile(r"[ \t\u00a0]*(?:\.[ \t\u00a0]*){5,}")  # five dots or more, spaced or not
# A line read with one of these first starts a list item (bullets the OCR read or found).
_BULLET = re.compile(f"^[{re.escape(BULLETS)}]\\s*")
# A `list` block's first line may also be led by a dash or an asterisk and a space (the stage
# took it for a bullet: a second-level LaTeX item is "–").
_LIST_MARK = re.compile(f"^([{re.escape(BULLETS)}]\\s*|[-–—*]\\s+)")


def markdown_document(title: str, pages: Iterable[PageResult]) -> Iterator[str]:
    yield f"# {_escape_inline(title)}\n"
    for page in pages:
        yield f"\n<!-- page {page.page} -->\n"
        if page.status == "failed" and page.error is not None:
            yield f"\n> **Page {page.page} failed** ({page.error.code.value}): {_escape_inline(page.error.message)}\n"
            continue
        for paragraph in page_markdown(page.blocks):
            yield "\n" + paragraph + "\n"


def page_markdown(blocks: list[Block]) -> list[str]:
    """The page's blocks as Markdown paragraphs, footnotes moved after the body; list items
    nested by how far their bullets stand in from the other items around them."""
    body = [b for b in blocks if b.kind != "footnote"]
    notes = [b for b in blocks if b.kind == "footnote"]
    ordered = body + notes
    levels = list_levels(ordered)
    return [p for p in (block_markdown(b, levels[k]) for k, b in enumerate(ordered)) if p]


def list_levels(blocks: list[Block], deepest: int = 3) -> list[int]:
    """Each block's list nesting level: in a run of consecutive `list` blocks, the items whose
    first lines start at the same x (within half a line height) share a level, counted from the
    leftmost; 0 for every other block."""
    levels = [0] * len(blocks)
    k = 0
    while k < len(blocks):
        if blocks[k].kind != "list" or not blocks[k].lines:
            k += 1
            continue
        end = k
        while end < len(blocks) and blocks[end].kind == "list" and blocks[end].lines:
            end += 1
        starts = [min(p[0] for p in b.lines[0].box) for b in blocks[k:end]]
        tolerance = 0.5 * statistics.median_high(_box_height(b.lines[0].box) for b in blocks[k:end])
        steps: list[float] = []  # the x where each level starts
        for x in sorted(starts):
            if not steps or x - steps[-1] > tolerance:
                steps.append(x)
        for j, x in enumerate(starts):
            levels[k + j] = min(deepest, sum(1 for step in steps[1:] if x - step >= -tolerance))
        k = end
    return levels


def _box_height(box) -> float:
    return max(p[1] for p in box) - min(p[1] for p in box)


def block_markdown(block: Block, level: int = 0) -> str:
    texts = [row for line in block.lines for row in _rows(line)]
    if not texts:
        return ""
    if block.kind == "list":
        label = ENUMERATION.match(texts[0])
        if label is not None:
            return "  " * level + _enumerated_markdown(label, texts)
        mark = _LIST_MARK.match(texts[0])
        items = _list_items(["• " + texts[0][mark.end():] if mark else texts[0], *texts[1:]])
        return "\n".join("  " * level + md for md in filter(None, map(_item_markdown, items)))
    if block.kind == "table":
        if block.grid:
            return grid_markdown(block.grid)
        return "  \n".join(_escape_line(_DOT_LEADER.sub(" ... ", " ".join(row)).strip())
                           for row in table_rows(block.lines))
    if block.kind == "title":
        return "## " + _escape_inline(join_lines(texts))
    if block.kind == "caption":
        return "*" + _escape_inline(join_lines(texts)).replace("*", "\\*") + "*"
    if block.kind in ("header", "footer", "figure"):
        return f"<!-- {block.kind}: " + _escape_inline(" / ".join(texts)).replace("--", "- -") + " -->"
    return "\n".join(filter(None, (_item_markdown(item) for item in _list_items(texts))))


def _enumerated_markdown(label: re.Match, texts: list[str]) -> str:
    """An enumerated list item: "1." and "2)" as Markdown's ordered items, other labels ("b)",
    "(iv)", "3、") kept in the text of a bulleted one."""
    text = _escape_line(join_lines([texts[0][label.end():], *texts[1:]]).strip())
    if label["core"].isdigit() and not label["open"] and label["close"] in ".)":
        return f"{label['core']}{label['close']} {text}"
    space = "" if label["close"] in "．）、" else " "  # a full-width mark carries its own space
    return f"- {label['open']}{label['core']}{label['close']}{space}{text}"


def _rows(line: Line) -> list[str]:
    """A line's text as the rows it stands on on the page (see Line.breaks), stripped, a dot
    leader as OCR'd lines have it ("Title ... 29", where a text layer has every dot)."""
    cuts = [0, *(line.breaks or ()), len(line.text)]
    rows = [_DOT_LEADER.sub(" ... ", line.text[a:b]).strip() for a, b in zip(cuts, cuts[1:])]
    return [row for row in rows if row]


def grid_markdown(grid: list[list[str]]) -> str:
    """A Markdown table: the first row as its header."""
    def row(cells: list[str]) -> str:
        return "| " + " | ".join(_escape_inline(c).replace("|", "\\|") for c in cells) + " |"
    return "\n".join([row(grid[0]), "| " + " | ".join("---" for _ in grid[0]) + " |"]
                     + [row(cells) for cells in grid[1:]])


def _list_items(texts: list[str]) -> list[list[str]]:
    """The block's lines split where a bulleted line starts a list item; lines before the
    first bullet (or in a block without bullets) form one paragraph."""
    items: list[list[str]] = []
    for text in texts:
        if not items or _BULLET.match(text):
            items.append([text])
        else:
            items[-1].append(text)
    return items


def _item_markdown(lines: list[str]) -> str:
    bullet = _BULLET.match(lines[0])
    if bullet is None:
        return _escape_line(join_lines(lines))
    rest = [t for t in (lines[0][bullet.end():], *lines[1:]) if t]
    return "- " + _escape_line(join_lines(rest)) if rest else ""


def join_lines(texts: list[str]) -> str:
    """Rejoin a paragraph's lines: hyphenated word breaks are mended, CJK lines join without a space."""
    out = texts[0]
    for text in texts[1:]:
        if _HYPHENATED.search(out) and text[:1].islower():
            out = out[:-1] + text
        elif _is_cjk(out[-1]) and _is_cjk(text[0]):
            out += text
        else:
            out += " " + text
    return out


def _is_cjk(ch: str) -> bool:
    name = unicodedata.name(ch, "")
    return name.startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "FULLWIDTH", "IDEOGRAPHIC"))


def _escape_line(text: str) -> str:
    return _LINE_START_MARKUP.sub(_escaped_markup, _escape_inline(text))


def _escaped_markup(match: re.Match) -> str:
    indent, mark, number, delimiter = match.groups()
    return indent + ("\\" + mark if mark else number + "\\" + delimiter)


def _escape_inline(text: str) -> str:
    return text.replace("<", "&lt;").replace("\n", " ")
