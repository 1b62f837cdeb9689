"""Figures detected again at the page's own resolution.

The detector reads a whole page shrunk to `DetParams.limit_side` (a 200 dpi A4 page at ~0.68x),
where body text and 5-pt print survive but a chart's tick labels (8-10 px high at 200 dpi, set
against the axis's ticks) and a screenshot's small UI text are missed or run together. Those sit
inside figures, which the page's ink shows before anything is recognised
(`figures.figure_regions`, from the boxes found so far). Each figure region is detected again from
a crop of the page at full size (a fraction of the page's pixels), and its boxes replace the first
pass's boxes they cover; a first-pass box the second pass has nothing for is kept. Boxes outside
figures, and so the body's reading order, are those of the first pass; second-pass boxes thicker
than two line heights are left out (large text needs no second look).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from model_cache.layout.geometry import Rect, centre_in
from model_cache.layout.lines import LayoutLine
from model_cache.ppocr.crops import quad_size
from model_cache.ppocr.detection import DetParams, TextBox, page_scale
from model_cache.ppocr.figures import figure_regions

# Only pages the detector shrank by more than this are worth a second look.
MAX_SCALE = 0.9
# Around a region, the crop takes this many median line heights more, so that DB sees the
# region's edge text with paper around it; crop boxes that touch the crop's edge are cut lines.
CROP_MARGIN = 1.0
# A first-pass box is replaced when second-pass boxes cover this share of its area.
COVERED = 0.3
# The second pass is for small print: its boxes thicker than this many median line heights are
# left out (large text was found by the first pass; at full size DB can box a patch of curves).
MAX_THICKNESS = 2.0


def regions_to_redetect(rgb: np.ndarray, boxes: list[TextBox], params: DetParams) -> list[Rect]:
    """The page's figure regions, if the detector read the page shrunk (else none)."""
    height, width = rgb.shape[:2]
    if not boxes or page_scale(width, height, params) > MAX_SCALE:
        return []
    lines = [LayoutLine("", box.score, [tuple(map(float, p)) for p in box.quad]) for box in boxes]
    return figure_regions(rgb, lines)


def with_figure_detail(rgb: np.ndarray, boxes: list[TextBox], params: DetParams,
                       detect_crop: Callable[[np.ndarray], list[TextBox]]) -> list[TextBox]:
    """`boxes` with each figure region's boxes found again at full size by `detect_crop`."""
    regions = regions_to_redetect(rgb, boxes, params)
    if not regions:
        return boxes
    line_height = float(np.median([_bounds(b)[3] - _bounds(b)[1] for b in boxes]))
    margin = CROP_MARGIN * line_height
    for region in regions:
        crop = _crop_rect(region, margin, rgb.shape[1], rgb.shape[0])
        x0, y0, x1, y1 = crop
        found = [box for box in detect_crop(np.ascontiguousarray(rgb[y0:y1, x0:x1]))
                 if min(quad_size(box.quad)) <= MAX_THICKNESS * line_height]
        for box in found:
            box.quad = box.quad + np.array([x0, y0], dtype=np.float32)
        boxes = _merged(boxes, found, region, crop, rgb.shape[1], rgb.shape[0])
    return boxes


def _crop_rect(region: Rect, margin: float, width: int, height: int) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = region
    return (max(0, int(x0 - margin)), max(0, int(y0 - margin)),
            min(width, int(np.ceil(x1 + margin))), min(height, int(np.ceil(y1 + margin))))


def _merged(first: list[TextBox], second: list[TextBox], region: Rect, crop: tuple[int, int, int, int],
            width: int, height: int) -> list[TextBox]:
    """The second pass's boxes centred in the region and whole in the crop replace the
    first-pass boxes they cover by `COVERED`; where they do not, the first-pass box stays and
    the second-pass pieces inside it go. A second-pass box that overlaps a line running out of
    the region goes too."""
    outside = [b for b in first if not centre_in(_bounds(b), region)]
    out_ids = {id(b) for b in outside}
    kept = [b for b in second
            if centre_in(_bounds(b), region) and not _cut_by_crop(b, crop, width, height)
            and not any(_share_covered(o, b) > 0 or _share_covered(b, o) > 0 for o in outside)]
    stay = [b for b in first if id(b) in out_ids or _covered(b, kept) < COVERED]
    inner = [b for b in stay if id(b) not in out_ids]
    kept = [k for k in kept if not any(_share_covered(k, b) >= 0.5 for b in inner)]
    return stay + kept


def _covered(box: TextBox, by: list[TextBox]) -> float:
    """How much of `box` the boxes `by` cover: one of them, or the span of those lying mostly
    inside it (a line the second pass parts into words, with blanks between them)."""
    pieces = [_bounds(b) for b in by if _share_covered(b, box) >= 0.5]
    single = max((_share_covered(box, b) for b in by), default=0.0)
    if not pieces:
        return single
    span = (min(p[0] for p in pieces), min(p[1] for p in pieces),
            max(p[2] for p in pieces), max(p[3] for p in pieces))
    return max(single, _rect_covered(_bounds(box), span))


def _bounds(box: TextBox) -> Rect:
    return (float(box.quad[:, 0].min()), float(box.quad[:, 1].min()),
            float(box.quad[:, 0].max()), float(box.quad[:, 1].max()))


def _cut_by_crop(box: TextBox, crop: tuple[int, int, int, int], width: int, height: int) -> bool:
    """The box touches a side of the crop that is not the page's own edge."""
    x0, y0, x1, y1 = _bounds(box)
    cx0, cy0, cx1, cy1 = crop
    return ((cx0 > 0 and x0 <= cx0 + 1) or (cy0 > 0 and y0 <= cy0 + 1)
            or (cx1 < width and x1 >= cx1 - 1) or (cy1 < height and y1 >= cy1 - 1))


def _share_covered(box: TextBox, by: TextBox) -> float:
    """The share of `box`'s bounding rectangle that `by`'s covers."""
    return _rect_covered(_bounds(box), _bounds(by))


def _rect_covered(a: Rect, b: Rect) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    area = max(1e-6, (a[2] - a[0]) * (a[3] - a[1]))
    return max(0.0, w) * max(0.0, h) / area
