"""`pagerunner models list|verify|path|convert`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from model_cache.cache import find_model, known_models, models_root
from model_cache.manifest import ModelVerificationError, verify_folder
from model_cache.ppocr.assets import DEFAULT_MODEL, describe_model, measured_figures
from runner.errors import ExitCode

models_app = typer.Typer(no_args_is_help=True, add_completion=False)
console = Console(stderr=True, highlight=False)


@models_app.command("list")
def list_models() -> None:
    """Models bundled with pagerunner and in the model cache, with their measured speed and accuracy.
    On a terminal a table; piped, one tab-separated line per model after a header line."""
    columns = ("name", "engine", "where", "size", "languages", "pages/min", "mean CER")
    figures = measured_figures()
    entries = known_models()
    rows = []
    for entry in entries:
        info = describe_model(entry.path)
        measured = figures.get("models", {}).get(entry.name, {})
        rows.append((entry.name + (" (default)" if entry.bundled and entry.name == DEFAULT_MODEL else ""),
                     entry.engine, "bundled" if entry.bundled else "cache",
                     f"{info['bytes'] / 1e6:.1f} MB" if info else "?", info.get("languages", "") if info else "",
                     _speed(measured), _cer(measured)))
    if sys.stdout.isatty():
        table = Table(*columns, show_header=True)
        for row in rows:
            table.add_row(*row)
        Console().print(table)
    else:  # a table cut to 80 columns would truncate every cell; a pipe gets the whole values
        for row in (columns, *rows):
            typer.echo("\t".join(row))
    if figures:
        speed = figures.get("throughput", {})
        load = speed.get("load_average")
        console.print("pages/min: dense A4 at 200 dpi, end to end, 2 threads"
                      + (f" (measured {speed['measured']} on {speed.get('machine', '?')}"
                         + (f", load average {load[0]} at the end: compare ratios, not absolutes)" if load else ")")
                         if speed.get("measured") else " (not measured yet)")
                      + "; mean CER per set: NFKC, no whitespace. " + figures.get("about", ""))
    for entry in entries:
        console.print(f"{entry.name}: {entry.path}")
    console.print(f"model cache: {models_root()}")


def _speed(measured: dict) -> str:
    return f"{measured['pages_per_min']:.1f}" if "pages_per_min" in measured else ""


def _cer(measured: dict) -> str:
    parts = []
    if "kit_pdfs_cer" in measured:
        parts.append(f"kit PDFs {measured['kit_pdfs_cer']:.4f}")
    if "corpus_check_cer" in measured:
        parts.append(f"corpus {measured['corpus_check_cer']:.4f} ({measured['corpus_check_pages']} pages)")
    return ", ".join(parts)


@models_app.command("verify")
def verify(model: Optional[str] = typer.Argument(
        None, help="A model folder, or a known model's name (default: every known model)")) -> None:
    """Check every file of a model folder against its manifest's sha256."""
    try:
        folders = [find_model(model)] if model else [entry.path for entry in known_models()]
    except ModelVerificationError as exc:
        console.print(f"[red]FAILED[/] {exc}")
        raise typer.Exit(int(ExitCode.ENVIRONMENT))
    failed = False
    for folder in folders:
        try:
            manifest = verify_folder(folder)
        except ModelVerificationError as exc:
            console.print(f"[red]FAILED[/] {exc}")
            failed = True
            continue
        console.print(f"[green]OK[/] {manifest.name} {folder}: {len(manifest.files)} file(s) match manifest.json")
    if failed:
        raise typer.Exit(int(ExitCode.ENVIRONMENT))


@models_app.command("path")
def path(model: str = typer.Argument("ppocr", help="A known model's name")) -> None:
    """Print a model's folder."""
    try:
        typer.echo(str(find_model(model)))
    except ModelVerificationError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(int(ExitCode.USAGE))


@models_app.command("convert")
def convert(
    model: str = typer.Argument(..., help="Model family to convert: hunyuanocr"),
    checkpoint: Path = typer.Option(..., "--checkpoint", help="Hugging Face checkpoint folder."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Output model folder."),
    dtype: str = typer.Option("fp32", "--dtype", help="fp32 | fp16 | bf16 weight storage, or int8 "
                              "(decoder and LM-head weights block-quantized, CPU only)"),
    rope_variant: str = typer.Option("1.5", "--rope-variant", help="HunyuanOCR 1.0 or 1.5 RoPE/prompt layout"),
    jobs: int = typer.Option(1, "--jobs", min=1, help="Graphs converted in parallel."),
) -> None:
    """Convert a checkpoint into ncnn model files (needs `pip install 'pagerunner[convert]'`)."""
    if model.lower() not in ("hunyuanocr", "hunyuan"):
        console.print(f"[red]error:[/] unknown model family {model!r} (supported: hunyuanocr)")
        raise typer.Exit(int(ExitCode.USAGE))
    if dtype not in ("fp32", "fp16", "bf16", "int8"):
        console.print("[red]error:[/] --dtype must be fp32, fp16, bf16 or int8")
        raise typer.Exit(int(ExitCode.USAGE))
    try:
        from model_cache.hunyuan.convert import convert_checkpoint
    except ImportError as exc:
        console.print(f"[red]error:[/] conversion needs the convert extra (torch, transformers, pnnx): {exc}")
        raise typer.Exit(int(ExitCode.ENVIRONMENT))
    target = out or models_root() / f"hunyuanocr-{dtype}"
    if rope_variant not in ("1.0", "1.5"):
        console.print("[red]error:[/] --rope-variant must be 1.0 or 1.5")
        raise typer.Exit(int(ExitCode.USAGE))
    try:
        result = convert_checkpoint(checkpoint, target, dtype, rope_variant=rope_variant,
                                    log=lambda message: console.print(message), jobs=jobs)
    except ImportError as exc:
        console.print(f"[red]error:[/] conversion needs torch==2.13.0, transformers>=5.13 and pnnx: {exc}")
        raise typer.Exit(int(ExitCode.ENVIRONMENT))
    console.print(f"[green]converted[/] {checkpoint} -> {result}")
