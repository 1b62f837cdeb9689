"""Write OUT's files from the store: results.jsonl, and per document <stem>.md / <stem>.txt
(and, when asked for, <stem>.pdf / <stem>.hocr / <stem>.alto.xml: runner/export_layers.py).

Every file is written atomically, so a crash never leaves a torn file; rerunning export after
any interruption gives the same bytes as an uninterrupted run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from jobs.store import DocumentRecord, JobStore
from outputs.files import write_atomic
from outputs.jsonl import document_failure_line, jsonl_lines
from outputs.markdown import markdown_document
from outputs.paths import output_path
from outputs.text import text_document
from runner.export_layers import LAYER_FORMATS, write_layers

FORMATS = ("jsonl", "md", "txt", *LAYER_FORMATS)
DEFAULT_FORMATS = ("jsonl", "md", "txt")
RESULTS_FILE = "results.jsonl"


def parse_formats(text: str) -> tuple[str, ...]:
    chosen = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown or not chosen:
        raise ValueError(f"unknown format(s) {', '.join(unknown) or text!r}; choose from {', '.join(FORMATS)}")
    return chosen


def document_records(store: JobStore, doc: DocumentRecord) -> Iterator[str]:
    if doc.state == "failed":
        yield document_failure_line(doc.relname, doc.doc_id, doc.options.get("engine", ""),
                                    doc.error_code or "", doc.error_message or "")
    else:
        yield from jsonl_lines(store.page_results(doc.doc_id))


def write_results_jsonl(store: JobStore, out_dir: Path) -> None:
    def lines() -> Iterable[str]:
        for doc in store.documents():
            yield from document_records(store, doc)
    write_atomic(out_dir / RESULTS_FILE, lines())


def write_document(store: JobStore, doc: DocumentRecord, out_dir: Path, formats: Iterable[str],
                   passwords: tuple[str, ...] = ()) -> list[str]:
    """Write the document's files; returns notes on files that could not be made."""
    if doc.state != "ready":
        return []
    formats = tuple(formats)
    pages = store.page_results(doc.doc_id)
    if "md" in formats:
        write_atomic(output_path(out_dir, doc.stem, ".md"), markdown_document(doc.relname, pages))
    if "txt" in formats:
        write_atomic(output_path(out_dir, doc.stem, ".txt"), text_document(pages))
    return write_layers(doc, pages, out_dir, formats, passwords)


def export_all(store: JobStore, out_dir: Path, formats: Iterable[str], passwords: tuple[str, ...] = (),
               notes: list[str] | None = None) -> int:
    formats = tuple(formats)
    if "jsonl" in formats:
        write_results_jsonl(store, out_dir)
    count = 0
    for doc in store.documents():
        if store.document_finished(doc.doc_id):
            found = write_document(store, doc, out_dir, formats, passwords)
            if notes is not None:
                notes.extend(found)
            count += 1
    return count
