"""Walking many pages of one PDF with PDFium in flat memory.

PDFium keeps what it parsed of every loaded page (~1.4 MiB a page on the kit's PDFs: each page
carries its own fonts) until the document closes, even after the page itself is closed. Whoever
loads many pages of one document (a worker rendering it, an export reading its frames and text
layers) reopens it after REOPEN_MIN_PAGES pages, provided the time since opening is at least
REOPEN_COST_RATIO times what the open took (a PDF whose xref must be rebuilt on every open is
reopened less often).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

REOPEN_MIN_PAGES = 16
REOPEN_COST_RATIO = 50.0


@dataclass
class ReopenClock:
    """When a document open for a while should be closed and opened again."""
    pages: int = 0
    opened_at: float = 0.0
    open_seconds: float = 0.0

    def opening(self) -> None:
        self.pages, self.opened_at = 0, time.perf_counter()

    def opened(self) -> None:
        self.open_seconds = time.perf_counter() - self.opened_at

    def due(self) -> bool:
        if self.pages < REOPEN_MIN_PAGES:
            return False
        return time.perf_counter() - self.opened_at >= REOPEN_COST_RATIO * self.open_seconds


def each_page(source: bytes | Path, numbers: Iterable[int], password: str | None = None) -> Iterator[tuple[int, object]]:
    """(number, pypdfium2 PdfPage) for each 1-based page number the document has, in the order
    given; each page is closed when the caller asks for the next one."""
    import pypdfium2 as pdfium

    clock = ReopenClock()
    doc = None
    try:
        for number in numbers:
            if doc is not None and clock.due():
                doc.close()
                doc = None
            if doc is None:
                clock.opening()
                doc = pdfium.PdfDocument(source if isinstance(source, bytes) else str(source), password=password)
                clock.opened()
            if not 1 <= number <= len(doc):
                continue
            page = doc[number - 1]
            clock.pages += 1
            try:
                yield number, page
            finally:
                page.close()
    finally:
        if doc is not None:
            doc.close()
