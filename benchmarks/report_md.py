"""Markdown tables, machine facts, and the delimited sections of docs/benchmarks.md.

Each benchmark script owns one section between `<!-- BEGIN name -->` and `<!-- END name -->`
and rewrites only that section, so other sections (other scripts, other people's figures)
are kept as they are.
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC_PATH = REPO / "docs" / "benchmarks.md"
DOC_HEADER = """# Benchmarks

Figures measured by the scripts in `benchmarks/` (see each section for the exact command). The scripts
rewrite only their own section (between `<!-- BEGIN name -->` and `<!-- END name -->` markers); other
sections are kept. Peers (Tesseract, RapidOCR) are installed by `benchmarks/setup_peers.sh`, not by
pagerunner's own dependencies.

"""


def markdown_table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """`align`: one character per column, 'l' or 'r' (default: first left, the rest right)."""
    align = align or "l" + "r" * (len(headers) - 1)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def machine_facts() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{cpu}, {os.cpu_count()} logical CPUs{memory}; {platform.system()} "
            f"{platform.release()}; Python {platform.python_version()}")


def command_line() -> str:
    script = Path(sys.argv[0])
    try:
        script = script.resolve().relative_to(REPO)
    except ValueError:
        pass
    return " ".join(shlex.quote(a) for a in ["python", str(script), *sys.argv[1:]])


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def replace_section(name: str, body: str, path: Path = DOC_PATH) -> None:
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else DOC_HEADER
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    tmp.replace(path)
