"""`--formats html`: write the review pages (outputs/html.py) from the store.

The store keeps text and boxes, not pixels, so each page's picture is rendered again from the
input when its review page is written, downscaled to at most 900 x 4000 px and embedded as a JPEG
data URI.
When the input is gone (or has changed size) the page is drawn without its picture: the boxes and
the text are still there, with a note saying why. A review page whose results have not changed is
not rewritten (its <meta> fingerprint says so), so a picture once embedded survives the input.
"""

from __future__ import annotations

import base64
import heapq
import io
import itertools
import os
from collections.abc import Collection
from pathlib import Path
from urllib.parse import quote

from PIL import Image

from jobs.sources import RenderOptions, SourceError, open_source
from jobs.store import DocumentRecord, JobStore
from outputs.files import write_atomic
from outputs.html import (FINGERPRINT_META, DocumentLink, PageImage, display_scale, document_review,
                          fingerprint, fingerprint_of_list, page_confidence, run_review)
from outputs.model import PageResult
from outputs.paths import output_path
from outputs.pdfium_pages import ReopenClock

JPEG_QUALITY = 60
RUN_REVIEW_FILE = "review.html"
DOUBTFUL_PAGES = 25  # the run page shows this many of the least confident pages in full


def write_document_review(doc: DocumentRecord, pages: Collection[PageResult], out_dir: Path,
                          passwords: tuple[str, ...] = ()) -> None:
    """`pages` is read a few times, a page at a time (a stored document's pages stream from the store)."""
    path = output_path(out_dir, doc.stem, ".html")
    stamp = fingerprint_of_list("document", doc.relname, map(_stable, pages))
    if _is_current(path, stamp):
        return
    with PagePictures(doc, passwords) as pictures:
        write_atomic(path, document_review(doc.relname, pages, pictures, stamp))


def write_run_review(store: JobStore, out_dir: Path, passwords: tuple[str, ...] = ()) -> None:
    """OUT/review.html: the run's failures, its least confident pages in full, every document."""
    docs = {doc.doc_id: doc for doc in store.documents()}
    failures: list[tuple[str, int | None, str, str, str]] = []
    links: list[DocumentLink] = []
    doubtful: list[tuple[float, int, PageResult, str, str]] = []  # a max-heap of the lowest by -conf
    seen: set[str] = set()
    order = itertools.count()
    for name in store.names():
        doc = docs[name.doc_id]
        href = quote(name.stem + ".html")
        if doc.state == "failed":
            failures.append((name.relname, None, doc.error_code or "", doc.error_message or "", ""))
            links.append(DocumentLink(name.relname, "", 0, 0, None, not name.primary))
            continue
        listed = doc.doc_id not in seen  # a copy's pages are its original's: list them once
        seen.add(doc.doc_id)
        count, confs, failed = 0, [], []
        for page in store.page_results(doc.doc_id, name.relname):  # one page at a time
            count += 1
            conf = page_confidence(page)
            if conf is not None:
                confs.append(conf)
            if page.status == "failed":
                failed.append(page)
            if listed and conf is not None and page.mode == "ocr":
                item = (-conf, -next(order), page, f"{href}#p{page.page}", doc.doc_id)
                if len(doubtful) < DOUBTFUL_PAGES:
                    heapq.heappush(doubtful, item)
                elif -conf > doubtful[0][0]:
                    heapq.heapreplace(doubtful, item)
        failures.extend((name.relname, p.page, p.error.code.value if p.error else "",
                         p.error.message if p.error else "", f"{href}#p{p.page}") for p in failed)
        links.append(DocumentLink(name.relname, href, count, len(failed),
                                  sum(confs) / len(confs) if confs else None, not name.primary))
    worst = sorted(doubtful, key=lambda item: (-item[0], item[2].source, item[2].page))
    shown = [(page, link) for _, _, page, link, _ in worst]
    stamp = fingerprint("run", failures, [(_stable(p), link) for p, link in shown],
                        [link.__dict__ for link in links])
    path = out_dir / RUN_REVIEW_FILE
    if _is_current(path, stamp):
        return
    images: dict[tuple[str, int], PageImage] = {}
    for doc_id in {item[4] for item in worst}:
        chosen = [item[2] for item in worst if item[4] == doc_id]
        with PagePictures(docs[doc_id], passwords) as pictures:
            for page in chosen:
                image = pictures.picture(page)
                if image is not None:
                    images[(page.source, page.page)] = image
    write_atomic(path, run_review(_summary(store, links, failures), failures, shown, images, links, stamp))


class PagePictures:
    """Pages' pictures, each rendered again from the input when the review asks for it
    (`picture(page)`), or why it cannot be. Pictures are made one at a time and the input is
    reopened as the workers do (PDFium keeps every page it loaded until the document closes), so
    a review of thousands of pages holds one picture's memory."""

    def __init__(self, doc: DocumentRecord, passwords: tuple[str, ...] = ()):
        self.doc, self.passwords = doc, passwords
        self.source = None
        self.problem: str | None = None
        self.checked = False
        self.clock = ReopenClock()

    def picture(self, page: PageResult) -> PageImage | None:
        """None for a page with nothing to draw (failed, or of no size)."""
        if page.status != "ok" or page.width <= 0 or page.height <= 0:
            return None
        if not self.checked:
            self.problem, self.checked = _input_problem(self.doc), True
        if self.problem is None and (self.source is None or self.clock.due()):
            self._reopen()
        if self.problem is not None:
            return PageImage(None, self.problem)
        self.clock.pages += 1
        return _picture(self.source, page, self.doc)

    def _reopen(self) -> None:
        self.close()
        self.clock.opening()
        try:
            self.source = open_source(Path(self.doc.path), self.passwords)
        except SourceError as exc:
            self.problem = f"no picture: the input cannot be opened now ({exc.message})"
        self.clock.opened()

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None

    def __enter__(self) -> PagePictures:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _picture(source, page: PageResult, doc: DocumentRecord) -> PageImage:
    scale = display_scale(page.width, page.height)
    size = (max(1, round(page.width * scale)), max(1, round(page.height * scale)))
    dpi = float(page.dpi or doc.options.get("dpi") or 200.0) * scale
    try:
        rendered = source.render(page.page, RenderOptions(dpi=max(dpi, 1.0),
                                                          max_pixels=max(100_000, 2 * size[0] * size[1])))
        if rendered.image is None:
            return PageImage(None, "no picture")
        upright = rendered.image.rotate(-page.rotation, expand=True) if page.rotation % 360 else rendered.image
        picture = upright.resize(size, Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        picture.convert("RGB").save(buffer, "JPEG", quality=JPEG_QUALITY, optimize=True)
    except SourceError as exc:
        return PageImage(None, f"no picture: {exc.message}")
    except (OSError, ValueError, MemoryError) as exc:  # a review picture is never worth failing the run for
        return PageImage(None, f"no picture: {type(exc).__name__}: {exc}")
    return PageImage("data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii"))


def _input_problem(doc: DocumentRecord) -> str | None:
    try:
        size = os.stat(doc.path).st_size
    except OSError:
        return f"no picture: the input is no longer at {doc.path}"
    if size != doc.size:
        return "no picture: the input has changed since it was read"
    return None


def _summary(store: JobStore, links: list[DocumentLink], failures: list) -> str:
    counts = store.counts()
    shared = sum(1 for link in links if link.shared)
    text = (f"{len(links)} input(s), {sum(counts.values())} page(s): {counts.get('done', 0)} done, "
            f"{counts.get('failed', 0)} failed, {counts.get('pending', 0) + counts.get('running', 0)} pending; "
            f"{len(failures)} failure(s) listed")
    if shared:
        text += f"; {shared} input(s) are copies of another and share its pages"
    return text


def _stable(page: PageResult) -> dict:
    record = page.to_dict()
    record.pop("timings", None)
    return record


def _is_current(path: Path, stamp: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return f'name="{FINGERPRINT_META}" content="{stamp}"'.encode() in head
