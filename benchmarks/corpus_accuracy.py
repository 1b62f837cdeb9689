"""The corpus of benchmarks/corpus.py in the accuracy benchmark: per half, copy and category.

    python benchmarks/accuracy.py --corpus /work/corpus --halves tune check --copies born scan \
        --tools pagerunner tesseract rapidocr-v5 [--subset 60] [--report-only]

Every page is scored against its text layer after NFKC with all whitespace removed (the metric of
issue 12; `score_text(..., cjk=True)`): page CER (mean and median over the pages of a group),
bag-of-characters F1 (mean over pages) and the order check `mean CER <= 1.5 x (1 - mean bag-F1)`,
the share of the error that reading order may cost. Results are cached per tool in
<corpus>/results/<tool>.jsonl, so peers run once and a stopped run resumes; pagerunner's results are
keyed by its engine code digest (a changed engine runs again), and its recognised lines before layout
are kept in <corpus>/lines/ for benchmarks/corpus_relayout.py.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from PIL import Image

from corpus import subset_rank
from corpus_lines import attach_line_recorder
from corpus_report import HALVES, group_names, labels_of
from peers import PagerunnerTool
from report_md import markdown_table
from result_cache import CachedResult, ResultCache

from runner.evaluation.metrics import score_text

COPIES = ("born", "scan")


@dataclass
class CorpusPage:
    ident: str
    half: str
    lang: str
    tags: list[str]
    record: dict
    root: Path

    def reference(self) -> str:
        return (self.root / self.record["gt"]).read_text(encoding="utf-8")

    def image_path(self, copy: str) -> Path:
        return self.root / self.record[copy]

    def load(self, copy: str) -> Image.Image:
        with Image.open(self.image_path(copy)) as image:
            return image.convert("RGB")

    @property
    def labels(self) -> list[str]:
        return labels_of(self.record)


def load_pages(root: Path, halves: tuple[str, ...], subset: int) -> list[CorpusPage]:
    """The corpus's pages of `halves`; with `subset`, a seeded `subset` pages of each half (the same
    pages for every tool and copy; a larger subset contains every smaller one)."""
    index = root / "pages.jsonl"
    if not index.exists():
        raise SystemExit(f"{index} not found: build the corpus first (benchmarks/corpus.py build)")
    records = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines() if line]
    pages = []
    for half in halves:
        mine = [r for r in records if r["half"] == half]
        mine.sort(key=lambda r: subset_rank(r["id"]))
        if subset:
            mine = mine[:subset]
        pages += [CorpusPage(r["id"], half, r["lang"], r["tags"], r, root) for r in sorted(mine, key=lambda r: r["id"])]
    return pages


def interleaved(pages: list[CorpusPage]) -> list[CorpusPage]:
    """Pages in subset order with the halves taking turns, so a run cut short covers both alike."""
    halves: dict[str, list[CorpusPage]] = {}
    for page in sorted(pages, key=lambda p: subset_rank(p.ident)):
        halves.setdefault(page.half, []).append(page)
    ordered = []
    for i in range(max((len(v) for v in halves.values()), default=0)):
        ordered += [v[i] for v in halves.values() if i < len(v)]
    return ordered


@dataclass
class PageScore:
    cer: float
    bag_f1: float


@dataclass
class Group:
    scores: list[PageScore] = field(default_factory=list)

    @property
    def mean_cer(self) -> float:
        return statistics.fmean(s.cer for s in self.scores)

    @property
    def median_cer(self) -> float:
        return statistics.median(s.cer for s in self.scores)

    @property
    def bag_f1(self) -> float:
        return statistics.fmean(s.bag_f1 for s in self.scores)

    @property
    def order_ok(self) -> bool:
        return self.mean_cer <= 1.5 * (1.0 - self.bag_f1) + 1e-12


def score_page(reference: str, text: str) -> PageScore:
    score = score_text(reference, text, cjk=True)  # NFKC, all whitespace removed
    return PageScore(score.cer, score.bag_f1)


Recogniser = Callable[[object, CorpusPage, str], CachedResult]


def collect(pages: list[CorpusPage], copies: tuple[str, ...], tools: list, caches: dict[str, ResultCache],
            recognise: Recogniser | None) -> dict[tuple[str, str], dict[str, dict[str, PageScore]]]:
    """(half, copy) -> tool -> page id -> score. With `recognise` None, cached results only; a
    page is scored only once every tool has a result for it (same pages for every tool)."""
    out: dict[tuple[str, str], dict[str, dict[str, PageScore]]] = {}
    for copy in copies:
        for page in interleaved(pages):
            reference = None
            results = {}
            for tool in tools:
                set_name = f"corpus-{page.half}-{copy}"
                cached = caches[tool.name].get(set_name, page.ident, tool.name, tool.description)
                if cached is None and recognise is not None:
                    cached = recognise(tool, page, copy)
                    caches[tool.name].put(set_name, page.ident, tool.name, tool.description, cached)
                if cached is not None:
                    results[tool.name] = cached
            if len(results) < len(tools):
                continue
            reference = reference if reference is not None else page.reference()
            cell = out.setdefault((page.half, copy), {t.name: {} for t in tools})
            for name, result in results.items():
                cell[name][page.ident] = score_page(reference, result.text)
            if recognise is not None:
                print(f"  {copy} {page.ident} done", file=sys.stderr, flush=True)
    return out


def recognise_with(tool, page: CorpusPage, copy: str) -> CachedResult:
    image = page.load(copy)
    started = time.perf_counter()
    try:
        ocr = getattr(tool, "ocr_page", None)
        text = ocr(image, page, copy) if ocr else tool.ocr(image, "page", page.lang == "zh", 200.0)
        failed = False
    except Exception as exc:  # a crashing tool is a result, not a reason to stop
        print(f"{tool.name} failed on {page.ident}: {exc}", file=sys.stderr)
        text, failed = "", True
    return CachedResult(text, time.perf_counter() - started, failed)


def groups_of(pages: list[CorpusPage], scores: dict[str, PageScore]) -> dict[str, Group]:
    groups: dict[str, Group] = {}
    for page in pages:
        if page.ident in scores:
            for label in page.labels:
                groups.setdefault(label, Group()).scores.append(scores[page.ident])
    return groups


def verdict(group_name: str, mine: Group, peers: dict[str, Group]) -> str:
    """Which of issue 12's conditions a group misses (empty: all met)."""
    misses = []
    tess = peers.get("tesseract")
    rapid = next((g for name, g in peers.items() if name.startswith("rapidocr")), None)
    if tess is not None:
        limit = 0.5 * tess.mean_cer if group_name == "zh" else tess.mean_cer
        if group_name not in ("zh", "all") and mine.mean_cer > limit:
            misses.append("> tess")
        if group_name == "zh" and mine.mean_cer > limit:
            misses.append("> tess/2")
    if rapid is not None and mine.mean_cer > rapid.mean_cer:
        misses.append("> rapid")
    if not mine.order_ok:
        misses.append("order")
    return ", ".join(misses) or "met"


def fmt(group: Group) -> str:
    return f"{group.mean_cer:.3f} / {group.median_cer:.3f} / {group.bag_f1:.3f}"


def half_table(pages: list[CorpusPage], cell: dict[str, dict[str, PageScore]], main_tool: str) -> str:
    tools = list(cell)
    grouped = {tool: groups_of(pages, cell[tool]) for tool in tools}
    rows = []
    for name in group_names():
        if name not in grouped[tools[0]]:
            continue
        mine = grouped[main_tool][name] if main_tool in grouped else None
        row = [name, str(len(grouped[tools[0]][name].scores))]
        row += [fmt(grouped[t][name]) for t in tools]
        if mine is not None:
            row.append(f"{1.5 * (1 - mine.bag_f1):.3f}")
            row.append(verdict(name, mine, {t: grouped[t][name] for t in tools if t != main_tool}))
        rows.append(row)
    headers = ["category", "pages", *[f"{t}: mean / median CER / bag-F1" for t in tools]]
    if main_tool in grouped:
        headers += [f"1.5(1-F1) {main_tool}", "issue 12"]
    return markdown_table(headers, rows, "lr" + "r" * len(tools) + ("rl" if main_tool in grouped else ""))


def corpus_markdown(pages: list[CorpusPage], results, tools: list, halves, copies, subset: int,
                    total: dict[str, int]) -> str:
    main_tool = next((t.name for t in tools if t.name.startswith("pagerunner")), tools[0].name)
    parts = []
    for half in halves:
        for copy in copies:
            cell = results.get((half, copy))
            run = f"{len(next(iter(cell.values())))} pages" if cell else "no pages"
            size = f"{run} of {total.get(half, 0)}" + (f" (seeded subset of {subset})" if subset else "")
            parts += ["", f"**{half} half, {copy} copy** ({size}):", ""]
            if cell:
                parts.append(half_table(pages, cell, main_tool))
    return "\n".join(parts).lstrip("\n") + "\n"


def tool_cache(root: Path, tool_name: str) -> ResultCache:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in tool_name)
    return ResultCache(root / "results" / f"{safe}.jsonl", {"dpi": 200.0, "corpus": 1})


def run_corpus(root: Path, halves: tuple[str, ...], copies: tuple[str, ...], tools: list, subset: int,
               report_only: bool) -> str:
    pages = load_pages(root, halves, subset)
    caches = {tool.name: tool_cache(root, tool.name) for tool in tools}
    for tool in tools:
        if isinstance(tool, PagerunnerTool):
            attach_line_recorder(tool, root / "lines")
    results = collect(pages, copies, tools, caches, None if report_only else recognise_with)
    every = load_pages(root, HALVES, 0)
    total = {h: sum(1 for p in every if p.half == h) for h in HALVES}
    return corpus_markdown(pages, results, tools, halves, copies, subset, total)


def mark_baseline(root: Path, tools: list) -> None:
    """results/BASELINE names the pagerunner run that corpus_relayout.py compares with."""
    mine = [t for t in tools if isinstance(t, PagerunnerTool)]
    if mine:
        (root / "results").mkdir(parents=True, exist_ok=True)
        (root / "results" / "BASELINE").write_text(mine[0].description + "\n", encoding="utf-8")
