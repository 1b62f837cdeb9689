#!/usr/bin/env python3
"""The fast loop for layout work: score this checkout's layout on the corpus in seconds.

    python benchmarks/corpus_relayout.py --corpus /work/corpus --halves tune --copies born
    python benchmarks/corpus_relayout.py --corpus /work/corpus --halves tune --worst 10 --dump /tmp/relayout
    PAGERUNNER_LAYOUT_LINES=/work/corpus/lines python benchmarks/corpus_relayout.py --layout-cache --halves tune

The pages' recognised lines (recorded by benchmarks/accuracy.py --corpus while it ran pagerunner, see
corpus_lines.py) are put through this checkout's engine after recognition (bullets, leaders, layout,
reading order) and scored like accuracy.py --corpus scores them (with `--layout-cache`, the
engine's own recordings in PAGERUNNER_LAYOUT_LINES are replayed instead, word boxes included; a
page not recorded there is skipped, never recognised), side by side with the cached peers
and with the cached pagerunner baseline (main's code when the corpus was first measured). Only pages
with recorded lines and cached peer results are scored; the table says how many.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from corpus_accuracy import (PageScore, half_table, load_pages, score_page,  # noqa: E402
                             tool_cache)
from corpus_lines import load_record, replay_folder, replaying  # noqa: E402
from result_cache import ResultCache  # noqa: E402

RELAYOUT = "pagerunner (this checkout)"
BASELINE = "pagerunner (baseline)"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--halves", nargs="+", choices=("tune", "check"), default=["tune"])
    parser.add_argument("--copies", nargs="+", choices=("born", "scan"), default=["born"])
    parser.add_argument("--subset", type=int, default=0, help="seeded subset per half, as accuracy.py --subset")
    parser.add_argument("--peers", nargs="*", default=["tesseract", "rapidocr-v5"])
    parser.add_argument("--worst", type=int, default=0, help="list this many worst pages (by CER) per set")
    parser.add_argument("--lines-digest", help="replay the lines recorded under this recognition digest "
                        "(default: this checkout's, else the latest recording)")
    parser.add_argument("--dump", type=Path, help="write each page's relayout text into this folder")
    parser.add_argument("--layout-cache", action="store_true", help="replay the engine's recordings "
                        "in PAGERUNNER_LAYOUT_LINES (model_cache/layout/replay.py) instead of lines/")
    parser.add_argument("--pages-out", type=Path, help="write the scored page ids here (one a line)")
    parser.add_argument("--pages-in", type=Path, help="score only the page ids listed in this file")
    return parser.parse_args()


def layout_cache_record(engine, page, copy: str) -> bool:
    """Is the page image's recording in PAGERUNNER_LAYOUT_LINES (then engine.ocr only replays)?"""
    import os

    from model_cache.layout.replay import ENV, page_key
    from model_cache.ppocr.engine import to_rgb
    with page.load(copy) as image:
        key = page_key(to_rgb(image), repr(engine.params))
    return (Path(os.environ[ENV]) / f"{key}.json").is_file()


def baseline_records(root: Path) -> dict[tuple[str, str], str]:
    """(set, page) -> text of the cached pagerunner run named in results/BASELINE."""
    marker = root / "results" / "BASELINE"
    if not marker.exists():
        return {}
    description = marker.read_text(encoding="utf-8").strip()
    cache = ResultCache(root / "results" / "pagerunner_ppocr.jsonl", {"dpi": 200.0, "corpus": 1})
    return {(key[0], key[1]): value.text for key, value in cache._records.items() if key[3] == description}


def main() -> None:
    args = parse_args()
    from model_cache.engine import EngineOptions
    from model_cache.registry import create_engine
    from peers import make_tool

    import contextlib
    import os
    pages = load_pages(args.corpus, tuple(args.halves), args.subset)
    if args.pages_in:
        wanted = set(args.pages_in.read_text(encoding="utf-8").split())
        pages = [p for p in pages if p.ident in wanted]
    if args.layout_cache and not os.environ.get("PAGERUNNER_LAYOUT_LINES"):
        raise SystemExit("--layout-cache needs PAGERUNNER_LAYOUT_LINES set")
    peers = [make_tool(name, 1) for name in args.peers]
    caches = {tool.name: tool_cache(args.corpus, tool.name) for tool in peers}
    baseline = baseline_records(args.corpus)
    engine = create_engine("ppocr", EngineOptions(threads=1))
    holder: dict = {}
    folder, warning = replay_folder(args.corpus / "lines", args.lines_digest)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    started = time.perf_counter()
    results: dict[tuple[str, str], dict[str, dict[str, PageScore]]] = {}
    missing = 0
    scored: list[str] = []
    with contextlib.nullcontext() if args.layout_cache else replaying(engine, holder):
        for copy in args.copies:
            for page in pages:
                set_name = f"corpus-{page.half}-{copy}"
                if args.layout_cache:
                    record = {} if layout_cache_record(engine, page, copy) else None
                else:
                    record = load_record(folder, set_name, page.ident)
                peer_texts = {t.name: caches[t.name].get(set_name, page.ident, t.name, t.description)
                              for t in peers}
                if record is None or any(v is None for v in peer_texts.values()):
                    missing += 1
                    continue
                holder["record"] = record
                scored.append(page.ident)
                text = engine.ocr(page.load(copy)).text
                if args.dump:
                    target = args.dump / set_name / f"{page.ident}.txt"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(text, encoding="utf-8")
                reference = page.reference()
                cell = results.setdefault((page.half, copy), {RELAYOUT: {}})
                cell[RELAYOUT][page.ident] = score_page(reference, text)
                if (set_name, page.ident) in baseline:
                    cell.setdefault(BASELINE, {})[page.ident] = score_page(reference, baseline[(set_name, page.ident)])
                for name, cached in peer_texts.items():
                    cell.setdefault(name, {})[page.ident] = score_page(reference, cached.text)
    seconds = time.perf_counter() - started
    if args.pages_out:
        args.pages_out.write_text("\n".join(scored) + "\n", encoding="utf-8")
    if args.layout_cache:
        folder = Path(os.environ["PAGERUNNER_LAYOUT_LINES"])
    print(f"lines of {folder}; {sum(len(c[RELAYOUT]) for c in results.values())} "
          f"pages re-laid out in {seconds:.1f} s; {missing} pages without recorded lines or peer results")
    for (half, copy), cell in results.items():
        complete = {k: v for k, v in cell.items() if len(v) == len(cell[RELAYOUT])}
        print(f"\n**{half} half, {copy} copy** ({len(cell[RELAYOUT])} pages):\n")
        print(half_table(pages, complete, RELAYOUT))
        if args.worst:
            worst = sorted(cell[RELAYOUT].items(), key=lambda kv: -kv[1].cer)[: args.worst]
            tags = {p.ident: p.tags for p in pages}
            for ident, score in worst:
                peer = " ".join(f"{n}={cell[n][ident].cer:.3f}" for n in cell if n != RELAYOUT)
                print(f"  {ident}: CER {score.cer:.3f} bag-F1 {score.bag_f1:.3f} ({peer}) {tags[ident]}")


if __name__ == "__main__":
    main()
