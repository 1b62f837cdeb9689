#!/usr/bin/env python3
"""Accuracy of pagerunner's engine next to Tesseract and RapidOCR on the shared evaluation kit.

    python benchmarks/accuracy.py                       # all sets, all tools, updates docs/benchmarks.md
    python benchmarks/accuracy.py --sets scans lines --tools pagerunner tesseract --no-docs

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
from report_md import command_line, machine_facts, markdown_table, replace_section, utc_now  # noqa: E402

from runner.evaluation.metrics import Counts, TextScore, score_text  # noqa: E402


@dataclass
class Cell:
    """One tool on one set."""
    counts: Counts = field(default_factory=Counts)
    seconds: float = 0.0
    samples: int = 0
    failures: int = 0
    perfect: int = 0  # samples with CER 0
    per_sample: dict[str, TextScore] = field(default_factory=dict)

    def add(self, ident: str, score: TextScore, seconds: float) -> None:
        self.counts = self.counts + score.counts
        self.seconds += seconds
        self.samples += 1
        self.perfect += score.counts.char_edits == 0
        self.per_sample[ident] = score


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", choices=SET_NAMES, default=list(SET_NAMES))
    parser.add_argument("--tools", nargs="+", choices=TOOL_NAMES, default=list(TOOL_NAMES))
    parser.add_argument("--dpi", type=float, default=DEFAULT_DPI, help="render resolution of PDF pages")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the simulated scans")
    parser.add_argument("--threads", type=int, default=2, help="thread budget of every tool")
    parser.add_argument("--limit", type=int, default=0, help="at most this many samples per set (0: all)")
    parser.add_argument("--dump", type=Path, help="write every tool's text per sample into this folder")
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    return parser.parse_args()


def load_tools(names: list[str], threads: int) -> tuple[list[Tool], list[str]]:
    tools, missing = [], []
    for name in names:
        try:
            tools.append(make_tool(name, threads))
        except ToolUnavailable as exc:
            missing.append(f"{name}: {exc}")
            print(f"skipping {name}: {exc}", file=sys.stderr)
    return tools, missing


def run_set(samples: list[Sample], tools: list[Tool], dump: Path | None) -> dict[str, Cell]:
    """Tools take turns on each sample, so slow drifts of the machine hit all of them alike."""
    cells = {tool.name: Cell() for tool in tools}
    for sample in samples:
        image = sample.load()
        for tool in tools:
            started = time.perf_counter()
            try:
                text = tool.ocr(image, sample.kind, sample.cjk, sample.dpi)
            except Exception as exc:  # a crashing peer is a result, not a reason to stop
                print(f"{tool.name} failed on {sample.ident}: {exc}", file=sys.stderr)
                cells[tool.name].failures += 1
                text = ""
            seconds = time.perf_counter() - started
            cells[tool.name].add(sample.ident, score_text(sample.reference, text), seconds)
            if dump is not None:
                _dump(dump, tool.name, sample, text)
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
            rows.append([set_name, f"{cell.samples} {kind}", tool, fmt(cell.counts.cer),
                         fmt(cell.counts.wer), fmt(cell.counts.bag_f1),
                         f"{cell.perfect}/{cell.samples}",
                         f"{cell.seconds / max(1, cell.samples):.2f}",
                         str(cell.failures) if cell.failures else ""])
    return markdown_table(["set", "size", "tool", "CER", "WER", "bag-F1", "exact", "s/sample",
                           "failed"], rows, "lllrrrrrr")


def detail_table(cells: dict[str, Cell], samples: list[Sample]) -> str:
    tools = list(cells)
    rows = []
    for sample in samples:
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
        f"Measured {utc_now()} with `{command_line()}`.",
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


def main() -> None:
    args = parse_args()
    kit = shared_eval_dir()
    sets = build_sets(tuple(args.sets), kit, args.dpi, args.seed)
    if args.limit:
        sets = {name: samples[: args.limit] for name, samples in sets.items()}
    tools, missing = load_tools(args.tools, args.threads)
    if not tools:
        raise SystemExit("no tool available")
    results = {name: run_set(samples, tools, args.dump) for name, samples in sets.items()}
    markdown = render_markdown(results, sets, tools, missing, args)
    print(markdown)
    if not args.no_docs:
        replace_section("accuracy", markdown)
        print("updated docs/benchmarks.md (section 'accuracy')", file=sys.stderr)


if __name__ == "__main__":
    main()
