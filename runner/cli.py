"""The `pagerunner` command: a thin Typer layer over runner/job.py, runner/status.py and model_cache."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console

from jobs.expand import ExpandOptions
from jobs.pageranges import PageRangeError, PageRanges
from jobs.sources import DEFAULT_MAX_PIXELS
from jobs.store import STORE_DIR, JobStore, StoreError
from runner import __version__
from runner.cli_options import MODEL_HELP, engine_extra, read_passwords
from runner.crash import guard_internal_errors
from runner.errors import ExitCode, RunnerError, UsageError
from runner.formats import DEFAULT_FORMATS, parse_formats
from runner.job import RunConfig, RunSummary, run_job
from runner.lock import RunLock
from runner.progress import make_reporter
from runner.status import print_status, status_data

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Batch OCR: PDFs and image folders to JSONL, Markdown and text. Resumable.")
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

DEFAULT_OUT = Path("pagerunner-out")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pagerunner {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """pagerunner: point it at PDFs or image folders, find the text in the morning."""


@app.command()
@guard_internal_errors
def run(
    inputs: List[str] = typer.Argument(..., help="PDFs, images, folders, globs, '-' (paths on stdin) or @list.txt"),
    out: Path = typer.Option(DEFAULT_OUT, "-o", "--out", help="Output folder (holds the job store)."),
    engine: str = typer.Option("ppocr", "--engine", help="ppocr | hunyuan | textlayer"),
    pages: Optional[str] = typer.Option(None, "--pages", help="Pages per document, e.g. 1-3,7,10-"),
    dpi: float = typer.Option(200.0, "--dpi", help="Render resolution for PDF pages."),
    password: Optional[str] = typer.Option(None, "--password", help="Password for encrypted PDFs."),
    passwords_file: Optional[Path] = typer.Option(None, "--passwords-file",
                                                  help="File of passwords, one per line, tried in turn."),
    formats: str = typer.Option("jsonl,md,txt", "--formats",
                                help="Files to write in OUT: jsonl,md,txt,pdf,hocr,alto,html"),
    jsonl: Optional[str] = typer.Option(None, "--jsonl", help="'-' writes page records to stdout."),
    text_layer: str = typer.Option("auto", "--text-layer",
                                   help="auto: read real text layers, OCR the rest; ignore: OCR every page; "
                                        "only: never OCR"),
    threads: Optional[int] = typer.Option(None, "--threads", min=1,
                                          help="Threads per worker for the engine (default: ppocr on a CPU the "
                                               "hardware threads of one core; other engines every core; "
                                               "2 on a GPU or Ray)."),
    device: str = typer.Option("cpu", "--device", help="cpu | gpu (every Vulkan device) | gpu:0,1"),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir", help="A model folder with manifest.json."),
    model: Optional[str] = typer.Option(None, "--model", help=MODEL_HELP),
    max_new_tokens: Optional[int] = typer.Option(None, "--max-new-tokens", help="hunyuan: decode limit per page."),
    low_memory: bool = typer.Option(False, "--low-memory", help="hunyuan: load decoder layers in turn."),
    batch_pages: Optional[int] = typer.Option(None, "--batch-pages", min=1,
                                              help="hunyuan: pages decoded together (default 32 gpu, 8 cpu)."),
    engine_option: List[str] = typer.Option([], "--engine-option", "-E",
                                            help="Engine setting KEY=VALUE (repeatable), e.g. det_limit_side=1280."),
    max_pixels: int = typer.Option(DEFAULT_MAX_PIXELS, "--max-pixels",
                                   help="Render pages larger than this downscaled (and say so)."),
    page_timeout: Optional[float] = typer.Option(None, "--page-timeout",
                                                 help="Seconds before a stuck page is failed."),
    include: List[str] = typer.Option([], "--include", help="Glob of files to take from folders."),
    exclude: List[str] = typer.Option([], "--exclude", help="Glob of files to skip."),
    recursive: bool = typer.Option(True, "--recursive/--no-recursive", help="Walk folders recursively."),
    executor: str = typer.Option("process", "--executor", help="process | inline | ray"),
    workers: Optional[int] = typer.Option(None, "--workers", min=1,
                                          help="Worker processes (or Ray actors) (default: ppocr on a CPU one "
                                               "per physical core, as memory allows; otherwise 1)."),
    batch: Optional[int] = typer.Option(None, "--batch", min=1,
                                        help="Pages per engine call (default: 8 on a GPU, 1 on a CPU)."),
    feeders: Optional[int] = typer.Option(None, "--feeders", min=0,
                                          help="GPU: CPU worker processes per GPU owner process "
                                               "(default: from the cores; 0: no owner)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="auto or HOST:PORT"),
    gpus_per_worker: float = typer.Option(0.0, "--gpus-per-worker", help="Ray: GPUs per actor."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display or summary."),
) -> None:
    """OCR the inputs into OUT; rerunning the same command resumes where it stopped."""
    try:
        config = RunConfig(
            inputs=list(inputs), out_dir=out, engine=engine, dpi=dpi, pages=_pages(pages),
            passwords=read_passwords(password, passwords_file), formats=_formats(formats),
            jsonl_stdout=_jsonl_flag(jsonl), text_layer=text_layer, threads=threads, device=device,
            model_dir=model_dir, model=model,
            engine_extra=engine_extra(max_new_tokens, low_memory, engine_option, batch_pages),
            max_pixels=max_pixels,
            expand=ExpandOptions(recursive=recursive, include=tuple(include), exclude=tuple(exclude)),
            executor=executor, workers=workers, page_timeout=page_timeout, ray_address=ray_address,
            gpus_per_worker=gpus_per_worker, batch=batch, feeders=feeders)
        if executor not in ("process", "inline", "ray"):
            raise UsageError("--executor must be process, inline or ray")
        summary = run_job(config, make_reporter(err_console, quiet), sys.stdout, sys.stdin)
    except RunnerError as exc:
        _fail(exc)
    _finish(summary, out, quiet)


@app.command()
@guard_internal_errors
def status(out: Path = typer.Argument(DEFAULT_OUT, help="Output folder of a run."),
           as_json: bool = typer.Option(False, "--json", help="Machine-readable status on stdout.")) -> None:
    """Documents and pages by state, failures with their codes, pages/min and ETA."""
    store = _open_store(out)
    data = status_data(store)
    store.close()
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print_status(err_console, data)


@app.command()
@guard_internal_errors
def retry(out: Path = typer.Argument(DEFAULT_OUT, help="Output folder of a run."),
          password: Optional[str] = typer.Option(None, "--password"),
          passwords_file: Optional[Path] = typer.Option(None, "--passwords-file"),
          requeue_only: bool = typer.Option(False, "--requeue-only", help="Only requeue; process later."),
          quiet: bool = typer.Option(False, "--quiet", "-q")) -> None:
    """Requeue failed pages and documents, then process them with the run's stored options."""
    store = _open_store(out)
    pages, docs = store.requeue_failed()
    command = store.last_command() or {}
    store.close()
    err_console.print(f"requeued {pages} failed page(s) and {docs} failed document(s)")
    if requeue_only:
        raise typer.Exit(0)
    options = command.get("options", {})
    try:
        config = RunConfig(
            inputs=[], out_dir=out, engine=options.get("engine", "ppocr"), dpi=float(options.get("dpi", 200)),
            pages=_pages(options.get("pages") or None), passwords=read_passwords(password, passwords_file),
            formats=tuple(command.get("formats", DEFAULT_FORMATS)), text_layer=options.get("text_layer", "ignore"),
            threads=command.get("threads"), device=command.get("device", "cpu"),
            model_dir=Path(options["model"]) if options.get("model") else None,
            model=command.get("model"),
            engine_extra=tuple(tuple(kv) for kv in command.get("engine_extra", [])),
            max_pixels=int(options.get("max_pixels", DEFAULT_MAX_PIXELS)), from_store=True)
        summary = run_job(config, make_reporter(err_console, quiet))
    except RunnerError as exc:
        _fail(exc)
    _finish(summary, out, quiet)


@app.command()
@guard_internal_errors
def export(out: Path = typer.Argument(DEFAULT_OUT, help="Output folder of a run."),
           formats: str = typer.Option("jsonl,md,txt", "--format", "--formats",
                                       help="Which files to regenerate: jsonl,md,txt,pdf,hocr,alto,html"),
           password: Optional[str] = typer.Option(None, "--password",
                                                  help="Password for encrypted PDF inputs (pdf, html)."),
           passwords_file: Optional[Path] = typer.Option(None, "--passwords-file",
                                                         help="File of passwords, one per line.")) -> None:
    """Regenerate every output file in OUT from the job store."""
    from runner.export import export_all  # the PDF and XML writers: only the commands that write

    chosen = _formats(formats)
    try:
        passwords = read_passwords(password, passwords_file)
    except RunnerError as exc:
        _fail(exc)
    store = _open_store(out)
    lock = RunLock(out / STORE_DIR)  # a run writes these same files: never both at once
    notes: list[str] = []
    try:
        lock.acquire()
        count = export_all(store, out, chosen, passwords, notes=notes)
    except RunnerError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(RunnerError(f"cannot write to {out}: {exc.strerror or exc}"))
    finally:
        lock.release()
        store.close()
    err_console.print(f"exported {count} document(s) to {out} ({', '.join(chosen)})")
    for note in notes:
        err_console.print(f"  [yellow]note[/] {note}")


def _register_subcommands() -> None:
    from runner.cli_models import models_app

    app.add_typer(models_app, name="models", help="List, verify, locate and convert models.")
    try:
        from runner.cli_eval import eval_command
    except ImportError:
        return
    app.command(name="eval")(guard_internal_errors(eval_command))


def _open_store(out: Path) -> JobStore:
    try:
        return JobStore(out, create=False)
    except StoreError as exc:
        err_console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(int(ExitCode.USAGE))


def _pages(text: str | None) -> PageRanges:
    try:
        return PageRanges.parse(text)
    except PageRangeError as exc:
        raise UsageError(f"--pages: {exc}") from None


def _formats(text: str) -> tuple[str, ...]:
    try:
        return parse_formats(text)
    except ValueError as exc:
        _fail(UsageError(f"--formats: {exc}"))
        raise


def _jsonl_flag(value: str | None) -> bool:
    if value is None:
        return False
    if value != "-":
        raise UsageError("--jsonl takes '-' (stdout); results.jsonl is always written in OUT")
    return True


def _fail(exc: RunnerError) -> None:
    err_console.print(f"[red]error:[/] {exc}")
    raise typer.Exit(int(exc.exit_code))


def _finish(summary: RunSummary, out: Path, quiet: bool) -> None:
    if not quiet:
        _print_summary(summary, out)
    raise typer.Exit(int(summary.exit_code))


def _print_summary(summary: RunSummary, out: Path) -> None:
    rate = 60.0 * summary.processed_now / summary.seconds if summary.seconds > 0 else 0.0
    err_console.print(
        f"[bold]{summary.pages_done}[/] of {summary.pages_total} pages done in {summary.documents} document(s); "
        f"{summary.pages_failed} page(s) and {summary.documents_failed} document(s) failed; "
        f"{summary.processed_now} processed in {summary.seconds:.1f} s ({rate:.1f} pages/min). Output: {out}")
    if summary.shared_inputs:
        err_console.print(f"{summary.shared_inputs} of {summary.inputs} inputs are identical to another input: "
                          "OCR'd once, each name has its own records and files")
    for relname, page, code, message in summary.failures[:20]:
        where = f"{relname} page {page}" if page else relname
        err_console.print(f"  [yellow]failed[/] {where}: {code}: {message}")
    if len(summary.failures) > 20:
        err_console.print(f"  ... and {len(summary.failures) - 20} more (pagerunner status {out})")
    for note in summary.notes:
        err_console.print(f"  [yellow]note[/] {note}")
    if summary.interrupted_by:
        err_console.print("[yellow]interrupted[/]: rerun the same command to resume")
    elif summary.pages_pending:
        err_console.print(f"[yellow]{summary.pages_pending} page(s) were not processed[/]: "
                          "rerun the same command to finish them")


def main() -> None:
    # ncnn's OpenMP threads spin while waiting by default; when the cores are shared (other
    # workers, other jobs) that makes a 2-thread page up to 10x slower. Must be set before
    # ncnn is imported; a value the user set wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    _register_subcommands()
    app(prog_name="pagerunner")


