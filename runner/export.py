"""Write OUT's files from the store: results.jsonl, and per document <stem>.md / <stem>.txt
(and, when asked for, <stem>.pdf / <stem>.hocr / <stem>.alto.xml: runner/export_layers.py).

Every file is written atomically, so a crash never leaves a torn file; rerunning export after
any interruption gives the same bytes as an uninterrupted run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Iterable, Iterator

from jobs.store import DocumentName, DocumentRecord, JobStore, StoredPages
from outputs.files import write_atomic
from outputs.jsonl import document_failure_line, jsonl_lines
from outputs.markdown import markdown_document
from outputs.paths import output_path
from outputs.text import text_document
from runner.formats import LAYER_FORMATS, RESULTS_FILE
from runner.review import write_document_review, write_run_review


def named(doc: DocumentRecord, name: DocumentName) -> DocumentRecord:
    """The document as seen under one of its names (its own, or an alias: identical bytes)."""
    return replace(doc, relname=name.relname, stem=name.stem, path=name.path)


def document_records(store: JobStore, doc: DocumentRecord) -> Iterator[str]:
    """The JSONL lines of `doc` under its name (`doc.relname`: see `named`)."""
    if doc.state == "failed":
        yield document_failure_line(doc.relname, doc.doc_id, doc.options.get("engine", ""),
                                    doc.error_code or "", doc.error_message or "")
    else:
        yield from jsonl_lines(store.page_results(doc.doc_id, doc.relname))


def write_results_jsonl(store: JobStore, out_dir: Path) -> None:
    def lines() -> Iterable[str]:
        docs = {doc.doc_id: doc for doc in store.documents()}
        for name in store.names():
            yield from document_records(store, named(docs[name.doc_id], name))
    write_atomic(out_dir / RESULTS_FILE, lines())


def write_document(store: JobStore, doc: DocumentRecord, out_dir: Path, formats: Iterable[str],
                   passwords: tuple[str, ...] = ()) -> list[str]:
    """Write a finished document's files under each of its names (passwords: to render encrypted
    inputs); returns notes on files that could not be made."""
    if doc.state != "ready":
        return []
    formats = tuple(formats)
    notes: list[str] = []
    for name in store.names_of(doc.doc_id):
        pages = store.page_results(doc.doc_id, name.relname)
        notes += _write_named(named(doc, name), pages, out_dir, formats, passwords)
    return notes


def _write_named(doc: DocumentRecord, pages: StoredPages, out_dir: Path, formats: tuple[str, ...],
                 passwords: tuple[str, ...]) -> list[str]:
    if "md" in formats:
        write_atomic(output_path(out_dir, doc.stem, ".md"), markdown_document(doc.relname, pages))
    if "txt" in formats:
        write_atomic(output_path(out_dir, doc.stem, ".txt"), text_document(pages))
    if "html" in formats:
        write_document_review(doc, pages, out_dir, passwords)
    if not set(formats) & set(LAYER_FORMATS):
        return []
    from runner.export_layers import write_layers  # PDF and XML writers: only when asked for

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
    if "html" in formats:
        write_run_review(store, out_dir, passwords)
    return count
