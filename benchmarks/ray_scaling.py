#!/usr/bin/env python3
"""Scaling of `--executor ray` (and of local `--workers N` processes) with the number of workers,
and the driver's overhead per page.

    python benchmarks/ray_scaling.py                                   # 48 pages, 1/2/4/8 workers
    python benchmarks/ray_scaling.py --pages 8 --workers 1,2 --executors ray,process,inline

Job: A4 pages of the kit's born-digital PDFs (eval/pdfs, text layer ignored, so every page is
rendered at --dpi and OCR'd by ppocr), copied until the job has --pages pages; each copy gets a
distinct trailing comment so it is a new document (its own doc_id and object-store entry).
Each configuration runs the whole page loop in this process through `run_job` (claim, render,
OCR, commit, write) into a fresh output folder. Reported:

- startup: run start until the first page is handed to the executor (Ray: actors created and
  their engines loaded; process: worker processes spawned and warmed up), not in pages/min;
- pages/min: pages / (last result - first page handed out): the steady batch rate;
- driver CPU ms/page: CPU time of this (driver) process during the page loop / pages: what the
  single driver spends per page (store commit, JSONL append, Ray submit/wait, bytes to the object
  store); it bounds how many workers one driver can feed.

The overhead part runs a no-op engine (`benchmarks.ray_scaling:create_noop_engine`, returns an
empty page) on --noop-pages tiny PNGs, so everything left is runner and executor overhead.
Executors run in the order given; one local Ray instance (num_cpus = max(CPUs, workers x
threads)) serves every Ray row, its start is reported once, and it is shut down before the next
executor's rows (its runtime threads would count as driver CPU). The outputs of every run are
compared with the first run of the same job (timings aside): "same output".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from model_cache.engine import EngineOptions  # noqa: E402
from outputs.model import PageResult  # noqa: E402

NOOP_ENGINE = "benchmarks.ray_scaling:create_noop_engine"


class NoopEngine:
    name = "noop"

    def ocr(self, image: Any) -> PageResult:
        return PageResult.from_blocks([], width=image.width, height=image.height, engine=self.name)


def create_noop_engine(options: EngineOptions) -> NoopEngine:
    return NoopEngine()


# --- measurement ------------------------------------------------------------------------------

@dataclass
class Row:
    job: str
    executor: str
    workers: int
    threads: int
    pages: int
    failed: int
    startup_s: float
    loop_s: float
    pages_per_min: float
    driver_cpu_ms_per_page: float
    same_output: str = ""


class Timed:
    """Wraps an executor: notes when the first page is handed out and when the last result is back."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.first_pull: float | None = None
        self.cpu_at_first_pull = 0.0
        self.last_result = 0.0
        self.results = 0

    def run(self, tasks: Iterator, stop: threading.Event) -> Iterator[PageResult]:
        def watched() -> Iterator:
            for task in tasks:
                if self.first_pull is None:
                    self.first_pull = time.perf_counter()
                    self.cpu_at_first_pull = time.process_time()
                yield task

        for result in self.inner.run(watched(), stop):
            self.results += 1
            yield result
        self.last_result = time.perf_counter()


def run_once(inputs: Path, out: Path, job: str, engine: str, executor: str, workers: int,
             threads: int, dpi: float) -> tuple[Row, list[dict]]:
    from runner.job import RunConfig, make_executor, run_job

    shutil.rmtree(out, ignore_errors=True)
    timed: list[Timed] = []

    def factory(config: RunConfig) -> Timed:
        timed.append(Timed(make_executor(config)))
        return timed[0]

    config = RunConfig([str(inputs)], out, engine=engine, executor=executor, workers=workers,
                       threads=threads, dpi=dpi, formats=("jsonl",), text_layer="ignore")  # OCR every page
    started = time.perf_counter()
    summary = run_job(config, executor_factory=factory)
    cpu_end = time.process_time()
    t = timed[0]
    first = t.first_pull or started
    loop = max(1e-9, t.last_result - first)
    pages = summary.processed_now
    row = Row(job, executor, workers, threads, pages, summary.pages_failed, first - started, loop,
              60.0 * pages / loop, 1000.0 * (cpu_end - t.cpu_at_first_pull) / max(1, pages))
    return row, comparable(out)


def comparable(out: Path) -> list[dict]:
    rows = []
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        data.pop("timings", None)
        rows.append(data)
    return rows


# --- jobs -------------------------------------------------------------------------------------

def make_pdf_job(pdf_dir: Path, target_pages: int, root: Path) -> tuple[Path, int]:
    import pypdfium2 as pdfium

    sources = sorted(pdf_dir.glob("*.pdf"))
    if not sources:
        raise SystemExit(f"no PDFs in {pdf_dir}")
    counts = {p: len(pdfium.PdfDocument(str(p))) for p in sources}
    folder = root / "pdf-job"
    folder.mkdir(parents=True)
    total, copy = 0, 0
    while total < target_pages:
        source = sources[copy % len(sources)]
        data = source.read_bytes() + f"\n% pagerunner benchmark copy {copy}\n".encode()
        (folder / f"{copy:03d}-{source.name}").write_bytes(data)
        total += counts[source]
        copy += 1
    return folder, total


def make_tiny_job(pages: int, root: Path) -> Path:
    from PIL import Image

    folder = root / "tiny-job"
    folder.mkdir(parents=True)
    for i in range(pages):
        image = Image.new("L", (64, 48), 255)
        for bit in range(24):  # the page number as a row of pixels: every file is a new document
            image.putpixel((bit, 0), 0 if (i >> bit) & 1 else 255)
        image.save(folder / f"{i:05d}.png")
    return folder


def default_pdf_dir() -> Path:
    for candidate in (os.environ.get("PAGERUNNER_SHARED"), REPO.parent / "shared", REPO / "shared"):
        if candidate and (Path(candidate) / "eval" / "pdfs").is_dir():
            return Path(candidate) / "eval" / "pdfs"
    raise SystemExit("eval/pdfs not found: pass --pdfs")


# --- ray ----------------------------------------------------------------------------------------

def start_ray(num_cpus: int) -> float:
    import logging

    import ray

    started = time.perf_counter()
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    ray.init(num_cpus=num_cpus, include_dashboard=False, logging_level=logging.WARNING,
             runtime_env={"env_vars": env})
    return time.perf_counter() - started


# --- report -------------------------------------------------------------------------------------

def table(rows: list[Row]) -> str:
    from report_md import markdown_table

    base = {(r.job, r.executor): r.pages_per_min for r in rows if r.workers == 1}
    lines = []
    for r in rows:
        one = base.get((r.job, r.executor))
        speedup = f"{r.pages_per_min / one:.2f}x" if one else "-"
        lines.append([r.job, r.executor, str(r.workers), str(r.threads), str(r.pages), str(r.failed),
                      f"{r.startup_s:.1f}", f"{r.loop_s:.1f}", f"{r.pages_per_min:.1f}", speedup,
                      f"{r.driver_cpu_ms_per_page:.2f}", r.same_output])
    return markdown_table(["job", "executor", "workers", "threads/worker", "pages", "failed", "startup s",
                           "loop s", "pages/min", "speedup vs 1", "driver CPU ms/page", "same output"],
                          lines, "lllrrrrrrrrl")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=48)
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--local-workers", default=None, help="for the process executor (default: --workers)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--executors", default="ray,process")
    parser.add_argument("--dpi", type=float, default=200.0)
    parser.add_argument("--pdfs", type=Path, default=None, help="folder of PDFs (default: eval/pdfs)")
    parser.add_argument("--noop-pages", type=int, default=300, help="0 skips the overhead part")
    parser.add_argument("--noop-workers", default="2,8")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here (JSON lines)")
    args = parser.parse_args(argv)
    workers = [int(w) for w in args.workers.split(",") if w]
    local_workers = [int(w) for w in (args.local_workers or args.workers).split(",") if w]
    executors = [e for e in args.executors.split(",") if e]
    noop_workers = [int(w) for w in args.noop_workers.split(",") if w]
    from report_md import command_line, machine_facts

    print(f"# {command_line()}\n# {machine_facts()}", flush=True)
    root = Path(tempfile.mkdtemp(prefix="ray-scaling-"))
    rows: list[Row] = []
    try:
        pdf_job, total = make_pdf_job(args.pdfs or default_pdf_dir(), args.pages, root)
        print(f"# ppocr job: {total} A4 pages at {args.dpi:g} dpi in {len(list(pdf_job.iterdir()))} PDFs",
              flush=True)
        tiny = make_tiny_job(args.noop_pages, root) if args.noop_pages else None
        reference: dict[str, list[dict]] = {}
        for ex in executors:
            if ex == "ray":
                import ray

                cpus = max(os.cpu_count() or 1, max(workers + noop_workers) * args.threads)
                print(f"# ray {ray.__version__}: local instance with num_cpus={cpus} started in "
                      f"{start_ray(cpus):.1f} s", flush=True)
            counts = [1] if ex == "inline" else (local_workers if ex == "process" else workers)
            plan = [("ppocr", pdf_job, "ppocr", n) for n in counts]
            if tiny is not None:
                plan += [("noop", tiny, NOOP_ENGINE, n) for n in ([1] if ex == "inline" else noop_workers)]
            for job, inputs, engine, n in plan:
                row, output = run_once(inputs, root / "out", job, engine, ex, n, args.threads, args.dpi)
                row.same_output = "yes" if reference.setdefault(job, output) == output else "NO"
                rows.append(row)
                print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in asdict(row).items()), flush=True)
                if args.json:
                    with open(args.json, "a", encoding="utf-8") as fh:
                        fh.write(json.dumps(asdict(row)) + "\n")
            if ex == "ray":
                ray.shutdown()  # its runtime threads would add to the next rows' driver CPU
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
