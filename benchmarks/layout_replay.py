#!/usr/bin/env python3
"""Reading order on the layout corpus (benchmarks/corpus.py), per category and half.

    PAGERUNNER_LAYOUT_LINES=/work/corpus/lines python benchmarks/layout_replay.py --half tune
    python benchmarks/layout_replay.py --half check --lines textlayer
    python benchmarks/layout_replay.py --half tune --copy scan --limit 3   # 3 pages per category

`--lines ocr` (default) runs the ppocr engine on each page image; with PAGERUNNER_LAYOUT_LINES
set the engine's pre-layout lines are kept there, so a rerun after a change of layout rules
replays only the layout stage. `--lines textlayer` feeds the stage the page's own text-layer
lines (perfect characters, the PDF's line boxes) and asks for geometric order: a fast proxy
whose whole error is reading order. Scoring is the issue's: NFKC, whitespace removed, CER
against the page's text layer, bag-of-characters F1; per category the mean and median page CER,
mean bag-F1 and the order criterion mean CER <= 1.5 x (1 - mean bag-F1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner.evaluation.metrics import bag_f1, cer, normalize  # noqa: E402


@dataclass
class PageScore:
    ident: str
    category: str
    cer: float
    f1: float


def page_records(corpus: Path, half: str) -> list[dict]:
    records = [json.loads(line) for line in (corpus / "pages.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    return [r for r in records if r["half"] == half]


def limited(records: list[dict], limit: int) -> list[dict]:
    """At most `limit` pages per category, the first ones in id order (no choosing by result)."""
    if not limit:
        return records
    taken: dict[str, int] = defaultdict(int)
    out = []
    for record in sorted(records, key=lambda r: r["id"]):
        if taken[record["category"]] < limit:
            taken[record["category"]] += 1
            out.append(record)
    return out


def ocr_text(engine, corpus: Path, record: dict, copy: str) -> str:
    from PIL import Image
    with Image.open(corpus / record[copy]) as image:
        return engine.ocr(image).text


def textlayer_text(corpus: Path, record: dict) -> str:
    """The stage's geometric order of the page's own text-layer lines."""
    import pypdfium2 as pdfium

    from model_cache.layout import TEXT_LAYER, from_line, layout_page
    from model_cache.textlayer import extract_text_layer
    from outputs.model import blocks_text

    pdf = pdfium.PdfDocument(str(corpus / "pdfs" / record["package"] / record["pdf"]))
    try:
        layer = extract_text_layer(pdf[record["page"] - 1], 200 / 72)
    finally:
        pdf.close()
    sizes = layer.font_sizes or [None] * len(layer.lines)
    lines = [from_line(line, TEXT_LAYER, size) for line, size in zip(layer.lines, sizes)]
    return blocks_text(layout_page(lines, *layer.page_size))


def score(reference: str, hypothesis: str) -> tuple[float, float]:
    ref, hyp = normalize(reference, cjk=True), normalize(hypothesis, cjk=True)
    return cer(ref, hyp), bag_f1(ref, hyp)


def report(scores: list[PageScore]) -> None:
    print("\n| category | pages | mean CER | median CER | bag-F1 | 1.5(1-F1) | order met |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | :---: |")
    cats = sorted({s.category for s in scores})
    for cat in cats + ["all"]:
        rows = [s for s in scores if cat in ("all", s.category)]
        mean = statistics.fmean(s.cer for s in rows)
        f1 = statistics.fmean(s.f1 for s in rows)
        bound = 1.5 * (1 - f1)
        print(f"| {cat} | {len(rows)} | {mean:.4f} | {statistics.median(s.cer for s in rows):.4f} | "
              f"{f1:.4f} | {bound:.4f} | {'yes' if mean <= bound else 'no'} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--half", choices=("tune", "check"), required=True)
    parser.add_argument("--copy", choices=("born", "scan"), default="born")
    parser.add_argument("--lines", choices=("ocr", "textlayer"), default="ocr")
    parser.add_argument("--limit", type=int, default=0, help="at most this many pages per category")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--verbose", action="store_true", help="print every page's score")
    args = parser.parse_args()
    records = limited(page_records(args.corpus, args.half), args.limit)
    engine = None
    if args.lines == "ocr":
        from model_cache.engine import EngineOptions
        from model_cache.ppocr.engine import create_engine
        engine = create_engine(EngineOptions(threads=args.threads))
    scores = []
    start = time.perf_counter()
    for record in records:
        reference = (args.corpus / record["gt"]).read_text(encoding="utf-8")
        text = (ocr_text(engine, args.corpus, record, args.copy) if engine is not None
                else textlayer_text(args.corpus, record))
        page_cer, f1 = score(reference, text)
        scores.append(PageScore(record["id"], record["category"], page_cer, f1))
        if args.verbose:
            print(f"{record['id']}\t{record['category']}\t{page_cer:.4f}\t{f1:.4f}", flush=True)
    print(f"\n{args.half} half, {args.copy} copy, lines from {args.lines}: {len(scores)} pages, "
          f"{time.perf_counter() - start:.0f} s")
    report(scores)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
