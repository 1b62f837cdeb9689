"""Block kinds, from geometry and the lines' annotations (never from a list of documents):
running heads and feet at the page's top and bottom edge, titles set larger than the body,
captions ("Figure 3:", "Table 2.", "图 1"), footnotes set smaller below the body, list items
led by a bullet or counted by their labels (1., 2., 3.); tables and figures are known when their
blocks are made."""

from __future__ import annotations

import re

import numpy as np

from model_cache.layout.geometry import Group, Item, LayoutParams, pitch
from model_cache.layout.lines import reads_as_page_numbers
from outputs.enumeration import counts_on, enumeration_label
from outputs.model import BLOCK_KINDS as KINDS
# A caption's label: numbered ("Figure 3:", "TABLE IV", "图 1"), or unnumbered and followed by a
# colon ("Table: ..." as beamer sets it); not a word that starts like one ("Tables are ...").
_CAPTION = re.compile(r"^\s*(?i:figure|fig\.|table|tab\.|listing|algorithm|exhibit|图|表)"
                      r"\s*([\dA-Z一二三四五六七八九十]|[:：])")
# A numbered heading: "3", "2.4", "A.1", "IV." or "Chapter 2" / "第3章" before its words.
_NUMBERED_HEADING = re.compile(r"^\s*((\d{1,2}|[A-Z])(\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.|(?i:chapter|section|part|appendix)\s+\w+"
                               r"|第\s*[\d一二三四五六七八九十]+\s*[章节部篇])\s+\S")
_LETTERS = re.compile(r"[^\W\d_]")
# Relations and operators of a displayed formula, whose tall box or heavy symbols are no heading's.
_FORMULA = re.compile(r"[=<>≤≥≠≈→←↔⇒∫∑∏√∂∞±×÷]")
# Code or an address: braces, an at sign (an e-mail address), a web address, a method call
# ("p.lineTo("), an import, or a first word (after a line number) that is a macro, a comment or a
# directive.
_CODE = re.compile(r"[{}@]|://|\bwww\.|\w\.\w+\(|^\s*(from\s+[\w.]+\s+)?import\s+\w|^\s*(\d+\s+)?[\\%#]")
_PAGE_OF = re.compile(r"\d+\s*/\s*\d+")  # "55/92": a page of so many
_PROSE = ("text", "title", "list")  # the kinds a numbered list's items may have been given
_LEAD_IN = (".", ",", ";", ":", "：", "。")  # how a sentence or a lead-in ends, and a heading does not
_ENDS_IN_PAGE_NUMBER = re.compile(r"(\.\.\.|\s)\s*([0-9]+|[ivxlc]+)\s*$", re.IGNORECASE)
# A note's mark: a number, a symbol or a circled number, then a space or punctuation; or a
# number glued to the note's first (capitalised) word, as a raised mark reads from a text layer
# ("1The document ...") and often from OCR.
_FOOTNOTE_MARK = re.compile(r"^\s*(\d{1,2}|[*†‡§¶])(\s|[^\w\s])|^\s*\d{1,2}(?=[A-Z][a-z])|^\s*[①-⑳¹²³⁴-⁹]")


def assign_kinds(groups: list[Group], page_height: float, h: float, params: LayoutParams) -> list[Group]:
    """The groups with each text group's kind set (tables and figures keep theirs), a bold
    heading set tight over its lines first split off its block."""
    body_h = _body_height(groups, h)
    body_pitch = _most_characters([(p, len(it.line.text)) for g in groups for it in g.items if (p := pitch(it))])
    body_stroke = _body_stroke(groups)
    groups = [part for group in groups for part in _heading_off(group, body_stroke, params)]
    for group in groups:
        if group.kind != "text":
            continue
        first = group.items[0].line
        if first.bullet:
            group.kind = "list"
        elif _CAPTION.match(first.text) and len(group.items) <= 6:
            group.kind = "caption"
        elif _reads_as_heading(group) and (
                _is_title(group, body_h, body_pitch, params)
                or (_is_bold_heading(group, body_stroke, params)
                    and not _running(group, groups, page_height, params))):
            group.kind = "title"
    groups = _mark_enumerations(groups, params)
    _mark_margins(groups, page_height, h, params)
    _mark_footnotes(groups, page_height, body_h)
    return groups


def _size(it: Item) -> float:
    """A line's type size: the text layer's font size where known, else its box height."""
    return it.line.font_size if it.line.font_size else it.h


def _body_height(groups: list[Group], h: float) -> float:
    """The body text's size: the size most characters are set in."""
    size = _most_characters([(_size(it), len(it.line.text)) for g in groups for it in g.items])
    return h if size is None else size


def _body_stroke(groups: list[Group]) -> float | None:
    """The body text's stroke width: the one most characters are drawn with (None: unmeasured)."""
    return _most_characters([(it.line.stroke, len(it.line.text)) for g in groups for it in g.items
                             if it.line.stroke is not None])


def _most_characters(values: list[tuple[float, int]]) -> float | None:
    """The median of (value, characters) pairs, each value counted once per character."""
    order = sorted(values)
    total = sum(n for _, n in order)
    run = 0
    for value, n in order:
        run += n
        if run >= total / 2:
            return value
    return None


def _heading_off(group: Group, body_stroke: float | None, params: LayoutParams) -> list[Group]:
    """The block, or its first line apart from the rest where that line alone is drawn bold and
    would be a title by itself: a heading set tight over lines as wide as it (a narrow column, a
    changes list under its author), which the paragraph rules cannot tell from a first line."""
    items = group.items
    if group.kind != "text" or len(items) < 2 or not _drawn_bold(items[0], body_stroke, params):
        return [group]
    if any(_drawn_bold(it, body_stroke, params) for it in items[1:]):
        return [group]
    head = Group([items[0]])
    if not (_reads_as_heading(head) and _is_bold_heading(head, body_stroke, params)):
        return [group]
    return [head, Group(items[1:])]


def _mark_enumerations(groups: list[Group], params: LayoutParams) -> list[Group]:
    """Blocks one after another whose labels count on (1., 2., 3.; a), b); (i), (ii)) are list
    items, set large, heavy or plain (a manual's numbered steps, a slide's enumerate): a section's
    numbered heading has its text under it before the next. A block holding several items, each
    line counting on starting where the first does, is cut into one block per item first."""
    groups = [part for group in groups for part in _enumerated_items(group, params)]
    k = 0
    while k < len(groups):
        end = k + 1
        while end < len(groups) and _counts_on(groups[end - 1], groups[end]):
            end += 1
        if end - k > 1:
            for group in groups[k:end]:
                group.kind = "list"
        k = end
    return groups


def _counts_on(upper: Group, lower: Group) -> bool:
    return (upper.kind in _PROSE and lower.kind in _PROSE
            and counts_on(upper.items[0].line.output_text, lower.items[0].line.output_text))


def _enumerated_items(group: Group, params: LayoutParams) -> list[Group]:
    """The block cut before each line whose label counts on from the last item's, standing
    where the block's first line starts."""
    first = group.items[0]
    if group.kind != "text" or len(group.items) < 2 or enumeration_label(first.line.output_text) is None:
        return [group]
    parts = [[first]]
    for it in group.items[1:]:
        if (abs(it.x0 - first.x0) <= params.item_align * first.h
                and counts_on(parts[-1][0].line.output_text, it.line.output_text)):
            parts.append([it])
        else:
            parts[-1].append(it)
    return [Group(items) for items in parts] if len(parts) > 1 else [group]


def _running(group: Group, groups: list[Group], page_height: float, params: LayoutParams) -> bool:
    """Could the block be a running head or foot: inside the top band with no block above it,
    or inside the bottom band with none below it? (A section's heading at the top of the text
    has the running head above it.)"""
    band = params.running_band * page_height
    top, bottom = min(it.y0 for it in group.items), max(it.y1 for it in group.items)
    if top < band:
        return not any(it.y1 <= top for g in groups if g is not group for it in g.items)
    if bottom > page_height - band:
        return not any(it.y0 >= bottom for g in groups if g is not group for it in g.items)
    return False


def _is_bold_heading(group: Group, body_stroke: float | None, params: LayoutParams) -> bool:
    """One or two lines drawn bold, every one of them (a bold word inside a line leaves the
    line's weight near the body's), short, neither a sentence or a lead-in (ending in ".", ":")
    nor a contents or index entry (ending in a page number): a heading set bold at the body's
    size."""
    if len(group.items) > 2 or not all(_drawn_bold(it, body_stroke, params) for it in group.items):
        return False
    text = _text(group)
    return (len(text) <= 100 and len(_LETTERS.findall(text)) >= 2 and not text.endswith(_LEAD_IN)
            and not _ENDS_IN_PAGE_NUMBER.search(text) and not reads_as_page_numbers(group.items[-1].line.text))


def _drawn_bold(it: Item, body_stroke: float | None, params: LayoutParams) -> bool:
    """Set in a bold font, as the text layer says, or drawn with strokes `bold_stroke` times the
    body's."""
    if it.line.bold is not None:
        return it.line.bold
    stroke = it.line.stroke
    return body_stroke is not None and stroke is not None and stroke >= params.bold_stroke * body_stroke


def _reads_as_heading(group: Group) -> bool:
    """Could the block's words be a heading at all: a letter in them, no formula (whose tall
    box or heavy symbols are no heading's), no line of code ("\\end{figure}", "% note"), no
    page number in a box of its own at the row's end (a running head's), and no numbered
    sentence (a footnote whose raised mark makes its box tall)?"""
    text = _text(group)
    if not _LETTERS.search(text) or _FORMULA.search(text) or reads_as_code(text):
        return False
    last = group.items[-1].line.text
    if len(group.items) > 1 and (reads_as_page_numbers(last) or _PAGE_OF.fullmatch(last.strip())):
        return False  # a running head or foot with its page number at the other margin
    return not (_NUMBERED_HEADING.match(text) and text.endswith("."))


def reads_as_code(text: str) -> bool:
    """Does the line read as code or an address (`_CODE`)?"""
    return bool(_CODE.search(text))


def _text(group: Group) -> str:
    return " ".join(it.line.output_text for it in group.items).strip()


def _is_title(group: Group, body_h: float, body_pitch: float | None, params: LayoutParams) -> bool:
    """A short block set larger than the body (`_set_wider` where its box alone does not show
    it); or one numbered line ("2.4 Results") set a little larger, which is no table of
    contents' entry (those end in their page number)."""
    size = float(np.median([_size(it) for it in group.items]))
    chars = sum(len(it.line.text) for it in group.items)
    if len(group.items) <= 3 and chars <= 200 and (size > params.title_size * body_h
                                                   or _set_wider(group, size, body_h, body_pitch, params)):
        return True
    text = group.items[0].line.output_text
    return (len(group.items) == 1 and chars <= 100 and size > params.numbered_title_size * body_h
            and bool(_NUMBERED_HEADING.match(text)) and not _ENDS_IN_PAGE_NUMBER.search(text))


def _set_wider(group: Group, size: float, body_h: float, body_pitch: float | None, params: LayoutParams) -> bool:
    """An OCR block boxed a little taller than the body's lines, its characters `title_pitch`
    times as wide: a larger size whose box hides it (a word without descenders, a slide's
    frame title over a body of one bigger font). Not a lead-in ending in ':'; a text layer's
    lines have their font size."""
    return (body_pitch is not None and size > params.numbered_title_size * body_h
            and all(it.line.font_size is None for it in group.items) and not _text(group).endswith(_LEAD_IN)
            and float(np.median([pitch(it) for it in group.items])) > params.title_pitch * body_pitch)


def _mark_footnotes(groups: list[Group], page_height: float, body_h: float) -> None:
    """Blocks set smaller than the body, in the page's lower part, after the last block of body
    size, the first led by a note mark ('1', '*', '†')."""
    last_body = max((k for k, g in enumerate(groups)
                     if g.kind in ("text", "list", "title") and _group_size(g) >= 0.95 * body_h),
                    default=-1)
    started = False
    for group in groups[last_body + 1:]:
        if group.kind not in ("text", "list"):
            continue
        small = _group_size(group) < 0.92 * body_h
        low = min(it.y0 for it in group.items) > 0.5 * page_height
        if small and low and (started or _FOOTNOTE_MARK.match(group.items[0].line.output_text)):
            group.kind, started = "footnote", True


def _group_size(group: Group) -> float:
    return float(np.median([_size(it) for it in group.items]))


def _mark_margins(groups: list[Group], page_height: float, h: float, params: LayoutParams) -> None:
    """A lone one-row block, no taller than body text, in the top/bottom band of the page and
    set apart from the body, is a running head/foot (a big title up there is not). The row may
    hold up to three pieces: a running title with the page number at the other margin."""
    if len(groups) < 2:
        return
    band = params.running_band * page_height
    first, last = groups[0], groups[-1]
    if _running_row(first, h) and max(it.y1 for it in first.items) < band and _gap(first, groups[1]) > h:
        first.kind = "header"
    if _running_row(last, h) and min(it.y0 for it in last.items) > page_height - band \
            and _gap(groups[-2], last) > h:
        last.kind = "footer"


def _gap(upper: Group, lower: Group) -> float:
    return min(it.y0 for it in lower.items) - max(it.y1 for it in upper.items)


def _running_row(group: Group, h: float, pieces: int = 3) -> bool:
    """At most `pieces` boxes side by side on one row, none taller than body text."""
    items = group.items
    if len(items) > pieces or any(it.h > 1.15 * h for it in items):
        return False
    ref = items[0]
    return all(ref.y0 <= (it.y0 + it.y1) / 2 <= ref.y1 for it in items[1:])
