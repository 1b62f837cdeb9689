#!/usr/bin/env python3
"""Accuracy of pagerunner's engine next to Tesseract and RapidOCR on the shared evaluation kit.

    python benchmarks/accuracy.py                       # all sets, all tools, updates docs/benchmarks.md
    python benchmarks/accuracy.py --sets scans lines --tools pagerunner tesseract --no-docs
    python benchmarks/accuracy.py --corpus /work/corpus --halves tune --copies born   # issue 12's corpus

Every tool sees the same pixels (PDF pages rendered once by pagerunner's renderer at --dpi) and
is scored the same way as `pagerunner eval`: CER and WER after NFKC normalisation (whitespace
ignored on CJK pages), bag-of-characters F1, micro-averaged over a set.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_sets import DEFAULT_DPI, DEFAULT_SEED, SET_NAMES, Sample, build_sets, shared_eval_dir  # noqa: E402
from peers import TOOL_NAMES, Tool, ToolUnavailable, make_tool  # noqa: E402
from result_cache import CachedResult, ResultCache  # noqa: E402
from report_md import command_line, machine_facts, markdown_table, replace_section, utc_now  # noqa: E402

from runner.evaluation.metrics import Counts, TextScore, score_text  # noqa: E402


@dataclass
class Cell:
    """One tool on one set."""
    counts: Counts = field(default_factory=Counts)
    seconds: float = 0.0
    timed: int = 0  # samples whose time is known
    samples: int = 0
    failures: int = 0
    perfect: int = 0  # samples with CER 0
    per_sample: dict[str, TextScore] = field(default_factory=dict)

    def add(self, ident: str, score: TextScore, seconds: float | None) -> None:
        self.counts = self.counts + score.counts
        if seconds is not None:
            self.seconds += seconds
            self.timed += 1
        self.samples += 1
        self.perfect += score.counts.char_edits == 0
        self.per_sample[ident] = score


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", choices=SET_NAMES, default=list(SET_NAMES))
    parser.add_argument("--tools", nargs="+", choices=TOOL_NAMES, default=list(TOOL_NAMES))
    parser.add_argument("--dpi", type=float, default=DEFAULT_DPI, help="render resolution of PDF pages")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the simulated scans")
    parser.add_argument("--threads", type=int, help="thread budget of every tool (default 2; 1 with --corpus, "
                        "whose runs go one tool per process side by side)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many samples per set (0: all)")
    parser.add_argument("--dump", type=Path, help="write every tool's text per sample into this folder")
    parser.add_argument("--cache", type=Path, help="JSONL of results: reused when present, appended to "
                                                   "as samples finish (resume a stopped run)")
    parser.add_argument("--report-only", action="store_true",
                        help="with --cache: build the tables from the cached samples only, OCR nothing")
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--corpus", type=Path, help="score the corpus built by benchmarks/corpus.py in this "
                        "folder (per half, copy and category; results cached in its results/) instead of the kit")
    parser.add_argument("--halves", nargs="+", choices=("tune", "check"), default=["tune", "check"])
    parser.add_argument("--copies", nargs="+", choices=("born", "scan"), default=["born", "scan"])
    parser.add_argument("--subset", type=int, default=0,
                        help="with --corpus: a seeded subset of this many pages per half (0: all)")
    parser.add_argument("--baseline", action="store_true",
                        help="with --corpus: name this pagerunner run the baseline that "
                             "benchmarks/corpus_relayout.py shows beside the checkout's layout")
    parser.add_argument("--engine-option", "-E", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting for pagerunner's engine (repeatable), as `pagerunner run -E`")
    args = parser.parse_args()
    if args.threads is None:
        args.threads = 1 if args.corpus is not None else 2
    return args


def load_tools(names: list[str], threads: int,
               extra: tuple[tuple[str, str], ...] = ()) -> tuple[list[Tool], list[str]]:
    tools, missing = [], []
    for name in names:
        try:
            tools.append(make_tool(name, threads, extra))
        except ToolUnavailable as exc:
            missing.append(f"{name}: {exc}")
            print(f"skipping {name}: {exc}", file=sys.stderr)
    return tools, missing


def _recognise(tool: Tool, sample: Sample, image) -> CachedResult:
    started = time.perf_counter()
    try:
        text, failed = tool.ocr(image, sample.kind, sample.cjk, sample.dpi), False
    except Exception as exc:  # a crashing peer is a result, not a reason to stop
        print(f"{tool.name} failed on {sample.ident}: {exc}", file=sys.stderr)
        text, failed = "", True
    return CachedResult(text, time.perf_counter() - started, failed)


def run_set(samples: list[Sample], tools: list[Tool], dump: Path | None,
            cache: ResultCache | None, report_only: bool) -> dict[str, Cell]:
    """Tools take turns on each sample, so slow drifts of the machine hit all of them alike."""
    cells = {tool.name: Cell() for tool in tools}
    for sample in samples:
        image = None
        results: dict[str, CachedResult] = {}
        for tool in tools:
            cached = cache.get(sample.set_name, sample.ident, tool.name, tool.description) if cache else None
            if cached is None and not report_only:
                image = image if image is not None else sample.load()
                cached = _recognise(tool, sample, image)
                if cache is not None:
                    cache.put(sample.set_name, sample.ident, tool.name, tool.description, cached)
                if dump is not None:
                    _dump(dump, tool.name, sample, cached.text)
            if cached is not None:
                results[tool.name] = cached
        if len(results) < len(tools):
            continue  # report-only: score a sample only once every tool has read it
        for tool in tools:
            result = results[tool.name]
            cells[tool.name].failures += result.failed
            cells[tool.name].add(sample.ident, score_text(sample.reference, result.text), result.seconds)
        print(f"  {sample.set_name}: {sample.ident} done", file=sys.stderr)
    return cells


def _dump(folder: Path, tool: str, sample: Sample, text: str) -> None:
    target = folder / tool.replace(" ", "_") / sample.set_name
    target.mkdir(parents=True, exist_ok=True)
    (target / f"{sample.ident.replace(' ', '.')}.txt").write_text(text, encoding="utf-8")


def fmt(value: float) -> str:
    return f"{value:.3f}"


def summary_table(results: dict[str, dict[str, Cell]], sets: dict[str, list[Sample]]) -> str:
    rows = []
    for set_name, cells in results.items():
        kind = "lines" if sets[set_name] and sets[set_name][0].kind == "line" else "pages"
        for tool, cell in cells.items():
            if not cell.samples:
                rows.append([set_name, f"0 of {len(sets[set_name])} {kind}", tool, *["-"] * 6])
                continue
            size = f"{cell.samples} {kind}"
            if cell.samples < len(sets[set_name]):
                size += f" (of {len(sets[set_name])})"
            rows.append([set_name, size, tool, fmt(cell.counts.cer),
                         fmt(cell.counts.wer), fmt(cell.counts.bag_f1),
                         f"{cell.perfect}/{cell.samples}",
                         f"{cell.seconds / cell.timed:.2f}" if cell.timed else "n/a",
                         str(cell.failures) if cell.failures else ""])
    return markdown_table(["set", "size", "tool", "CER", "WER", "bag-F1", "exact", "s/sample",
                           "failed"], rows, "lllrrrrrr")


def detail_table(cells: dict[str, Cell], samples: list[Sample]) -> str:
    tools = list(cells)
    rows = []
    for sample in samples:
        if sample.ident not in cells[tools[0]].per_sample:
            continue
        row = [sample.ident + (" (CJK)" if cells[tools[0]].per_sample[sample.ident].cjk else "")]
        for tool in tools:
            score = cells[tool].per_sample[sample.ident]
            row.append(f"{fmt(score.cer)} / {fmt(score.bag_f1)}")
        rows.append(row)
    return markdown_table(["page", *[f"{t}: CER / F1" for t in tools]], rows)


def render_markdown(results: dict[str, dict[str, Cell]], sets: dict[str, list[Sample]],
                    tools: list[Tool], missing: list[str], args: argparse.Namespace) -> str:
    parts = [
        "## Accuracy",
        "",
        f"Measured {utc_now()} with `{command_line()}`" + (
            " (tables built from the result cache of earlier runs of `python benchmarks/accuracy.py "
            "--cache FILE`, which resume where they stopped; a record is reused only for the same tool "
            "description)." if args.report_only else "."),
        f"Machine: {machine_facts()}.",
        "",
        "Tools (same thread budget for all):",
        *[f"- **{tool.name}**: {tool.description}" for tool in tools],
        *([f"- not measured: {m}" for m in missing]),
        "",
        "How: PDF pages are rendered once with pagerunner's renderer at "
        f"{args.dpi:.0f} dpi and every tool OCRs the same image. `degraded` is those renders put through "
        f"a seeded simulated scan (0.3-1.2 deg skew, Gaussian blur 0.5-1.0 px, noise sigma 6-12, "
        f"JPEG q55-75; seed {args.seed}). Text is compared as `pagerunner eval` does: NFKC, "
        "U+0002 -> '-', soft hyphens dropped, dot leaders -> '...', whitespace collapsed, and removed "
        "entirely on CJK pages (>= 10 % CJK characters in the reference). CER/WER are micro-averaged "
        "(total edits / total reference length); `exact` counts samples with CER 0. "
        "Tesseract: psm 3 for pages and psm 7 for lines, `chi_sim+eng` for the Chinese documents, "
        "`eng` otherwise. RapidOCR: default settings; for lines detection is skipped "
        "(`use_det=False`, its single-line mode). pagerunner: the engine exactly as `pagerunner run` "
        "uses it, also on line images. The PDF ground truth is the text layer, in content-stream order: "
        "TOC columns, margin notes and table cells read differently from a top-to-bottom OCR, so look "
        "at bag-F1 next to CER on those pages. s/sample is wall time per sample in this process "
        "(for tesseract it includes starting the process); see the throughput section for speed.",
        "",
        summary_table(results, sets),
    ]
    for set_name in ("scans", "pdfs", "degraded"):
        if set_name in results:
            parts += ["", f"Per page, `{set_name}` (CER / bag-F1):", "",
                      detail_table(results[set_name], sets[set_name])]
    return "\n".join(parts) + "\n"


def corpus_main(args: argparse.Namespace) -> None:
    from corpus_accuracy import mark_baseline, run_corpus
    from corpus_report import corpus_section

    extra = tuple(tuple(kv.split("=", 1)) for kv in args.engine_option)
    tools, missing = load_tools(args.tools, args.threads, extra)
    if not tools:
        raise SystemExit("no tool available")
    if args.baseline:
        mark_baseline(args.corpus, tools)
    markdown = run_corpus(args.corpus, tuple(args.halves), tuple(args.copies), tools, args.subset,
                          args.report_only)
    header = ["Tools (one process each, side by side, 1 thread each):",
              *[f"- **{tool.name}**: {tool.description}" for tool in tools],
              *[f"- not measured: {m}" for m in missing], ""]
    print("\n".join(header) + markdown)
    if not args.no_docs:
        section = corpus_section(args.corpus, "\n".join(header) + markdown)
        replace_section("corpus", section)
        print("updated docs/benchmarks.md (section 'corpus')", file=sys.stderr)


def main() -> None:
    args = parse_args()
    if args.corpus is not None:
        corpus_main(args)
        return
    kit = shared_eval_dir()
    sets = build_sets(tuple(args.sets), kit, args.dpi, args.seed)
    if args.limit:
        sets = {name: samples[: args.limit] for name, samples in sets.items()}
    extra = tuple(tuple(kv.split("=", 1)) for kv in args.engine_option)
    tools, missing = load_tools(args.tools, args.threads, extra)
    if not tools:
        raise SystemExit("no tool available")
    cache = None
    if args.cache is not None:
        cache = ResultCache(args.cache, {"dpi": args.dpi, "seed": args.seed, "threads": args.threads})
    elif args.report_only:
        raise SystemExit("--report-only needs --cache")
    results = {name: run_set(samples, tools, args.dump, cache, args.report_only)
               for name, samples in sets.items()}
    markdown = render_markdown(results, sets, tools, missing, args)
    print(markdown)
    if not args.no_docs:
        replace_section("accuracy", markdown)
        print("updated docs/benchmarks.md (section 'accuracy')", file=sys.stderr)


if __name__ == "__main__":
    main()
