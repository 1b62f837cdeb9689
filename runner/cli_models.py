"""`pagerunner models list|verify|path|convert`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from model_cache.cache import find_model, known_models, models_root
from model_cache.manifest import ModelVerificationError, verify_folder
from runner.errors import ExitCode

models_app = typer.Typer(no_args_is_help=True, add_completion=False)
console = Console(stderr=True, highlight=False)


@models_app.command("list")
def list_models() -> None:
    """Models bundled with pagerunner and in the model cache."""
    table = Table(show_header=True)
    for column in ("name", "engine", "where", "path"):
        table.add_column(column)
    for entry in known_models():
        table.add_row(entry.name, entry.engine, "bundled" if entry.bundled else "cache", str(entry.path))
    Console().print(table)
    console.print(f"model cache: {models_root()}")


@models_app.command("verify")
def verify(model: str = typer.Argument("ppocr", help="A model folder, or a known model's name")) -> None:
    """Check every file of a model folder against its manifest's sha256."""
    try:
        folder = find_model(model)
        manifest = verify_folder(folder)
    except ModelVerificationError as exc:
        console.print(f"[red]FAILED[/] {exc}")
        raise typer.Exit(int(ExitCode.ENVIRONMENT))
    console.print(f"[green]OK[/] {folder}: {len(manifest.files)} file(s) match manifest.json")


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
