"""The `ppocr` engine: PP-OCRv5 mobile (DB detection, PP-LCNet orientation, CTC
recognition) on ncnn, with page orientation; bullets, dot leaders and figures found in the
pixels are handed to the shared layout stage (model_cache/layout) as typed annotations.

Settings through EngineOptions.extra (all optional):
  det_limit_side (1600), det_thresh (0.3), det_box_thresh (0.6), det_unclip_ratio (1.5),
  rec_min_score (0.5: lines recognised with less confidence are dropped),
  rec_squeeze (1.0: horizontal scale of line crops; recognition time is linear in it),
  orientation ("auto" | "off"), cls_vote_lines (8).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from PIL import Image

from model_cache.engine import EngineError, EngineOptions
from model_cache.layout import from_line, layout_page
from model_cache.layout.replay import PageLines, cached
from model_cache.ppocr.assets import MODEL_NAME, ModelSet, load_model_set
from model_cache.ppocr.bullets import with_bullets
from model_cache.ppocr.detection import DetParams, TextBox, detect
from model_cache.ppocr.figures import figure_regions
from model_cache.ppocr.leaders import with_leaders
from model_cache.ppocr.orientation import (OrientParams, rotate_boxes, rotate_image,
                                           upside_down, vertical_share)
from model_cache.ppocr.recognition import (RecParams, RecResult, load_dictionary, recognize,
                                           rectify, softmax_input)
from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions
from model_cache.ppocr.spacing import verify_spaces
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


OPTION_NAMES = ("det_limit_side", "det_thresh", "det_box_thresh", "det_unclip_ratio", "rec_min_score",
                "rec_squeeze", "orientation", "cls_vote_lines")


def params_from(options: EngineOptions) -> PipelineParams:
    unknown = sorted({key for key, _ in options.extra} - set(OPTION_NAMES))
    if unknown:  # a mistyped setting must not be silently ignored over a night's run
        raise EngineError(f"ppocr has no option {', '.join(unknown)} (options: {', '.join(OPTION_NAMES)})")

    def num(key: str, default: float) -> float:
        value = options.get(key)
        try:
            return float(value) if value is not None else default
        except ValueError:
            raise EngineError(f"ppocr option {key}={value!r} is not a number") from None

    det = DetParams(limit_side=int(num("det_limit_side", DetParams.limit_side)),
                    thresh=num("det_thresh", DetParams.thresh),
                    box_thresh=num("det_box_thresh", DetParams.box_thresh),
                    unclip_ratio=num("det_unclip_ratio", DetParams.unclip_ratio))
    orient = OrientParams(vote_lines=int(num("cls_vote_lines", OrientParams.vote_lines)))
    mode = (options.get("orientation") or "auto").lower()
    if mode not in ("auto", "off"):
        raise EngineError(f"ppocr option orientation={mode!r}: use 'auto' or 'off'")
    rec = RecParams(squeeze=num("rec_squeeze", RecParams.squeeze))
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


class PPOCREngine:
    name = MODEL_NAME

    def __init__(self, options: EngineOptions, models: ModelSet | None = None):
        self.options = options
        self.params = params_from(options)
        self.models = models or load_model_set(options.model_dir)
        if options.device not in ("cpu", "gpu"):
            raise EngineError(f"unknown device '{options.device}' (cpu or gpu)")
        runtime = RuntimeOptions(threads=options.threads, gpu=options.device == "gpu")
        # Direct convolutions: the detector's peak memory halves, and the recogniser's 48 px
        # high crops run as fast or faster (measured: 20.7 vs 19.3 kpx/s on 2 threads).
        direct = RuntimeOptions(runtime.threads, runtime.gpu, direct_conv=True)
        self.det = NcnnNet(self.models.det, direct)
        self.rec = NcnnNet(self.models.rec, direct)
        self.cls = NcnnNet(self.models.cls, runtime)
        self.dictionary = load_dictionary(self.models.dictionary)
        self.rec_logits = softmax_input(self.models.rec.param, self.models.rec.output)

    def ocr(self, image: Image.Image) -> PageResult:
        timings: dict[str, float] = {}
        start = time.perf_counter()
        rgb = to_rgb(image)
        page = cached(rgb, repr(self.params), lambda: self._page_lines(rgb, timings))
        mark = time.perf_counter()
        upright = rotate_image(rgb, page.rotation)
        lines = with_leaders(upright, with_bullets(upright, page.lines))
        figures = figure_regions(upright, lines)
        timings["annotate"] = time.perf_counter() - mark
        mark = time.perf_counter()
        blocks = layout_page(lines, page.width, page.height, figures=figures)
        timings["layout"] = time.perf_counter() - mark
        timings["total"] = time.perf_counter() - start
        return PageResult.from_blocks(blocks, width=page.width, height=page.height,
                                      engine=self.name, rotation=page.rotation, timings=timings)

    def _page_lines(self, rgb: np.ndarray, timings: dict[str, float]) -> PageLines:
        """The recognised lines of the upright page (what PAGERUNNER_LAYOUT_LINES keeps)."""
        start = time.perf_counter()
        boxes = detect(self.det, rgb, self.params.det)
        self.det.release()  # the detector's buffers are the biggest: free them before rec
        timings["detect"] = time.perf_counter() - start
        rgb, boxes, rotation = self._orient(rgb, boxes, timings)
        mark = time.perf_counter()
        lines = self._recognize(rgb, boxes)
        timings["recognize"] = time.perf_counter() - mark
        self.rec.release()
        self.cls.release()
        return PageLines([from_line(line) for line in lines], rgb.shape[1], rgb.shape[0], rotation)

    def _orient(self, rgb: np.ndarray, boxes: list[TextBox],
                timings: dict[str, float]) -> tuple[np.ndarray, list[TextBox], int]:
        mark = time.perf_counter()
        rotation = 0
        if self.params.orientation and boxes:
            if vertical_share(boxes, self.params.orient) > self.params.orient.vertical_share:
                # Detect again on the turned page: DB finds sideways lines only in pieces.
                rgb, rotation = rotate_image(rgb, 90), 90
                boxes = detect(self.det, rgb, self.params.det)
                self.det.release()
            if upside_down(self.cls, rgb, boxes, self.params.orient):
                boxes = rotate_boxes(boxes, 180, rgb.shape[1], rgb.shape[0])
                rgb, rotation = rotate_image(rgb, 180), (rotation + 180) % 360
        timings["orient"] = time.perf_counter() - mark
        return rgb, boxes, rotation

    def _recognize(self, rgb: np.ndarray, boxes: list[TextBox]) -> list[Line]:
        lines = []
        for box in boxes:
            result = self._read(rgb, box)
            if result.text and result.conf >= self.params.rec_min_score:
                lines.append(Line(result.text, result.conf, box.quad.tolist()))
        return lines

    def _read(self, rgb: np.ndarray, box: TextBox) -> RecResult:
        crop = rectify(rgb, box.quad, self.params.rec)
        result = recognize(self.rec, crop, self.dictionary, self.params.rec, self.rec_logits)
        if self.params.orientation and result.conf < self.params.retry_flip_below:
            flipped = recognize(self.rec, np.ascontiguousarray(crop[::-1, ::-1]), self.dictionary,
                                self.params.rec, self.rec_logits)
            if flipped.conf > result.conf + 0.2:
                result, crop = flipped, np.ascontiguousarray(crop[::-1, ::-1])
        if self.params.verify_spaces:
            result.text = verify_spaces(result, crop, max(crop.shape[1], self.params.rec.min_width))
        return result


def create_engine(options: EngineOptions) -> PPOCREngine:
    return PPOCREngine(options)
