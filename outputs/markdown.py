"""Markdown per document: one paragraph per block, lines rejoined, a comment marking each page."""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Iterator

from outputs.model import BULLETS, Block, PageResult

_LINE_START_MARKUP = re.compile(r"^(\s*)([#>=+]|[-*](?=\s)|\d+[.)](?=\s))")
_HYPHENATED = re.compile(r"[^\W\d_]-$")
# A line read with one of these first starts a list item (bullets the OCR read or found).
_BULLET = re.compile(f"^[{re.escape(BULLETS)}]\\s*")


def markdown_document(title: str, pages: Iterable[PageResult]) -> Iterator[str]:
    yield f"# {_escape_inline(title)}\n"
    for page in pages:
        yield f"\n<!-- page {page.page} -->\n"
        if page.status == "failed" and page.error is not None:
            yield f"\n> **Page {page.page} failed** ({page.error.code.value}): {_escape_inline(page.error.message)}\n"
            continue
        for block in page.blocks:
            paragraph = block_markdown(block)
            if paragraph:
                yield "\n" + paragraph + "\n"


def block_markdown(block: Block) -> str:
    texts = [line.text.strip() for line in block.lines if line.text.strip()]
    if not texts:
        return ""
    if block.kind == "table":
        return "  \n".join(_escape_line(t) for t in texts)
    return "\n".join(filter(None, (_item_markdown(item) for item in _list_items(texts))))


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
    return _LINE_START_MARKUP.sub(lambda m: m.group(1) + "\\" + m.group(2), _escape_inline(text))


def _escape_inline(text: str) -> str:
    return text.replace("<", "&lt;").replace("\n", " ")
