"""`pagerunner eval`: how accurate is an engine on my documents?

    pagerunner eval scans/ --gt truth/              ground truth as <name>.gt.txt / <name>.pNN.gt.txt
    pagerunner eval report.pdf --against-text-layer  born-digital PDF: its own text layer is the truth

The command function is registered on the main Typer app by runner/cli.py.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from jobs.expand import ExpandOptions, InputError, expand_inputs
from jobs.pageranges import PageRangeError, PageRanges
from jobs.sources import DEFAULT_DPI, DEFAULT_MAX_PIXELS
from model_cache.engine import EngineError
from model_cache.manifest import ModelVerificationError
from model_cache.ppocr.assets import BUNDLED_MODELS
from runner.cli_options import MODEL_HELP, engine_extra, read_passwords
from runner.errors import ExitCode, UsageError
from runner.evaluation.evaluate import TEXT_LAYER_ENGINE, EvalOptions, EvalResult, PageEval, evaluate
from runner.evaluation.report import print_report, to_json

EXIT_OK = ExitCode.OK
EXIT_BELOW_TARGET = ExitCode.PAGES_FAILED  # nothing could be scored, or the CER is above --max-cer
EXIT_USAGE = ExitCode.USAGE
EXIT_ENGINE = ExitCode.ENVIRONMENT  # the engine could not be created (missing/altered model files)

_CJK_MODES = {"auto": None, "always": True, "never": False}


def eval_command(
    inputs: Annotated[list[str], typer.Argument(
        help="PDFs, images, folders, globs, '-' (paths on stdin) or @list.txt, as for `run`.")],
    gt: Annotated[Optional[Path], typer.Option(
        "--gt", help="Folder of ground truth: <name>.gt.txt per image, <name>.pNN.gt.txt per PDF "
                     "page, mirroring the input folders (also looked for beside each input).")] = None,
    against_text_layer: Annotated[bool, typer.Option(
        "--against-text-layer", help="Compare the OCR of each rendered PDF page with the page's own "
                                     "text layer (born-digital PDFs; no ground truth needed).")] = False,
    engine: Annotated[str, typer.Option(help="ppocr | hunyuan | textlayer | module:factory")] = "ppocr",
    pages: Annotated[Optional[str], typer.Option(help="Pages per document, e.g. 1-3,7,10-")] = None,
    dpi: Annotated[float, typer.Option(help="Render resolution for PDF pages.")] = DEFAULT_DPI,
    password: Annotated[Optional[str], typer.Option(help="Password for encrypted PDFs.")] = None,
    passwords_file: Annotated[Optional[Path], typer.Option(
        help="File of passwords, one per line, tried in turn.")] = None,
    text_layer: Annotated[str, typer.Option(
        help="As for `run`: ignore (OCR every page) or auto (use real text layers).")] = "ignore",
    threads: Annotated[int, typer.Option(min=1, help="Threads for the engine.")] = 2,
    device: Annotated[str, typer.Option(help="cpu | gpu (ncnn Vulkan)")] = "cpu",
    model_dir: Annotated[Optional[Path], typer.Option(help="A model folder with manifest.json.")] = None,
    model: Annotated[Optional[str], typer.Option(help=MODEL_HELP)] = None,
    max_new_tokens: Annotated[Optional[int], typer.Option(help="hunyuan: decode limit per page.")] = None,
    low_memory: Annotated[bool, typer.Option(help="hunyuan: load decoder layers in turn.")] = False,
    engine_option: Annotated[List[str], typer.Option(
        "--engine-option", "-E", help="Engine setting KEY=VALUE (repeatable), e.g. det_limit_side=1280.")] = [],
    max_pixels: Annotated[int, typer.Option(
        help="Render pages larger than this downscaled (and say so).")] = DEFAULT_MAX_PIXELS,
    include: Annotated[list[str], typer.Option(help="Glob of files to take from folders.")] = [],
    exclude: Annotated[list[str], typer.Option(help="Glob of files to skip.")] = [],
    recursive: Annotated[bool, typer.Option(help="Walk folders recursively.")] = True,
    min_chars: Annotated[int, typer.Option(
        min=0, help="Skip pages whose reference has fewer non-space characters.")] = 20,
    cjk: Annotated[str, typer.Option(
        help="Ignore whitespace as for CJK text: auto (per page, from the reference), always, never.")] = "auto",
    worst: Annotated[int, typer.Option(min=0, help="Show this many worst pages with a diff.")] = 3,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Write the full report as JSON to stdout.")] = False,
    max_cer: Annotated[Optional[float], typer.Option(
        help="Exit with status 1 when the overall CER is above this (for CI).")] = None,
) -> None:
    """Measure OCR accuracy (CER, WER, bag-of-characters F1) against ground truth or a PDF's text layer."""
    console = Console(stderr=True, highlight=False)
    if text_layer not in ("ignore", "auto"):
        _usage(console, "--text-layer must be ignore or auto for eval")
    options = _options(console, gt, against_text_layer, engine, dpi, threads, device, model_dir,
                       pages, min_chars, cjk)
    options = replace(options, passwords=_passwords(console, password, passwords_file),
                      max_pixels=max_pixels, text_layer=text_layer,
                      engine_extra=engine_extra(max_new_tokens, low_memory, engine_option),
                      model=_model(console, model, engine))
    if against_text_layer and text_layer != "ignore":
        _usage(console, "--against-text-layer OCRs every page: leave --text-layer at ignore")
    expand = ExpandOptions(recursive=recursive, include=tuple(include), exclude=tuple(exclude))
    try:
        files = expand_inputs(inputs, expand)
    except InputError as exc:
        _usage(console, str(exc))
    if not files:
        _usage(console, "no PDF or image files found in the inputs")
    result = _run(files, options, console)
    if json_output:
        sys.stdout.write(json.dumps(to_json(result, worst), ensure_ascii=False, indent=2) + "\n")
    print_report(result, console, worst)
    raise typer.Exit(int(_exit_code(result, max_cer, console)))


def _options(console: Console, gt: Path | None, against_text_layer: bool, engine: str, dpi: float,
             threads: int, device: str, model_dir: Path | None, pages: str | None, min_chars: int,
             cjk: str) -> EvalOptions:
    if gt is not None and against_text_layer:
        _usage(console, "choose either --gt or --against-text-layer, not both")
    if gt is not None and not gt.is_dir():
        _usage(console, f"--gt {gt}: not a folder")
    if against_text_layer and engine == TEXT_LAYER_ENGINE:
        _usage(console, "--against-text-layer compares OCR with the text layer: choose an OCR engine")
    if cjk not in _CJK_MODES:
        _usage(console, f"--cjk must be one of {', '.join(_CJK_MODES)}")
    if device not in ("cpu", "gpu"):
        _usage(console, "--device must be cpu or gpu")
    try:
        ranges = PageRanges.parse(pages)
    except PageRangeError as exc:
        _usage(console, f"--pages: {exc}")
    return EvalOptions(engine=engine, dpi=dpi, threads=threads, device=device, model_dir=model_dir,
                       pages=ranges, gt_dir=gt, against_text_layer=against_text_layer,
                       min_chars=min_chars, cjk=_CJK_MODES[cjk])


def _model(console: Console, model: str | None, engine: str) -> str | None:
    if model is not None and engine != "ppocr":
        _usage(console, f"--model chooses a ppocr model; for {engine} use --model-dir")
    if model is not None and model not in BUNDLED_MODELS:
        _usage(console, f"unknown --model {model!r} (choose from {', '.join(BUNDLED_MODELS)})")
    return model


def _passwords(console: Console, password: str | None, passwords_file: Path | None) -> tuple[str, ...]:
    try:
        return read_passwords(password, passwords_file)
    except UsageError as exc:
        _usage(console, str(exc))
        raise


def _run(files, options: EvalOptions, console: Console) -> EvalResult:
    from model_cache.registry import create_engine

    with console.status("evaluating…") as status:
        def on_page(page: PageEval) -> None:
            label = "" if page.page == 0 else f" p{page.page}"
            status.update(f"evaluating… {page.source}{label} ({page.status})")

        try:
            return evaluate(files, options, create_engine, on_page)
        except (EngineError, ModelVerificationError) as exc:
            console.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(int(EXIT_ENGINE)) from None
        except KeyboardInterrupt:
            console.print("[yellow]interrupted[/yellow]: no report (eval keeps no partial state)")
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None


def _exit_code(result: EvalResult, max_cer: float | None, console: Console) -> ExitCode:
    if result.status_counts().get("scored", 0) == 0:
        console.print("[red]no page could be scored[/red] (no ground truth found, no text layer, "
                      "or pages with too little text)")
        return EXIT_BELOW_TARGET
    if max_cer is not None and result.counts.cer > max_cer:
        console.print(f"[red]overall CER {result.counts.cer:.4f} is above --max-cer {max_cer}[/red]")
        return EXIT_BELOW_TARGET
    return EXIT_OK


def _usage(console: Console, message: str) -> None:
    console.print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(int(EXIT_USAGE))
