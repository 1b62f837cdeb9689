#!/usr/bin/env python3
"""Paragraph breaks on the layout corpus: where the layout stage cuts a paragraph in two, and where
it runs two paragraphs together. Reading-order CER cannot see either (whitespace is removed
before scoring), while a reader of the Markdown sees both.

    python benchmarks/paragraph_breaks.py --half tune                  # text-layer segments
    PAGERUNNER_LAYOUT_LINES=/work/corpus/lines python benchmarks/paragraph_breaks.py \\
        --half check --lines recorded                                 # OCR lines recorded earlier

Two counts per page, from the page's text blocks (kinds `text` and `list`, in reading order):
- **split**: a block ends inside a sentence and the next block goes on with it: the first ends
  with a lower-case letter, a comma, a semicolon or a hyphen and the next starts with a
  lower-case Latin letter (English prose never starts a paragraph that way), or a CJK block ends
  on an ideograph (no closing punctuation) and the next starts with one, level with it on the
  left and as wide (a wrapped line, not a new item).
- **run-on**: inside a block, a line ending in sentence punctuation that stops more than three
  characters short of the block's right edge is followed by a line starting with a capital
  letter, a digit or an ideograph. In justified text only a paragraph's last line stops short,
  so this is a break the stage missed (ragged text, code and lists make it a noisy count: compare
  two versions, do not read it alone).
The lines are the page's own text-layer characters cut into detector-like segments (as
`layout_replay.py --lines segments`), OCR lines recorded under PAGERUNNER_LAYOUT_LINES
(`--lines recorded`: pages without a record are skipped), or the page's text-layer lines read as
`pagerunner run` reads a born-digital page by default (`--lines textlayer`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from layout_replay import page_records, segment_lines  # noqa: E402

_ENDS_INSIDE = re.compile(r"[a-z,;\-]$")
_SENTENCE_END = re.compile(r"[.!?:。！？：]$")
_STARTS_PARAGRAPH = re.compile(r"^[A-Z0-9]")
PROSE = ("text", "list")


def _is_ideograph(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith("CJK UNIFIED")


def _span(line) -> tuple[float, float]:
    xs = [p[0] for p in line.box]
    return min(xs), max(xs)


def splits(blocks) -> int:
    count = 0
    for a, b in zip(blocks, blocks[1:]):
        if a.kind not in PROSE or b.kind not in PROSE or not a.lines or not b.lines:
            continue
        end, start = a.lines[-1].text.strip(), b.lines[0].text.strip()
        if not end or not start:
            continue
        if _ENDS_INSIDE.search(end) and start[0].islower() and start[0].isascii():
            count += 1
        elif _is_ideograph(end[-1]) and _is_ideograph(start[0]):
            (ax0, ax1), (bx0, bx1) = _span(a.lines[-1]), _span(b.lines[0])
            height = max(p[1] for p in b.lines[0].box) - min(p[1] for p in b.lines[0].box)
            if abs(ax0 - bx0) < height and ax1 - ax0 > 0.8 * (bx1 - bx0):
                count += 1
    return count


def run_ons(blocks) -> int:
    count = 0
    for block in blocks:
        if block.kind not in PROSE or len(block.lines) < 3:
            continue
        right = max(_span(line)[1] for line in block.lines)
        for line, nxt in zip(block.lines, block.lines[1:]):
            text, following = line.text.strip(), nxt.text.strip()
            if not text or not following or not _SENTENCE_END.search(text):
                continue
            x0, x1 = _span(line)
            char = (x1 - x0) / max(1, len(text))
            if right - x1 > 3 * char and (_STARTS_PARAGRAPH.match(following) or _is_ideograph(following[0])):
                count += 1
    return count


def recorded_lines(corpus: Path, record: dict, copy: str):
    """The OCR lines recorded for this page image (ppocr's default settings), or None."""
    import os

    from PIL import Image

    from model_cache.engine import EngineOptions
    from model_cache.layout.lines import LayoutLine
    from model_cache.layout.replay import ENV, page_key
    from model_cache.ppocr.engine import params_from, to_rgb
    from model_cache.ppocr.assets import load_model_set

    global _SETTINGS
    if _SETTINGS is None:
        options = EngineOptions()
        models = load_model_set(options.model_dir, options.model)
        _SETTINGS = repr(params_from(options, models.defaults, models.rec.meta))
    with Image.open(corpus / record[copy]) as image:
        path = Path(os.environ[ENV]) / f"{page_key(to_rgb(image), _SETTINGS)}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    lines = [LayoutLine(**{k: v for k, v in line.items() if k != "words"}) for line in data["lines"]]
    return lines, data["width"], data["height"]


_SETTINGS: str | None = None


def textlayer_lines(corpus: Path, record: dict):
    """The page's own text-layer lines, as `pagerunner run` reads a born-digital page (its
    layout then keeps their order where that order reads right)."""
    import pypdfium2 as pdfium

    from model_cache.textlayer import extract_text_layer

    pdf = pdfium.PdfDocument(str(corpus / "pdfs" / record["package"] / record["pdf"]))
    try:
        layer = extract_text_layer(pdf[record["page"] - 1], 200 / 72)
    finally:
        pdf.close()
    return layer.layout_lines(), *layer.page_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--half", choices=("tune", "check"), required=True)
    parser.add_argument("--lines", choices=("segments", "recorded", "textlayer"), default="segments")
    parser.add_argument("--copy", choices=("born", "scan"), default="born")
    parser.add_argument("--verbose", action="store_true", help="print every page's counts")
    args = parser.parse_args()

    from model_cache.layout import layout_page

    pages = total_splits = total_run_ons = 0
    for record in sorted(page_records(args.corpus, args.half, None), key=lambda r: r["id"]):
        keep_order = args.lines == "textlayer"
        if args.lines == "segments":
            _, lines, width, height = segment_lines(args.corpus, record)
        elif keep_order:
            lines, width, height = textlayer_lines(args.corpus, record)
        else:
            found = recorded_lines(args.corpus, record, args.copy)
            if found is None:
                continue
            lines, width, height = found
        blocks = layout_page(lines, width, height, keep_order=keep_order)
        s, r = splits(blocks), run_ons(blocks)
        pages, total_splits, total_run_ons = pages + 1, total_splits + s, total_run_ons + r
        if args.verbose and (s or r):
            print(f"{record['id']}\tsplit {s}\trun-on {r}")
    print(f"{args.half} half, {args.lines} lines: {pages} pages, {total_splits} splits, "
          f"{total_run_ons} run-ons")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
