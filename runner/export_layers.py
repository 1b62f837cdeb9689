"""A document's searchable PDF, hOCR and ALTO files in OUT, from its stored page results.

hOCR and ALTO need only the store. The searchable PDF is the input itself with the text added,
so it needs the input's bytes: they are read from the path the store last saw the document
at and must still hash to the document's sha256. An input that has moved away, vanished or
changed since it was OCR'd gets no PDF (its text, hOCR and ALTO are still written) and a note
says why; run `pagerunner run` on its new place (a moved file is recognised by its content and
not OCR'd again) or `pagerunner export` once it is back.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pikepdf

from jobs.identity import file_sha256
from jobs.store import DocumentRecord
from outputs.alto import alto_chunks
from outputs.files import write_atomic_bytes
from outputs.hocr import hocr_chunks
from outputs.model import PageResult
from outputs.paths import output_path
from outputs.pdf import pdf_password, write_image_input, write_pdf_input
from outputs.pdfium_pages import each_page
from model_cache.textlayer import MIN_REAL_CHARS, extract_text_layer
from runner import __version__

SOFTWARE = "pagerunner"
SUFFIXES = {"pdf": ".pdf", "hocr": ".hocr", "alto": ".alto.xml"}


def write_layers(doc: DocumentRecord, pages: Iterable[PageResult], out_dir: Path, formats: tuple[str, ...],
                 passwords: tuple[str, ...] = ()) -> list[str]:
    """Write the document's pdf/hocr/alto files that `formats` asks for; returns notes on
    any that could not be written."""
    notes: list[str] = []
    engines = sorted({p.engine for p in pages if p.engine})
    system = f"{SOFTWARE} {__version__} ({', '.join(engines)})" if engines else f"{SOFTWARE} {__version__}"
    if "hocr" in formats:
        write_atomic_bytes(output_path(out_dir, doc.stem, SUFFIXES["hocr"]),
                           lambda fh: fh.writelines(hocr_chunks(doc.relname, pages, system)))
    if "alto" in formats:
        write_atomic_bytes(output_path(out_dir, doc.stem, SUFFIXES["alto"]),
                           lambda fh: fh.writelines(alto_chunks(doc.relname, pages, SOFTWARE, __version__)))
    if "pdf" in formats:
        note = _write_pdf(doc, pages, out_dir, passwords)
        if note:
            notes.append(f"{doc.relname}: {note}")
    return notes


def _write_pdf(doc: DocumentRecord, pages: Iterable[PageResult], out_dir: Path,
               passwords: tuple[str, ...]) -> str | None:
    target = output_path(out_dir, doc.stem, SUFFIXES["pdf"])
    try:
        if target.exists() and os.path.samefile(target, doc.path):
            return "no searchable PDF: it would replace the input itself (choose another -o folder)"
    except OSError:
        pass
    source = Path(doc.path)
    try:
        digest, _ = file_sha256(source)
    except OSError as exc:
        return f"no searchable PDF: the input {doc.path} cannot be read ({exc.strerror or exc})"
    if digest != doc.sha256:
        return f"no searchable PDF: the input {doc.path} has changed since it was OCR'd"
    try:
        if doc.kind == "pdf":
            password = pdf_password(source, passwords)
            has_text = _pages_with_text(source, pages, password)
            write_atomic_bytes(target, lambda fh: write_pdf_input(source, pages, fh, password, has_text))
        else:
            dpi = float(doc.options.get("dpi") or 200.0)
            write_atomic_bytes(target, lambda fh: write_image_input(source, pages, fh, dpi))
    except (OSError, ValueError, RuntimeError, pikepdf.PikepdfError) as exc:
        if isinstance(exc, OSError) and exc.errno:
            raise  # a full disk or read-only OUT is the run's problem, not this document's
        return f"no searchable PDF: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    return None


def _pages_with_text(source: Path, pages: Iterable[PageResult], password: str | None) -> frozenset[int]:
    """OCR'd pages that carry a text layer of their own: a real one (`--text-layer ignore`), or an
    invisible one from an earlier OCR (`auto` OCRs such pages again): a second hidden layer
    would double their text in every search, so those pages are left as they were."""
    found = set()
    for number, page in each_page(source, [r.page for r in pages if r.mode == "ocr"], password):
        layer = extract_text_layer(page, 1.0)
        if layer.is_real or layer.invisible_chars >= MIN_REAL_CHARS:
            found.add(number)
    return frozenset(found)
