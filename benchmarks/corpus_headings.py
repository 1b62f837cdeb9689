#!/usr/bin/env python3
"""Headings on the layout corpus: do the lines pagerunner marks `title` (Markdown `##`) match the
lines the PDF sets larger than its body text?

    PAGERUNNER_LAYOUT_LINES=/work/corpus/lines python benchmarks/corpus_headings.py --halves tune check
    PAGERUNNER_LAYOUT_LINES=/work/corpus/lines python benchmarks/corpus_headings.py --halves tune --misses 40
    python benchmarks/corpus_headings.py --halves tune check --lines textlayer   # pages read from their text layer

The truth comes from each page's text layer, never from a list of documents:
- characters are cut into segments as `corpus_layout` cuts them (one baseline, no gap wider than
  0.8 em); segments on one baseline are one line;
- a character's size is its font size times the scale of its text matrix (some PDFs set every
  font at 1 pt and scale the matrix): the same for every glyph of one font at one size, unlike
  the glyph's own box;
- the body size is the size most of the page's characters are set in, code (fixed-pitch
  fonts) left out where the page has prose too;
- a heading is a line with a letter, outside the running-head bands (top 7 %, bottom 8 %), no
  contents entry (a page number after leader dots or a gap wider than an em), no caption's
  first line ("Figure 2:", which pagerunner marks `caption`), no address (e-mail, web), and
  either of
  up to 150 characters set at least `--ratio` (1.15) times the body size, or of up to 100
  characters all bold (nine in ten; the font's flag, weight or name: cmbx, Bold, as the
  text-layer engine tells a bold font) at the body's size or larger, and not code (fixed pitch).
  The text-layer engine's titles are measured against the same fonts, so for them this scores
  the layout rules that turn bold lines into titles, not the finding of bold fonts.
  A page whose larger lines hold more than a third of its characters has two body sizes (prose
  beside smaller code, say) and no truth: it is left out and counted.

A predicted title line matches a heading when their texts, NFKC-normalised without whitespace,
differ by at most a quarter of the longer one's characters, or one holds the other and is at
least 4 characters long (a heading the detector boxed in two pieces). Precision counts predicted
title lines, recall the truth's heading lines, pooled over a half's pages.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from corpus_layout import CAPTION, is_mono  # noqa: E402
from model_cache.textlayer import FontStyles  # noqa: E402
from runner.evaluation.metrics import levenshtein, normalize  # noqa: E402

RUNNING_TOP, RUNNING_BOTTOM = 0.07, 0.92
_ADDRESS = re.compile(r"@|:\s*/\s*/|\bwww\s*\.")


@dataclass
class SizedChar:
    ch: str
    x0: float
    y0: float  # top, points from the top of the page
    x1: float
    y1: float
    size: float  # font size in points, with the text matrix's scale
    mono: bool  # a fixed-pitch font (code)
    bold: bool


@dataclass
class HeadingScore:
    truth: list[str]
    titles: list[str]
    found: list[bool] = field(default_factory=list)  # per truth heading
    right: list[bool] = field(default_factory=list)  # per predicted title


def sized_chars(page) -> list[SizedChar]:
    """The page's non-space characters with their boxes and sizes."""
    height = page.get_size()[1]
    textpage = page.get_textpage()
    styles = FontStyles(textpage)  # the text-layer engine's own test of a bold font
    chars = []
    fonts: dict[bytes, bool] = {}
    try:
        count = textpage.count_chars()
        text = textpage.get_text_range(0, count) if count > 0 else ""
        for index in range(min(count, len(text))):
            ch = text[index]
            if ch.isspace() or ch in "\ufffe\x02":
                continue
            left, bottom, right, top = textpage.get_charbox(index)
            size, bold = styles.type_of(index)
            if right <= left or size <= 0:
                continue
            chars.append(SizedChar(ch, left, height - top, right, height - bottom, size,
                                   is_mono(styles, index, fonts), bold))
    finally:
        textpage.close()
    return chars


def _continues(prev: SizedChar, char: SizedChar) -> bool:
    em = max(prev.size, char.size, 1.0)
    same_line = abs((prev.y0 + prev.y1) / 2 - (char.y0 + char.y1) / 2) < 0.4 * em
    return same_line and -0.5 * em < char.x0 - prev.x1 < 0.8 * em


def text_lines(chars: list[SizedChar]) -> list[list[SizedChar]]:
    """Segments (content order, one baseline, no wide gap), then segments sharing a baseline
    and a size joined into one line ("4.3" and "Homer" a quad apart)."""
    segments: list[list[SizedChar]] = []
    for char in chars:
        if segments and _continues(segments[-1][-1], char):
            segments[-1].append(char)
        else:
            segments.append([char])
    lines: list[list[SizedChar]] = []
    for segment in segments:
        size = _size(segment)
        mid = _middle(segment)
        for line in lines:
            if abs(_middle(line) - mid) < 0.3 * size and abs(_size(line) - size) < 0.05 * size:
                line.extend(segment)
                break
        else:
            lines.append(list(segment))
    return [sorted(line, key=lambda c: c.x0) for line in lines]


def _size(chars: list[SizedChar]) -> float:
    return statistics.median(c.size for c in chars)


def _middle(chars: list[SizedChar]) -> float:
    return statistics.median((c.y0 + c.y1) / 2 for c in chars)


def body_size(chars: list[SizedChar]) -> float:
    """The size most characters are set in (sizes rounded to a tenth of a point), leaving out
    code (fixed-pitch) where a page has prose too: a manual's listings are often set smaller."""
    prose = [c for c in chars if not c.mono]
    counts: dict[float, int] = defaultdict(int)
    for c in prose if len(prose) >= 0.2 * len(chars) else chars:
        counts[round(c.size, 1)] += 1
    return max(counts, key=lambda s: counts[s]) if counts else 0.0


def truth_headings(page, ratio: float, most: float = 1 / 3) -> list[str] | None:
    """The page's heading lines; None where larger lines hold more than `most` of the characters."""
    chars = sized_chars(page)
    if not chars:
        return []
    height = page.get_size()[1]
    body = body_size(chars)
    if sum(1 for c in chars if c.size >= ratio * body) > most * len(chars):
        return None
    out = []
    for line in text_lines(chars):
        text = _spaced(line)
        top, bottom = min(c.y0 for c in line), max(c.y1 for c in line)
        larger = len(line) <= 150 and _size(line) >= ratio * body
        bold = len(line) <= 100 and _size(line) >= 0.95 * body and _bold_prose(line)
        if ((larger or bold) and any(c.ch.isalpha() for c in line)
                and top > RUNNING_TOP * height and bottom < RUNNING_BOTTOM * height
                and not _contents_entry(line) and not CAPTION.match(text) and not _ADDRESS.search(text)):
            out.append(text)
    return out


def _bold_prose(line: list[SizedChar]) -> bool:
    """Is the whole line bold (nine in ten of its characters), and not code?"""
    return sum(c.bold for c in line) >= 0.9 * len(line) and 2 * sum(c.mono for c in line) < len(line)


def _contents_entry(line: list[SizedChar]) -> bool:
    """Does the line end in a page number set off by leader dots or a gap wider than an em?"""
    k = len(line)
    while k > 0 and (line[k - 1].ch.isdigit() or line[k - 1].ch in "ivxlcIVXLC"):
        k -= 1
    if k == len(line) or k == 0:
        return False
    before = line[k - 1]
    return before.ch in ".·…" or line[k].x0 - before.x1 > line[k].size


def _spaced(line: list[SizedChar]) -> str:
    """The line's text, a space where characters stand more than a fifth of their size apart."""
    out = line[0].ch
    for prev, char in zip(line, line[1:]):
        out += (" " if char.x0 - prev.x1 > 0.2 * char.size else "") + char.ch
    return out


def _key(text: str) -> str:
    return "".join(normalize(text).split()).casefold()


def same_heading(a: str, b: str) -> bool:
    a, b = _key(a), _key(b)
    if not a or not b:
        return False
    if min(len(a), len(b)) >= 4 and (a in b or b in a):
        return True
    return levenshtein(a, b) <= 0.25 * max(len(a), len(b))


def score_page(truth: list[str], titles: list[str]) -> HeadingScore:
    return HeadingScore(truth, titles,
                        found=[any(same_heading(t, p) for p in titles) for t in truth],
                        right=[any(same_heading(p, t) for t in truth) for p in titles])


def title_lines(result) -> list[str]:
    return [line.text for block in result.blocks if block.kind == "title" for line in block.lines]


def textlayer_titles(corpus: Path, record: dict) -> list[str]:
    """The title lines of the page read from its own text layer (`--text-layer` on)."""
    import pypdfium2 as pdfium

    from model_cache.textlayer import extract_text_layer
    pdf = pdfium.PdfDocument(str(corpus / "pdfs" / record["package"] / record["pdf"]))
    try:
        blocks = extract_text_layer(pdf[record["page"] - 1], 200 / 72).blocks
    finally:
        pdf.close()
    return [line.text for block in blocks if block.kind == "title" for line in block.lines]


def page_truth(corpus: Path, record: dict, ratio: float) -> list[str] | None:
    import pypdfium2 as pdfium
    pdf = pdfium.PdfDocument(str(corpus / "pdfs" / record["package"] / record["pdf"]))
    try:
        return truth_headings(pdf[record["page"] - 1], ratio)
    finally:
        pdf.close()


def report(label: str, scores: dict[str, HeadingScore], records: dict[str, dict]) -> None:
    groups: dict[str, list[HeadingScore]] = defaultdict(list)
    for ident, s in scores.items():
        groups["all"].append(s)
        groups[records[ident]["lang"]].append(s)
        if "slides" in records[ident]["tags"]:
            groups["slides"].append(s)
    print(f"\n**{label}**\n")
    print("| pages | set | heading lines (truth) | title lines (pagerunner) | precision | recall | F1 |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for name in ("all", "en", "zh", "slides"):
        group = groups.get(name, [])
        truth = sum(len(s.truth) for s in group)
        titles = sum(len(s.titles) for s in group)
        found = sum(sum(s.found) for s in group)
        right = sum(sum(s.right) for s in group)
        precision = right / titles if titles else 0.0
        recall = found / truth if truth else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        print(f"| {len(group)} | {name} | {truth} | {titles} | {precision:.3f} | {recall:.3f} | {f1:.3f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--halves", nargs="+", choices=("tune", "check"), default=["tune"])
    parser.add_argument("--copies", nargs="+", choices=("born", "scan"), default=["born", "scan"])
    parser.add_argument("--ratio", type=float, default=1.15, help="a heading's size over the body's")
    parser.add_argument("--lines", choices=("ocr", "textlayer"), default="ocr", help="titles of the page "
                        "images' OCR (replayed where PAGERUNNER_LAYOUT_LINES holds them), or of the text layer")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--misses", type=int, default=0, help="list this many pages with wrong or "
                        "missed headings per set (tuning half only: the checking half is read as numbers)")
    parser.add_argument("--verbose", action="store_true", help="print every page's counts")
    args = parser.parse_args()

    from PIL import Image

    from model_cache.engine import EngineOptions
    from model_cache.ppocr.engine import create_engine
    engine = create_engine(EngineOptions(threads=args.threads)) if args.lines == "ocr" else None
    records = {}
    for line in (args.corpus / "pages.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            records[record["id"]] = record
    start = time.perf_counter()
    for half in args.halves:
        mine = sorted((r for r in records.values() if r["half"] == half), key=lambda r: r["id"])
        truths = {r["id"]: page_truth(args.corpus, r, args.ratio) for r in mine}
        print(f"\n{half} half: {sum(t is None for t in truths.values())} of {len(mine)} pages have two body sizes "
              "and are left out")
        mine = [r for r in mine if truths[r["id"]] is not None]
        for copy in args.copies if engine is not None else ("text layer",):
            scores = {}
            for record in mine:
                if engine is None:
                    titles = textlayer_titles(args.corpus, record)
                else:
                    with Image.open(args.corpus / record[copy]) as image:
                        titles = title_lines(engine.ocr(image))
                scores[record["id"]] = s = score_page(truths[record["id"]], titles)
                if args.verbose:
                    print(f"{record['id']}\t{record['category']}\t{len(s.truth)}\t{sum(s.found)}\t"
                          f"{len(s.titles)}\t{sum(s.right)}", flush=True)
            report(f"{half} half, {copy} copy ({len(scores)} pages)", scores, records)
            if args.misses and half == "tune":
                misses(scores, args.misses)
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


def misses(scores: dict[str, HeadingScore], count: int) -> None:
    wrong = sorted(scores.items(), key=lambda kv: -(kv[1].found.count(False) + kv[1].right.count(False)))
    for ident, s in wrong[:count]:
        lost = [t for t, f in zip(s.truth, s.found) if not f]
        extra = [p for p, r in zip(s.titles, s.right) if not r]
        if lost or extra:
            print(f"- {ident}\n    missed: {lost}\n    not headings: {extra}")


if __name__ == "__main__":
    raise SystemExit(main())
