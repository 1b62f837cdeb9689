"""The `ppocr` engine: a shipped PP-OCR model (EngineOptions.model: ppocr-v5-mobile or
ppocr-v6-tiny; DB detection, PP-LCNet orientation, CTC recognition) on ncnn, with page
orientation; bullets, dot leaders and figures found in the pixels are handed to the shared
layout stage (model_cache/layout) as typed annotations.

Settings through EngineOptions.extra (all optional; the model's manifest "defaults" come
next, then the values in brackets):
  det_limit_side (1600), det_thresh (0.3), det_box_thresh (0.6), det_fill_thresh (0.9: a region
  under det_box_thresh is kept when its own outline is at least this full), det_unclip_ratio (1.5),
  det_figure_detail ("on" | "off": figures in a page the detector read shrunk are detected
  again from the page at full size, figure_detail.py),
  rec_min_score (0.5: lines recognised with less confidence are dropped),
  rec_squeeze (1.0: horizontal scale of line crops; recognition time is linear in it),
  rec_blur (0.6: Gaussian sigma, in crop pixels, softening each line crop; 0 = off),
  orientation ("auto" | "off"), cls_vote_lines (8),
  rec_batch ("auto" | "on" | "off": line crops of all pages of an ocr_many call packed into
  strips, batch_rec.py; auto = on for a GPU, off on a CPU: on a quiet 2-core machine strips
  were no faster for either model, and took more memory),
  rec_strip_steps (time steps per strip: 512 on a CPU, 2048 on a GPU),
  det_precision ("fp32" | "fp16": the detector's storage and arithmetic on a GPU; fp32 gives
  the CPU's lines, fp16 moved 40 of 2144 dense lines by a character or two),
  gpu_streams (2: concurrent net calls in a GPU device owner, service.py),
  gpu_joint ("on" | "off": a GPU owner loads its detector and strip recogniser as one ncnn net,
  so each shader is compiled once (joint_net.py); off = two nets),
  rec_precision ("fp32" | "fp16": the strip recogniser on a GPU; fp16 returns its class index
  in two parts, each exact in fp16, batch_graph._top1_tail_fp16),
  conv ("direct" | "gemm": ncnn's convolution kernels for the detector and recogniser; direct
  everywhere (measured in docs/benchmarks.md), gemm = its im2col-gemm and winograd kernels),
  rec_parallel ("auto" | "crops" | "layers": on a CPU without strips, crops = one ncnn thread
  per line crop on `threads` Python threads (crop_threads.py), layers = ncnn's OpenMP inside
  each layer; auto = layers: on this shared 2-core machine neither won clearly, see
  docs/benchmarks.md "CPU recogniser speed"),
  rec_head ("auto" | "ncnn": on a CPU one crop at a time, auto runs the recogniser's class head
  in numpy from the head's weights over all of a page's crops, class_head.py: ~1.8x ncnn's per page here;
  ncnn = the head inside the net),
  det_turns ("on" | "off": with several CPU workers in a run, one detector at a time in each pair
  of workers, each returning its freed feature maps to the system before the next turn
  (model_cache/turns.py; the runner gives each pair its lock file);
  the model's manifest says "on" where two of its detectors at once would pass 1 GB: PP-OCRv5).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from PIL import Image

from model_cache.cpu_threads import limit_library_threads
from model_cache.engine import EngineError, EngineOptions
from model_cache.heap import release_free_memory
from model_cache.layout import LayoutLine, from_line, layout_page
from model_cache.layout.lines import reads_as_page_numbers
from model_cache.layout.replay import ENV as LINE_CACHE_ENV
from model_cache.layout.replay import PageLines, cached
from model_cache.ppocr.assets import MODEL_NAME, ModelSet, load_model_set
from model_cache.ppocr.bullets import with_bullets
from model_cache.ppocr.detection import DetParams, TextBox, detect
from model_cache.ppocr.figure_detail import with_figure_detail
from model_cache.ppocr.figures import non_text
from model_cache.ppocr.leaders import Box, with_leaders
from model_cache.ppocr.orientation import (OrientParams, rotate_boxes, rotate_image,
                                           upside_down, vertical_share)
from model_cache.ppocr.crops import rectify, stands_upright
from model_cache.ppocr.recognition import (RecParams, RecResult, class_head_input, crop_to_mat, ctc_decode,
                                           ctc_decode_top1, decode_features, load_dictionary, recognize,
                                           softmax_input)
from model_cache.ppocr import nets
from model_cache.ppocr.skew import text_skew
from model_cache.ppocr.spacing import gutter_spaces, ink_columns, verify_spaces
from model_cache.ppocr.stray_glyphs import without_stray_glyphs
from model_cache.ppocr.strokes import with_strokes
from model_cache.ppocr.words import recognised_line
from model_cache.turns import Turns
from outputs.model import Line, PageResult


@dataclass(frozen=True)
class PipelineParams:
    det: DetParams
    rec: RecParams
    orient: OrientParams
    rec_min_score: float = 0.5
    orientation: bool = True
    retry_flip_below: float = 0.6  # a line this unsure is also read upside down; the better wins
    verify_spaces: bool = True  # drop recognised spaces that have no gap under them (spacing.py)
    gutter_spaces: bool = True  # add a space at a gutter-wide blank inside a word (spacing.py)


# The recogniser reads a softened crop better than a razor-sharp one: on born-digital pages a
# sharp backslash at a word's start was read as "i" (the corpus's tune half, docs/benchmarks.md
# "Built: line crops softened before recognition"); rendered glyphs' edges are sharper than
# those of the scans and photos such nets learn from.
REC_BLUR = 0.6
# A line read both ways (_read): a box at least this many times as tall as wide. A single tall glyph
# is read as it was: turned, "(" can read as ")".
VERTICAL_LINE = 3.0

OPTION_NAMES = ("det_limit_side", "det_figure_detail", "det_thresh", "det_box_thresh", "det_fill_thresh", "det_unclip_ratio", "rec_min_score",
                "rec_squeeze", "orientation", "cls_vote_lines", "rec_batch", "rec_strip_steps", "det_precision", "conv",
                "gpu_streams", "rec_precision", "rec_parallel", "det_turns", "rec_blur",
                "rec_head", "gpu_joint")


def params_from(options: EngineOptions, defaults: dict[str, Any] | None = None,
                rec_net: dict[str, Any] | None = None) -> PipelineParams:
    """Settings from `options`, else the model's manifest `defaults`, else the built-in ones;
    the recogniser's input conventions (height, min/max width) from its manifest entry."""
    defaults = defaults or {}
    unknown = sorted({key for key, _ in options.extra} - set(OPTION_NAMES))
    if unknown:  # a mistyped setting must not be silently ignored over a night's run
        raise EngineError(f"ppocr has no option {', '.join(unknown)} (options: {', '.join(OPTION_NAMES)})")

    def num(key: str, default: float) -> float:
        value = options.get(key, defaults.get(key))
        try:
            return float(value) if value is not None else default
        except ValueError:
            raise EngineError(f"ppocr option {key}={value!r} is not a number") from None

    det = DetParams(limit_side=int(num("det_limit_side", DetParams.limit_side)),
                    thresh=num("det_thresh", DetParams.thresh),
                    box_thresh=num("det_box_thresh", DetParams.box_thresh),
                    fill_thresh=num("det_fill_thresh", DetParams.fill_thresh),
                    unclip_ratio=num("det_unclip_ratio", DetParams.unclip_ratio),
                    figure_detail=nets.switch(options, "det_figure_detail",
                                              defaults.get("det_figure_detail") or "on"))
    orient = OrientParams(vote_lines=int(num("cls_vote_lines", OrientParams.vote_lines)))
    mode = (options.get("orientation") or "auto").lower()
    if mode not in ("auto", "off"):
        raise EngineError(f"ppocr option orientation={mode!r}: use 'auto' or 'off'")
    rec_net = rec_net or {}
    rec = RecParams(height=int(rec_net.get("height", RecParams.height)),
                    min_width=int(rec_net.get("min_width", RecParams.min_width)),
                    max_width=int(rec_net.get("max_width", RecParams.max_width)),
                    squeeze=num("rec_squeeze", RecParams.squeeze), blur=num("rec_blur", REC_BLUR))
    return PipelineParams(det, rec, orient, num("rec_min_score", 0.5), mode == "auto")


def to_rgb(image: Image.Image) -> np.ndarray:
    """Any PIL mode -> contiguous uint8 RGB; transparency is composed over white."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, rgba)
    if image.mode == "I;16" or image.mode == "I":
        image = image.point(lambda v: v / 256).convert("L")
    return np.ascontiguousarray(np.asarray(image.convert("RGB"), dtype=np.uint8))


@dataclass
class _Page:
    """One page between detection and recognition."""
    rgb: np.ndarray
    boxes: list[TextBox]
    rotation: int


@dataclass
class _Read:
    """A line crop as recognised: the result, the crop the net saw, and whether it was turned."""
    result: RecResult
    crop: np.ndarray
    turned: bool = False


class PPOCREngine:
    name = MODEL_NAME

    def __init__(self, options: EngineOptions, models: ModelSet | None = None, recognizer: bool = True,
                 classifier: bool = True):
        """recognizer=False: no recogniser until load_recognizer() (a device owner serves
        detection while its recogniser's shaders are still being made). classifier=False: no
        orientation classifier (a device owner: its feeders run theirs)."""
        self.options = options
        self.models = models or load_model_set(options.model_dir, options.model)
        self.name = self.models.name  # the record's `engine` field names the model
        self.params = params_from(options, self.models.defaults, self.models.rec.meta)
        gpu, _ = nets.parse_device(options.device)  # an unknown device fails here, before any model loads
        self.dictionary = load_dictionary(self.models.dictionary)
        self.turns = Turns(options.turns if not gpu and _det_turns(options, self.models.defaults) else None)
        limit_library_threads(options.threads)  # a feeder too: its numpy and OpenCV steps share the cores
        if options.service:  # the nets live in a device owner process (service.py)
            self._remote_nets(options.service)
            return
        self.det = nets.detector(self.models, options)
        self.cls = nets.classifier(self.models, options) if classifier else None
        self.rec_logits = softmax_input(self.models.rec.param, self.models.rec.output)
        self.rec_head = class_head_input(self.models.rec.param, self.rec_logits)
        self.batch = self.crop_threads = self.rec = self.class_head = None
        if recognizer:
            self.load_recognizer()

    def load_recognizer(self) -> None:
        """Strips, crop threads or one crop at a time, as the options say."""
        rec = nets.recognizer(self.models, self.options)
        self.rec, self.batch, self.crop_threads = rec.net, rec.batch, rec.crop_threads
        self.class_head = rec.class_head

    def _remote_nets(self, address: str) -> None:
        from model_cache.ppocr.remote import RemoteNet, RemoteStrips, ServiceClient

        client = ServiceClient(address)
        self.det = RemoteNet(client, "det")
        # The page's orientation vote (a few small crops) on this feeder's CPU: it leaves the
        # owner's GPU to detection and recognition, saves a round trip and a net's shaders at
        # the owner's start, and votes in fp32 as a CPU run does.
        self.cls = nets.classifier(self.models, replace(self.options, device="cpu", service=None))
        self.batch = RemoteStrips(client)
        self.crop_threads = None
        self.rec = self.batch.net
        self.rec_logits = self.rec_head = self.class_head = None

    def ocr(self, image: Image.Image) -> PageResult:
        return self.ocr_many([image])[0]

    def ocr_many(self, images: list[Image.Image]) -> list[PageResult]:
        """Detect each page, recognise the line crops of all pages together, then annotate and
        lay out each page."""
        rgbs = [to_rgb(image) for image in images]
        timings: list[dict[str, float]] = [{} for _ in rgbs]
        if os.environ.get(LINE_CACHE_ENV):  # the layout benchmarks' line cache works page by page
            settings = repr(self.params)
            pages = [cached(rgb, settings, lambda rgb=rgb, t=t: self._page_lines([rgb], [t])[0])
                     for rgb, t in zip(rgbs, timings)]
        else:
            pages = self._page_lines(rgbs, timings)
        return [self._finish(rgb, page, t) for rgb, page, t in zip(rgbs, pages, timings)]

    def device_stats(self) -> dict[str, float]:
        """Extract calls, submissions and bytes moved so far, all nets together."""
        nets = (self.det, self.rec, self.cls)
        return {"calls": sum(n.stats.calls for n in nets),
                "submissions": sum(n.stats.submissions for n in nets),
                "downloaded": sum(n.stats.downloaded for n in nets),
                "uploaded": sum(n.stats.uploaded for n in nets),
                "moved": sum(n.stats.moved for n in nets),
                "rec_net_seconds": self.rec.stats.seconds}

    def _page_lines(self, rgbs: list[np.ndarray], timings: list[dict[str, float]]) -> list[PageLines]:
        """The recognised lines of each upright page (what PAGERUNNER_LAYOUT_LINES keeps)."""
        before = self.device_stats()
        pages = [self._detect(rgb, t) for rgb, t in zip(rgbs, timings)]
        mark = time.perf_counter()
        lines = self._recognize_pages(pages)
        share = (time.perf_counter() - mark) / max(1, sum(len(page.boxes) for page in pages))
        after = self.device_stats()
        self.rec.release()
        self.cls.release()
        out = []
        for page, page_lines, t in zip(pages, lines, timings):
            t["recognize"] = share * len(page.boxes)
            # A batch's net calls, shared out evenly (fractions: they are per-page means).
            t["submissions"] = (after["submissions"] - before["submissions"]) / len(pages)
            t["downloaded_bytes"] = (after["downloaded"] - before["downloaded"]) / len(pages)
            t["rec_net"] = (after["rec_net_seconds"] - before["rec_net_seconds"]) / len(pages)
            t["net_calls"] = (after["calls"] - before["calls"]) / len(pages)
            if after["moved"]:  # bytes to and from a device owner (counters, not seconds)
                t["ipc_bytes"] = (after["moved"] - before["moved"]) / len(pages)
            out.append(PageLines([from_line(line) for line in page_lines], page.rgb.shape[1],
                                 page.rgb.shape[0], page.rotation))
        return out

    def _detect(self, rgb: np.ndarray, timings: dict[str, float]) -> _Page:
        start, waited = time.perf_counter(), self.turns.waited
        boxes = self._detect_boxes(rgb)
        timings["detect"] = time.perf_counter() - start
        if self.turns.path:  # part of "detect": waiting for the other workers' detectors
            timings["detect_wait"] = self.turns.waited - waited
        rgb, boxes, rotation = self._orient(rgb, boxes, timings)
        if self.params.det.figure_detail:
            mark = time.perf_counter()
            boxes = with_figure_detail(rgb, boxes, self.params.det, self._detect_boxes)
            timings["detect"] += time.perf_counter() - mark
        return _Page(rgb, boxes, rotation)

    def _detect_boxes(self, rgb: np.ndarray) -> list[TextBox]:
        with self.turns.taken():
            boxes = detect(self.det, rgb, self.params.det)
            self.det.release()  # the detector's buffers are the biggest: free them before rec
            if self.turns.path:  # and give them back to the system before the next worker's turn
                release_free_memory()
        return boxes

    def _finish(self, rgb: np.ndarray, page: PageLines, timings: dict[str, float]) -> PageResult:
        mark = time.perf_counter()
        upright = rotate_image(rgb, page.rotation)
        lines = with_leaders(upright, with_bullets(upright, without_stray_glyphs(page.lines)),
                             lambda boxes: self._read_boxes(upright, boxes))
        lines = with_strokes(upright, lines)
        figures, rules = non_text(upright, lines)
        skew = text_skew(upright, lines)
        timings["annotate"] = time.perf_counter() - mark
        mark = time.perf_counter()
        blocks = layout_page(lines, page.width, page.height, figures=figures, rules=rules, skew=skew)
        timings["layout"] = time.perf_counter() - mark
        timings["total"] = sum(timings.get(k, 0.0) for k in ("detect", "orient", "recognize", "annotate", "layout"))
        return PageResult.from_blocks(blocks, width=page.width, height=page.height,
                                      engine=self.name, rotation=page.rotation, timings=timings)

    def _read_boxes(self, rgb: np.ndarray, boxes: list[Box]) -> list[LayoutLine]:
        """The page numbers read in boxes the detector did not find (where dot leaders end)."""
        quads = [np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32) for x0, y0, x1, y1 in boxes]
        reads = self._read([rectify(rgb, quad, self.params.rec) for quad in quads])
        found = [self._line(TextBox(quad, 1.0), read) for quad, read in zip(quads, reads)]
        return [from_line(line) for line in found
                if line.conf >= self.params.rec_min_score and reads_as_page_numbers(line.text)]

    def _orient(self, rgb: np.ndarray, boxes: list[TextBox],
                timings: dict[str, float]) -> tuple[np.ndarray, list[TextBox], int]:
        mark = time.perf_counter()
        rotation = 0
        if self.params.orientation and boxes:
            if vertical_share(boxes, self.params.orient) > self.params.orient.vertical_share:
                # Detect again on the turned page: DB finds sideways lines only in pieces.
                rgb, rotation = rotate_image(rgb, 90), 90
                boxes = self._detect_boxes(rgb)
            if upside_down(self.cls, rgb, boxes, self.params.orient):
                boxes = rotate_boxes(boxes, 180, rgb.shape[1], rgb.shape[0])
                rgb, rotation = rotate_image(rgb, 180), (rotation + 180) % 360
        timings["orient"] = time.perf_counter() - mark
        return rgb, boxes, rotation

    def _recognize_pages(self, pages: list[_Page]) -> list[list[Line]]:
        crops = [rectify(page.rgb, box.quad, self.params.rec) for page in pages for box in page.boxes]
        vertical = [stands_upright(box.quad, VERTICAL_LINE) for page in pages for box in page.boxes]
        reads = self._read(crops, vertical)
        lines: list[list[Line]] = []
        at = 0
        for page in pages:
            page_lines = []
            for box, read in zip(page.boxes, reads[at:at + len(page.boxes)]):
                line = self._line(box, read)
                if line.text and line.conf >= self.params.rec_min_score:
                    page_lines.append(line)
            lines.append(page_lines)
            at += len(page.boxes)
        return lines

    def _read(self, crops: list[np.ndarray], vertical: list[bool] | None = None) -> list[_Read]:
        """Recognise crops; an unsure line is also read upside down and the better wins. A line
        set vertically is always read both ways: turned to read top to bottom, or bottom to top
        (a chart's axis title), neither is the likelier, so the surer reading wins, if it reads
        as many characters (turned CJK glyphs read as a sure "《》" where "《少年歌行》" stood)."""
        reads = [_Read(result, crop) for result, crop in zip(self._rec_many(crops), crops)]
        if self.params.orientation:
            vertical = vertical or [False] * len(crops)
            unsure = [i for i, r in enumerate(reads) if r.result.conf < self.params.retry_flip_below or vertical[i]]
            flipped_crops = [np.ascontiguousarray(crops[i][::-1, ::-1]) for i in unsure]
            for i, crop, flipped in zip(unsure, flipped_crops, self._rec_many(flipped_crops)):
                read = reads[i].result
                better = (flipped.conf > read.conf and len(flipped.text) >= len(read.text) if vertical[i]
                          else flipped.conf > read.conf + 0.2)
                if better:
                    reads[i] = _Read(flipped, crop, turned=True)
        return reads

    def _line(self, box: TextBox, read: _Read) -> Line:
        input_width = max(read.crop.shape[1], self.params.rec.min_width)
        ink = ink_columns(read.crop)  # the spacing checks and the word boxes all read it
        if self.params.gutter_spaces:
            read.result = gutter_spaces(read.result, read.crop, input_width, ink=ink)
        if self.params.verify_spaces:
            read.result.text = verify_spaces(read.result, read.crop, input_width, ink=ink)
        return recognised_line(read.result, box.quad, read.crop, input_width,
                               self.params.rec.vertical_ratio, read.turned, ink=ink)

    def _rec_many(self, crops: list[np.ndarray]) -> list[RecResult]:
        if not crops:
            return []
        if self.crop_threads is not None:
            return self.crop_threads.map(
                crops, lambda crop: crop_to_mat(crop, self.params.rec),
                lambda out: ctc_decode(out.reshape(-1, out.shape[-1]), self.dictionary,
                                       logits=bool(self.rec_logits)), self.rec_logits)
        if self.batch is None:
            return self._rec_widest_first(crops)
        scores = self.batch.run(crops, self.params.rec)
        if self.batch.top1:
            return [ctc_decode_top1(s, self.dictionary) for s in scores]
        return [ctc_decode(s, self.dictionary, logits=True) for s in scores]

    def _rec_widest_first(self, crops: list[np.ndarray]) -> list[RecResult]:
        """One crop at a time, widest first: ncnn's pools reuse any free buffer at least as large
        as a request, so the widest crop's buffers serve every later one and the pools hold one
        crop's worth. In page order each wider crop added buffers of its own: on dense pages the pools
        peaked at 149-200 MiB in page order, 100-107 widest first (docs/benchmarks.md, stop 18).
        Each crop's result is its own: the order changes no text."""
        widest_first = sorted(range(len(crops)), key=lambda i: -crops[i].shape[1])
        if self.class_head is not None:  # the nets first, then numpy's head over all crops' steps
            features: list[np.ndarray] = [np.zeros(0)] * len(crops)
            for i in widest_first:
                features[i] = self.rec.run(crop_to_mat(crops[i], self.params.rec), self.class_head.features)
            return decode_features(features, self.class_head, self.dictionary)
        results: list[RecResult | None] = [None] * len(crops)
        for i in widest_first:
            results[i] = recognize(self.rec, crops[i], self.dictionary, self.params.rec, self.rec_logits,
                                   self.rec_head)
        return results  # type: ignore[return-value]


def create_engine(options: EngineOptions) -> PPOCREngine:
    return PPOCREngine(options)


def _det_turns(options: EngineOptions, defaults: dict[str, Any]) -> bool:
    """det_turns: the option, else the model manifest's default, else off."""
    return nets.switch(options, "det_turns", defaults.get("det_turns") or "off")
