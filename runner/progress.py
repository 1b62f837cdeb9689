"""Progress on stderr: a rich display on a terminal, nothing when stderr is not a TTY or --quiet."""

from __future__ import annotations

import time
from typing import Protocol

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn,
                           TimeRemainingColumn)
from rich.text import Text

from outputs.model import PageResult


class Reporter(Protocol):
    def start(self, total_pages: int, done_pages: int, documents: int) -> None: ...
    def current(self, name: str) -> None: ...
    def page_done(self, result: PageResult) -> None: ...
    def message(self, text: str) -> None: ...
    def close(self) -> None: ...


class SilentReporter:
    def start(self, total_pages: int, done_pages: int, documents: int) -> None: ...
    def current(self, name: str) -> None: ...
    def page_done(self, result: PageResult) -> None: ...
    def message(self, text: str) -> None: ...
    def close(self) -> None: ...


class _PagesPerMinute(ProgressColumn):
    def render(self, task: Task) -> Text:
        rate = task.fields.get("rate")
        return Text(f"{rate:5.1f} pages/min" if rate else "  -- pages/min", style="progress.data.speed")


class RichReporter:
    def __init__(self, console: Console):
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.fields[documents]}[/] docs"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("pages"),
            _PagesPerMinute(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("[dim]{task.fields[current]}"),
            console=console, transient=False, refresh_per_second=4)
        self.task_id = None
        self.started = time.monotonic()
        self.finished_here = 0
        self.failed = 0

    def start(self, total_pages: int, done_pages: int, documents: int) -> None:
        self.progress.start()
        self.started = time.monotonic()
        self.task_id = self.progress.add_task("pages", total=total_pages, completed=done_pages,
                                              documents=documents, current="", rate=0.0)

    def current(self, name: str) -> None:
        if self.task_id is not None:
            self.progress.update(self.task_id, current=_shorten(name, 40))

    def page_done(self, result: PageResult) -> None:
        self.finished_here += 1
        if result.status != "ok":
            self.failed += 1
            code = result.error.code.value if result.error else "failed"
            self.progress.console.print(f"[yellow]page {result.page} of {result.source} failed[/] ({code})")
        elapsed = max(time.monotonic() - self.started, 1e-6)
        if self.task_id is not None:
            self.progress.update(self.task_id, advance=1, rate=60.0 * self.finished_here / elapsed)

    def message(self, text: str) -> None:
        self.progress.console.print(text)

    def close(self) -> None:
        self.progress.stop()


def make_reporter(console: Console, quiet: bool) -> Reporter:
    if quiet or not console.is_terminal:
        return SilentReporter()
    return RichReporter(console)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1):]
