"""Plain text per document: each page's text, pages separated by a form feed (as pdftotext does)."""

from __future__ import annotations

from typing import Iterable, Iterator

from outputs.model import PageResult


def text_document(pages: Iterable[PageResult]) -> Iterator[str]:
    for index, page in enumerate(pages):
        if index:
            yield "\f"
        body = page.text.rstrip("\n")
        yield body + "\n" if body else "\n"
