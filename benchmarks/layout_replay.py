#!/usr/bin/env python3
"""Reading order on the layout corpus (benchmarks/corpus.py), per category and half.

    PAGERUNNER_LAYOUT_LINES=/work/corpus/lines python benchmarks/layout_replay.py --half tune
    python benchmarks/layout_replay.py --half check --lines textlayer
    python benchmarks/layout_replay.py --half tune --copy scan --limit 3   # 3 pages per category
    PAGERUNNER_LAYOUT_LINES=/work/corpus/lines python benchmarks/layout_replay.py --half tune --recorded -E rec_blur=0

`--lines ocr` (default) runs the ppocr engine on each page image; with PAGERUNNER_LAYOUT_LINES
set the engine's pre-layout lines are kept there, so a rerun after a change of layout rules
replays only the layout stage. `--lines textlayer` feeds the stage the page's own text-layer
lines (perfect characters, the PDF's line boxes) and asks for geometric order: a fast proxy
whose whole error is reading order; `--lines segments` cuts the page's characters into
detector-like segments first (PDFium's own lines may span two columns). Scoring is the issue's: NFKC, whitespace removed, CER
against the page's text layer, bag-of-characters F1; per category the mean and median page CER,
mean bag-F1 and the order criterion mean CER <= 1.5 x (1 - mean bag-F1). `--ordered` also scores
each page with its output lines put in the reference's order (runner/evaluation/line_order.py),
an estimate of the CER no reading order of those lines removes, and gives the CER floor no order
of its characters goes below (missed and extra characters).
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

from runner.evaluation.line_order import character_floor, ordered_cer  # noqa: E402
from runner.evaluation.metrics import bag_f1, cer, normalize  # noqa: E402


@dataclass
class PageScore:
    ident: str
    category: str
    cer: float
    f1: float
    ordered: float | None = None  # CER with the page's lines in the reference's order (--ordered)
    floor: float | None = None  # the lowest CER any order of its characters reaches (--ordered)


def page_records(corpus: Path, half: str, manifest: Path | None) -> list[dict]:
    """The half's pages from the built corpus (pages.jsonl), or from the manifest alone (enough
    for `--lines textlayer`: the PDFs are extracted before the pages are rendered)."""
    if manifest is not None:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        docs = {d["id"]: d for d in data["documents"]}
        records = [{**p, "package": docs[p["doc"]]["package"], "pdf": docs[p["doc"]]["path"]}
                   for p in data["pages"]]
    else:
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


def is_recorded(engine, path: Path) -> bool:
    """Are this page image's recognised lines in the PAGERUNNER_LAYOUT_LINES folder (for the
    engine's settings)? Then a run replays them instead of recognising the page."""
    import os

    from PIL import Image

    from model_cache.layout.replay import ENV, page_key
    from model_cache.ppocr.engine import to_rgb
    folder = os.environ.get(ENV)
    if not folder:
        raise SystemExit(f"--recorded needs {ENV} set")
    with Image.open(path) as image:
        key = page_key(to_rgb(image), repr(engine.params))
    return (Path(folder) / f"{key}.json").is_file()


def textlayer_texts(corpus: Path, record: dict) -> tuple[str, str]:
    """(the text layer in content order, as the ground truth has it; the stage's geometric
    order of the same lines)."""
    import pypdfium2 as pdfium

    from model_cache.layout import layout_page
    from model_cache.textlayer import extract_text_layer
    from outputs.model import blocks_text

    pdf = pdfium.PdfDocument(str(corpus / "pdfs" / record["package"] / record["pdf"]))
    try:
        layer = extract_text_layer(pdf[record["page"] - 1], 200 / 72)
    finally:
        pdf.close()
    reference = "\n".join(line.text for line in layer.lines)
    return reference, blocks_text(layout_page(layer.layout_lines(), *layer.page_size))


def segment_texts(corpus: Path, record: dict, ink: str = "none") -> tuple[str, str]:
    """(the page's characters in content order; the stage's order of them cut into segments as a
    text detector boxes them: runs on one baseline without a gap wider than 0.8 character
    heights). Closer to OCR lines than PDFium's text lines, which may span two columns or two
    visual lines. `ink`: "none", or what the ppocr engine finds in the page image's pixels and
    hands the stage with its lines: "figures", or "figures+rules"."""
    from model_cache.layout import layout_page
    from outputs.model import blocks_text

    reference, lines, width, height = segment_lines(corpus, record)
    figures, rules = page_ink(corpus, record, lines) if ink != "none" else ([], [])
    rules = rules if ink == "figures+rules" else []
    return reference, blocks_text(layout_page(lines, width, height, figures=figures, rules=rules))


def page_ink(corpus: Path, record: dict, lines) -> tuple[list, list]:
    """Figure regions and horizontal rules of the page's born-digital image."""
    from PIL import Image

    from model_cache.ppocr.engine import to_rgb
    from model_cache.ppocr.figures import non_text
    with Image.open(corpus / record["born"]) as image:
        return non_text(to_rgb(image), lines)


def segment_lines(corpus: Path, record: dict):
    import pypdfium2 as pdfium

    from model_cache.layout import TEXT_LAYER, LayoutLine

    pdf = pdfium.PdfDocument(str(corpus / "pdfs" / record["package"] / record["pdf"]))
    try:
        page = pdf[record["page"] - 1]
        textpage = page.get_textpage()
        scale, top = 200 / 72, page.get_size()[1]
        chars = []
        for i in range(textpage.count_chars()):
            ch = textpage.get_text_range(i, 1)
            if not ch.strip():
                continue
            left, bottom, right, up = textpage.get_charbox(i)
            chars.append((ch, left * scale, (top - up) * scale, right * scale, (top - bottom) * scale))
        width, height = (v * scale for v in page.get_size())
    finally:
        pdf.close()
    reference = "".join(c[0] for c in chars)
    segments: list[list[float]] = []  # [x0, y0, x1, y1] per segment, with its characters
    texts: list[list[str]] = []
    for ch, x0, y0, x1, y1 in chars:
        if segments:
            sx0, sy0, sx1, sy1 = segments[-1]
            size = max(sy1 - sy0, y1 - y0, 1.0)
            overlap = min(sy1, y1) - max(sy0, y0)
            reach = 3.0 if ch in ".·" or texts[-1][-1] in ".·" else 0.8  # dot leaders run on
            low = sy0 <= (y0 + y1) / 2 <= sy1 + 0.25 * size  # "," "." sit on or below the baseline
            if (overlap >= 0.5 * min(sy1 - sy0, y1 - y0) or low) and -0.3 * size < x0 - sx1 < reach * size:
                segments[-1] = [min(sx0, x0), min(sy0, y0), max(sx1, x1), max(sy1, y1)]
                texts[-1].append(ch)
                continue
        segments.append([x0, y0, x1, y1])
        texts.append([ch])
    # a run of leader dots alone is no text line to a detector (pagerunner finds leaders in the
    # pixels between two lines): left out, it costs every variant the same characters
    lines = [LayoutLine("".join(text), 1.0, [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], TEXT_LAYER)
             for (x0, y0, x1, y1), text in zip(segments, texts) if set(text) - set(".·")]
    return reference, lines, width, height


def score(reference: str, hypothesis: str) -> tuple[float, float]:
    ref, hyp = normalize(reference, cjk=True), normalize(hypothesis, cjk=True)
    return cer(ref, hyp), bag_f1(ref, hyp)


def page_score(ident: str, category: str, reference: str, text: str, ordered: bool) -> PageScore:
    """One page's text scored against its reference (with `ordered`, also with its lines in the
    reference's order, and the floor)."""
    page_cer, f1 = score(reference, text)
    if not ordered:
        return PageScore(ident, category, page_cer, f1)
    return PageScore(ident, category, page_cer, f1, ordered_cer(reference, text), character_floor(reference, text))


def peer_texts(folder: Path, half: str, copy: str) -> dict[str, dict[str, str]]:
    """tool -> page id -> text, from the corpus's cached peer results (benchmarks/accuracy.py
    --corpus writes one JSONL per tool); pagerunner's own cache is left out."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("set") == f"corpus-{half}-{copy}" and not record["tool"].startswith("pagerunner"):
                out[record["tool"]][record["ident"]] = record.get("text") or ""
    return out


def peer_report(scores: list[PageScore], peers: dict[str, dict[str, str]], references: dict[str, str],
                ordered: bool = False) -> None:
    """Each peer next to pagerunner on the pages both have, per category (with `ordered`, each
    one's CER with its lines in the reference's order and its floor too)."""
    for tool, texts in sorted(peers.items()):
        shared = [s for s in scores if s.ident in texts]
        if not shared:
            continue
        print(f"\n{tool} on the {len(shared)} pages it has results for (pagerunner on the same pages):")
        extra = " pagerunner / peer, lines in reference order | pagerunner / peer, floor |" if ordered else ""
        print("| category | pages | pagerunner mean CER | peer mean CER | pagerunner bag-F1 | peer bag-F1 |" + extra)
        print("| --- | ---: | ---: | ---: | ---: | ---: |" + (" ---: | ---: |" if ordered else ""))
        theirs = {s.ident: page_score(s.ident, s.category, references[s.ident], texts[s.ident], ordered)
                  for s in shared}
        for cat in sorted({s.category for s in shared}) + ["all"]:
            rows = [s for s in shared if cat in ("all", s.category)]
            peer = [theirs[s.ident] for s in rows]
            line = (f"| {cat} | {len(rows)} | {statistics.fmean(s.cer for s in rows):.4f} | "
                    f"{statistics.fmean(p.cer for p in peer):.4f} | "
                    f"{statistics.fmean(s.f1 for s in rows):.4f} | "
                    f"{statistics.fmean(p.f1 for p in peer):.4f} |")
            if ordered:
                line += (f" {statistics.fmean(s.ordered for s in rows):.4f} / "
                         f"{statistics.fmean(p.ordered for p in peer):.4f} | "
                         f"{statistics.fmean(s.floor for s in rows):.4f} / "
                         f"{statistics.fmean(p.floor for p in peer):.4f} |")
            print(line)


def versus_report(scores: list[PageScore], peers: dict[str, dict[str, str]], references: dict[str, str],
                  count: int) -> None:
    """The pages where a peer's CER is furthest below pagerunner's (where to look next)."""
    rows = []
    for s in scores:
        theirs = {tool: score(references[s.ident], texts[s.ident])[0]
                  for tool, texts in peers.items() if s.ident in texts}
        if theirs:
            rows.append((s.cer - min(theirs.values()), s, theirs))
    rows.sort(key=lambda r: -r[0])
    print(f"\nthe {count} pages where a peer beats pagerunner by most:")
    for gap, s, theirs in rows[:count]:
        peers_cer = " ".join(f"{tool}={cer:.4f}" for tool, cer in sorted(theirs.items()))
        print(f"{s.ident}\t{s.category}\tpagerunner={s.cer:.4f}\t{peers_cer}\tgap={gap:+.4f}")


def report(scores: list[PageScore]) -> None:
    ordered = all(s.ordered is not None for s in scores)
    extra = " lines in reference order: mean CER | met | any order: mean CER floor | met |" if ordered else ""
    print("\n| category | pages | mean CER | median CER | bag-F1 | 1.5(1-F1) | order met |" + extra)
    print("| --- | ---: | ---: | ---: | ---: | ---: | :---: |" + (" ---: | :---: | ---: | :---: |" if ordered else ""))
    cats = sorted({s.category for s in scores})
    for cat in cats + ["all"]:
        rows = [s for s in scores if cat in ("all", s.category)]
        mean = statistics.fmean(s.cer for s in rows)
        f1 = statistics.fmean(s.f1 for s in rows)
        bound = 1.5 * (1 - f1)
        line = (f"| {cat} | {len(rows)} | {mean:.4f} | {statistics.median(s.cer for s in rows):.4f} | "
                f"{f1:.4f} | {bound:.4f} | {'yes' if mean <= bound else 'no'} |")
        if ordered:
            best = statistics.fmean(s.ordered for s in rows)
            floor = statistics.fmean(s.floor for s in rows)
            line += f" {best:.4f} | {'yes' if best <= bound else 'no'} | {floor:.4f} | {'yes' if floor <= bound else 'no'} |"
        print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--half", choices=("tune", "check"), required=True)
    parser.add_argument("--copy", choices=("born", "scan"), default="born")
    parser.add_argument("--lines", choices=("ocr", "textlayer", "segments"), default="ocr")
    parser.add_argument("--ink", choices=("none", "figures", "figures+rules"), default="none",
                        help="with --lines segments: hand the stage what the engine finds in the page's "
                             "pixels too (needs the built corpus's images)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many pages per category")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--manifest", type=Path, help="read the pages from this corpus manifest "
                        "instead of pages.jsonl (textlayer lines only)")
    parser.add_argument("--pages", type=Path, help="only the page ids listed in this file (first "
                        "column; e.g. an earlier --verbose output, to rescore the same pages)")
    parser.add_argument("--verbose", action="store_true", help="print every page's score")
    parser.add_argument("--recorded", action="store_true", help="with --lines ocr: only the pages "
                        "whose lines PAGERUNNER_LAYOUT_LINES already holds (replay only, never OCR)")
    parser.add_argument("--versus", type=int, default=0, help="list the N pages where a peer's "
                        "CER is furthest below pagerunner's")
    parser.add_argument("--ordered", action="store_true", help="also score each page with its "
                        "output lines in the reference's order (what no reading order removes)")
    parser.add_argument("--dump", type=Path, help="write each page's text into this folder")
    parser.add_argument("-E", "--engine-option", action="append", default=[], metavar="KEY=VALUE",
                        help="a ppocr setting; the recorded lines are keyed by the settings, so "
                        "lines recorded before stop 30 replay with -E rec_blur=0")
    args = parser.parse_args()
    records = limited(page_records(args.corpus, args.half, args.manifest), args.limit)
    if args.pages:
        wanted = {line.split("\t")[0] for line in args.pages.read_text(encoding="utf-8").splitlines()}
        records = [r for r in page_records(args.corpus, args.half, args.manifest) if r["id"] in wanted]
    engine = None
    if args.lines == "ocr":
        from model_cache.engine import EngineOptions
        from model_cache.ppocr.engine import create_engine
        extra = tuple(tuple(option.split("=", 1)) for option in args.engine_option)
        engine = create_engine(EngineOptions(threads=args.threads, extra=extra))
    scores = []
    references: dict[str, str] = {}
    start = time.perf_counter()
    if args.recorded:
        records = [r for r in records if engine is not None and is_recorded(engine, args.corpus / r[args.copy])]
    for record in records:
        if engine is not None:
            reference = (args.corpus / record["gt"]).read_text(encoding="utf-8")
            text = ocr_text(engine, args.corpus, record, args.copy)
        elif args.lines == "segments":
            reference, text = segment_texts(args.corpus, record, args.ink)
        else:
            reference, text = textlayer_texts(args.corpus, record)
        references[record["id"]] = reference
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
            (args.dump / f"{record['id']}.txt").write_text(text, encoding="utf-8")
        page = page_score(record["id"], record["category"], reference, text, args.ordered)
        scores.append(page)
        if args.verbose:
            tail = f"\t{page.ordered:.4f}\t{page.floor:.4f}" if page.ordered is not None else ""
            print(f"{page.ident}\t{page.category}\t{page.cer:.4f}\t{page.f1:.4f}{tail}", flush=True)
    print(f"\n{args.half} half, {args.copy} copy, lines from {args.lines}: {len(scores)} pages, "
          f"{time.perf_counter() - start:.0f} s")
    report(scores)
    if engine is not None:
        peers = peer_texts(args.corpus / "results", args.half, args.copy)
        peer_report(scores, peers, references, args.ordered)
        if args.versus:
            versus_report(scores, peers, references, args.versus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
