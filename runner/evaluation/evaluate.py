"""Orchestration of `pagerunner eval`: render each page, OCR it, score it against a reference.

The reference is either a ground-truth file (see groundtruth.py) or, with
`against_text_layer`, the PDF page's own text layer: the page is rendered to an image
exactly as `run` would, OCR'd, and compared with the text PDFium reads from the same page.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from jobs.expand import InputFile
from jobs.pageranges import ALL_PAGES, PageRanges
from jobs.sources import (DEFAULT_DPI, DEFAULT_MAX_PIXELS, DocumentSource, RenderOptions,
                          SourceError, open_source)
from model_cache.engine import Engine, EngineOptions
from model_cache.textlayer import TextLayer
from runner.evaluation.groundtruth import GroundTruthFinder, GroundTruthFiles, read_ground_truth
from runner.evaluation.metrics import Counts, TextScore, non_space_length, score_text

TEXT_LAYER_ENGINE = "textlayer"
MIN_REFERENCE_CHARS = 20
MAX_BAD_GLYPH_SHARE = 0.1  # a text layer with more unmapped glyphs than this is not a reference

# Why a page was not scored (a closed set: it is part of the JSON report).
SKIP_NO_GROUND_TRUTH = "no_ground_truth"
SKIP_LITTLE_TEXT = "little_text"
SKIP_NO_TEXT_LAYER = "no_text_layer"
SKIP_BAD_TEXT_LAYER = "bad_text_layer"
SKIP_PARTIAL_DOCUMENT = "partial_document"


@dataclass(frozen=True)
class EvalOptions:
    engine: str = "ppocr"
    dpi: float = DEFAULT_DPI
    threads: int = 2
    device: str = "cpu"
    model_dir: Path | None = None
    model: str | None = None  # a shipped ppocr model by name (None: the default)
    pages: PageRanges = ALL_PAGES
    gt_dir: Path | None = None
    against_text_layer: bool = False
    min_chars: int = MIN_REFERENCE_CHARS
    passwords: tuple[str, ...] = ()
    max_pixels: int = DEFAULT_MAX_PIXELS
    engine_extra: tuple[tuple[str, str], ...] = ()
    text_layer: str = "ignore"  # as `run --text-layer`: "ignore" OCRs every page, "auto" uses real text layers
    cjk: bool | None = None  # None: decide per page from the reference's share of CJK characters

    @property
    def reference_kind(self) -> str:
        return "text_layer" if self.against_text_layer else "ground_truth"


@dataclass
class PageEval:
    source: str  # input name relative to its input folder
    page: int  # 1-based; 0 for a document scored as a whole against one transcription
    status: str  # "scored" | "skipped" | "failed"
    reason: str = ""  # skip reason (closed set above) or the failure message
    score: TextScore | None = None
    reference: str = ""  # the GT file, or "text layer"
    seconds: float = 0.0  # render + OCR time
    warnings: list[str] = field(default_factory=list)


@dataclass
class DocumentEval:
    source: str
    path: Path
    pages: list[PageEval] = field(default_factory=list)
    error: str = ""  # the document could not be opened

    @property
    def counts(self) -> Counts:
        total = Counts()
        for page in self.pages:
            if page.score is not None:
                total = total + page.score.counts
        return total

    @property
    def scored(self) -> int:
        return sum(1 for p in self.pages if p.status == "scored")


@dataclass
class EvalResult:
    options: EvalOptions
    engine_name: str
    documents: list[DocumentEval]
    seconds: float = 0.0

    def all_pages(self) -> Iterable[PageEval]:
        for doc in self.documents:
            yield from doc.pages

    @property
    def counts(self) -> Counts:
        total = Counts()
        for doc in self.documents:
            total = total + doc.counts
        return total

    def status_counts(self) -> Counter[str]:
        return Counter(p.status for p in self.all_pages())

    def skip_reasons(self) -> Counter[str]:
        return Counter(p.reason for p in self.all_pages() if p.status == "skipped")

    def failed_documents(self) -> list[DocumentEval]:
        return [d for d in self.documents if d.error]

    def worst_pages(self, count: int) -> list[PageEval]:
        scored = [p for p in self.all_pages() if p.score is not None]
        scored.sort(key=lambda p: (-p.score.cer, p.source, p.page))  # type: ignore[union-attr]
        return scored[:count]


PageCallback = Callable[[PageEval], None]
EngineFactory = Callable[[str, EngineOptions], Engine]


def evaluate(inputs: list[InputFile], options: EvalOptions, create_engine: EngineFactory,
             on_page: PageCallback | None = None) -> EvalResult:
    """Score every selected page of every input. A bad document or page is recorded and
    the evaluation goes on, as in `run`."""
    started = time.perf_counter()
    engine = _engine(options, create_engine)
    finder = GroundTruthFinder(options.gt_dir)
    documents = [
        _evaluate_document(item, options, engine, finder, on_page or (lambda _: None))
        for item in inputs
    ]
    name = engine.name if engine is not None else TEXT_LAYER_ENGINE
    return EvalResult(options, name, documents, time.perf_counter() - started)


def _engine(options: EvalOptions, create_engine: EngineFactory) -> Engine | None:
    if options.engine == TEXT_LAYER_ENGINE:
        return None
    engine_options = EngineOptions(threads=options.threads, device=options.device,
                                   model_dir=options.model_dir, model=options.model, extra=options.engine_extra)
    return create_engine(options.engine, engine_options)


def _evaluate_document(item: InputFile, options: EvalOptions, engine: Engine | None,
                       finder: GroundTruthFinder, on_page: PageCallback) -> DocumentEval:
    doc = DocumentEval(item.relname, item.path)
    try:
        source = open_source(item.path, options.passwords)
    except SourceError as exc:
        doc.error = f"{exc.code.value}: {exc.message}"
        return doc
    try:
        numbers = options.pages.select(source.page_count)
        gt = None if options.against_text_layer else finder.find(item.path, item.relname,
                                                                 source.page_count)
        if gt is not None and not gt.pages and gt.document is not None:
            doc.pages.append(_whole_document(item, source, numbers, gt.document, options, engine))
            on_page(doc.pages[-1])
            return doc
        for number in numbers:
            page = _evaluate_page(item, source, number, gt, options, engine)
            doc.pages.append(page)
            on_page(page)
    finally:
        source.close()
    return doc


def _evaluate_page(item: InputFile, source: DocumentSource, number: int,
                   gt: GroundTruthFiles | None, options: EvalOptions,
                   engine: Engine | None) -> PageEval:
    page = PageEval(item.relname, number, "skipped")
    gt_path = gt.pages.get(number) if gt is not None else None
    if gt is not None and gt_path is None:
        page.reason = SKIP_NO_GROUND_TRUTH
        return page
    started = time.perf_counter()
    try:
        reference, hypothesis, page.warnings = _page_texts(source, number, gt_path, options, engine)
    except _Skip as skip:
        page.reason = skip.reason
        return page
    except SourceError as exc:
        return PageEval(item.relname, number, "failed", f"{exc.code.value}: {exc.message}")
    except Exception as exc:  # an engine failure must not stop the evaluation
        return PageEval(item.relname, number, "failed", f"engine_failed: {exc}")
    page.seconds = time.perf_counter() - started
    page.reference = str(gt_path) if gt_path is not None else "text layer"
    return _scored(page, reference, hypothesis, options)


def _whole_document(item: InputFile, source: DocumentSource, numbers: list[int], gt_path: Path,
                    options: EvalOptions, engine: Engine | None) -> PageEval:
    page = PageEval(item.relname, 0, "skipped", reference=str(gt_path))
    if len(numbers) != source.page_count:
        page.reason = SKIP_PARTIAL_DOCUMENT
        return page
    started = time.perf_counter()
    texts: list[str] = []
    try:
        for number in numbers:
            texts.append(_hypothesis(source, number, options, engine, page.warnings))
    except SourceError as exc:
        return PageEval(item.relname, 0, "failed", f"{exc.code.value}: {exc.message}")
    except Exception as exc:
        return PageEval(item.relname, 0, "failed", f"engine_failed: {exc}")
    page.seconds = time.perf_counter() - started
    return _scored(page, read_ground_truth(gt_path), "\n".join(texts), options)


def _scored(page: PageEval, reference: str, hypothesis: str, options: EvalOptions) -> PageEval:
    if non_space_length(reference) < options.min_chars:
        page.reason = SKIP_LITTLE_TEXT
        return page
    page.status, page.reason = "scored", ""
    page.score = score_text(reference, hypothesis, options.cjk)
    return page


class _Skip(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _page_texts(source: DocumentSource, number: int, gt_path: Path | None, options: EvalOptions,
                engine: Engine | None) -> tuple[str, str, list[str]]:
    """(reference, hypothesis, warnings) for one page."""
    if gt_path is not None:
        reference = read_ground_truth(gt_path)
        if non_space_length(reference) < options.min_chars:
            raise _Skip(SKIP_LITTLE_TEXT)  # known before spending an OCR on it
        warnings: list[str] = []
        return reference, _hypothesis(source, number, options, engine, warnings), warnings
    rendered = source.render(number, RenderOptions(dpi=options.dpi, max_pixels=options.max_pixels,
                                                   want_image=True, want_text_layer=True))
    layer = rendered.text_layer
    if layer is None:
        raise _Skip(SKIP_NO_TEXT_LAYER)
    if layer.nonspace_chars < options.min_chars:
        raise _Skip(SKIP_NO_TEXT_LAYER if layer.nonspace_chars == 0 else SKIP_LITTLE_TEXT)
    if layer.bad_chars > MAX_BAD_GLYPH_SHARE * layer.nonspace_chars:
        raise _Skip(SKIP_BAD_TEXT_LAYER)
    reference = _layer_text(layer)
    assert engine is not None  # the CLI refuses --against-text-layer with the textlayer engine
    return reference, engine.ocr(rendered.image).text, list(rendered.warnings)


def _hypothesis(source: DocumentSource, number: int, options: EvalOptions, engine: Engine | None,
                warnings: list[str]) -> str:
    """The page's text as `run` would produce it with the same engine and --text-layer mode."""
    if engine is None or (options.text_layer == "auto" and source.kind == "pdf"):
        probe = source.render(number, RenderOptions(dpi=options.dpi, max_pixels=options.max_pixels,
                                                    want_image=False, want_text_layer=True))
        layer = probe.text_layer
        if engine is None or (layer is not None and layer.is_real):
            warnings.extend(probe.warnings)
            return _layer_text(layer)
    rendered = source.render(number, RenderOptions(dpi=options.dpi, max_pixels=options.max_pixels))
    warnings.extend(rendered.warnings)
    return engine.ocr(rendered.image).text


def _layer_text(layer: TextLayer | None) -> str:
    return "\n".join(line.text for line in layer.lines) if layer is not None else ""
