"""The page step: render one page of a document and recognise it. Knows nothing of the store.

Every executor (in-process, local processes, Ray actors) runs a PageWorker: it keeps the engine
loaded once and the current document open, and turns a PageTask into a PageResult. Page-level
problems become failed PageResults; only an engine that cannot be created raises.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jobs.sources import DocumentSource, RenderedPage, RenderOptions, SourceError, open_source
from jobs.store import PageTask
from model_cache.engine import DeviceLost, Engine, EngineError, EngineOptions
from model_cache.manifest import ModelVerificationError
from model_cache.registry import TEXT_LAYER_ENGINE, create_engine
from outputs.model import ErrorCode, PageError, PageResult
from outputs.pdfium_pages import ReopenClock


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs besides the task: never stored (passwords live only here)."""
    engine: str = "ppocr"
    engine_options: EngineOptions = field(default_factory=EngineOptions)
    passwords: tuple[str, ...] = ()
    max_pixels: int = 40_000_000


@dataclass
class Rendered:
    """The outcome of the render step: a rendered page, or the page's failure."""
    task: PageTask
    page: RenderedPage | None = None
    error: PageError | None = None
    seconds: float = 0.0


class FatalWorkerError(Exception):
    """The worker cannot do any page (engine creation failed): the run must stop."""


class PageWorker:
    def __init__(self, config: WorkerConfig):
        self.config = config
        self._engine: Engine | None = None
        self._source: DocumentSource | None = None
        self._source_key: str | None = None
        self._reopen = ReopenClock()  # PDFium's memory grows with the pages loaded (outputs/pdfium_pages.py)

    # --- render (may run on a prefetch thread; the only place that touches PDFium) ----------

    def render(self, task: PageTask, data: bytes | None = None) -> Rendered:
        start = time.perf_counter()
        options = task.options
        text_mode = _text_mode(options)
        want_text = text_mode in ("auto", "only")
        try:
            source = self._open(task, data)
            render_options = RenderOptions(dpi=float(options.get("dpi", 200)), max_pixels=self.config.max_pixels,
                                           want_image=text_mode != "only", want_text_layer=want_text)
            if text_mode == "auto" and source.kind == "pdf":
                probe = source.render(task.page, RenderOptions(dpi=render_options.dpi,
                                                               max_pixels=render_options.max_pixels,
                                                               want_image=False, want_text_layer=True))
                if probe.text_layer is not None and probe.text_layer.is_real:
                    return Rendered(task, probe, seconds=time.perf_counter() - start)
            page = source.render(task.page, render_options)
            if text_mode == "auto" and page.text_layer is not None and page.text_layer.is_invisible_ocr:
                page.warnings.append("the page's text layer is invisible (an earlier OCR over a scan): "
                                     "OCR'd again (--text-layer auto)")
            return Rendered(task, page, seconds=time.perf_counter() - start)
        except SourceError as exc:
            return Rendered(task, error=PageError(exc.code, exc.message), seconds=time.perf_counter() - start)
        except MemoryError:
            return Rendered(task, error=PageError(ErrorCode.RENDER_FAILED, "out of memory while rendering"))

    def _open(self, task: PageTask, data: bytes | None) -> DocumentSource:
        if self._reopen.due():
            self.close_document()
        if self._source_key != task.doc_id or self._source is None:
            self.close_document()
            self._reopen.opening()
            self._source = open_source(Path(task.path), self.config.passwords, data)
            self._reopen.opened()
            self._source_key = task.doc_id
        self._reopen.pages += 1
        return self._source

    def close_document(self) -> None:
        self._reopen.pages = 0
        if self._source is not None:
            try:
                self._source.close()
            finally:
                self._source, self._source_key = None, None

    # --- recognise (main thread) -----------------------------------------------------------

    def recognise_many(self, rendered: list[Rendered]) -> list[PageResult]:
        """Pages that need the engine go to its ocr_many together, if it has one (DESIGN.md);
        if that raises, each page is done again on its own, so one bad page fails alone."""
        ocr_many = getattr(self.engine(), "ocr_many", None) if self.config.engine != TEXT_LAYER_ENGINE else None
        batch = [i for i, r in enumerate(rendered) if _needs_engine(r)]
        if ocr_many is None or len(batch) < 2:
            return [self.recognise(r) for r in rendered]
        start = time.perf_counter()
        try:
            pages = ocr_many([rendered[i].page.image for i in batch])  # type: ignore[union-attr]
        except (FatalWorkerError, DeviceLost):
            raise
        except Exception:  # MemoryError included: one page at a time is also the smaller job
            return [self.recognise(r) for r in rendered]
        done = dict(zip(batch, pages))
        return [self._complete(r, done[i], start) if i in done else self.recognise(r)
                for i, r in enumerate(rendered)]

    def recognise(self, rendered: Rendered) -> PageResult:
        task = rendered.task
        if rendered.error is not None or rendered.page is None:
            error = rendered.error or PageError(ErrorCode.RENDER_FAILED, "nothing was rendered")
            return PageResult.failed(source=task.relname, doc_id=task.doc_id, page=task.page,
                                     engine=self.config.engine, error=error)
        page = rendered.page
        start = time.perf_counter()
        if not _needs_engine(rendered):
            result = _text_layer_result(page)
        else:
            try:
                result = self.engine().ocr(page.image)
            except (FatalWorkerError, DeviceLost):  # DeviceLost: the process restarts, the page is retried
                raise
            except MemoryError:
                return self._failed(task, ErrorCode.ENGINE_FAILED, "out of memory during recognition")
            except Exception as exc:  # an engine bug on one page must not stop the batch
                return self._failed(task, ErrorCode.ENGINE_FAILED, f"{type(exc).__name__}: {exc}")
        return self._complete(rendered, result, start)

    def _complete(self, rendered: Rendered, result: PageResult, start: float) -> PageResult:
        task, page = rendered.task, rendered.page
        assert page is not None
        timings = {"render": rendered.seconds}
        timings.update(result.timings)
        timings["recognise"] = time.perf_counter() - start
        result.source, result.doc_id, result.page = task.relname, task.doc_id, task.page
        result.dpi = round(page.dpi, 2) if page.dpi else None
        result.timings = timings
        result.warnings = [*page.warnings, *result.warnings]
        return result

    def process(self, task: PageTask, data: bytes | None = None) -> PageResult:
        return self.recognise(self.render(task, data))

    def engine(self) -> Engine:
        if self._engine is None:
            try:
                self._engine = create_engine(self.config.engine, self.config.engine_options)
            except (EngineError, ModelVerificationError, ImportError, OSError) as exc:
                raise FatalWorkerError(str(exc)) from exc
        return self._engine

    def warm_up(self) -> None:
        """Load the engine now (so a model problem stops the run before any page)."""
        if self.config.engine != TEXT_LAYER_ENGINE:
            self.engine()

    def _failed(self, task: PageTask, code: ErrorCode, message: str) -> PageResult:
        return PageResult.failed(source=task.relname, doc_id=task.doc_id, page=task.page,
                                 engine=self.config.engine, error=PageError(code, message))

    def close(self) -> None:
        self.close_document()


def _needs_engine(rendered: Rendered) -> bool:
    page = rendered.page
    if rendered.error is not None or page is None or page.image is None:
        return False
    layer = page.text_layer
    return not (_text_mode(rendered.task.options) == "auto" and layer is not None and layer.is_real)


def _text_mode(options: dict[str, Any]) -> str:
    if options.get("engine") == TEXT_LAYER_ENGINE:
        return "only"
    return str(options.get("text_layer", "ignore"))


def _text_layer_result(page: RenderedPage) -> PageResult:
    layer = page.text_layer
    if layer is None:
        return PageResult.from_blocks([], width=page.width, height=page.height, engine=TEXT_LAYER_ENGINE,
                                      mode="none", warnings=["no text layer (not a PDF)"])
    warnings = [] if layer.lines else ["the page has no text layer"]
    return PageResult.from_blocks(layer.blocks, width=page.width, height=page.height,
                                  engine=TEXT_LAYER_ENGINE, mode="textlayer", warnings=warnings)
