"""Line crops: a detected quadrilateral warped to an upright crop as high as the recogniser's
input (OpenCV's perspective warp; a vertical line is turned to read top to bottom)."""

from __future__ import annotations

import cv2
import numpy as np

from model_cache.ppocr.recognition import RecParams


def quad_size(quad: np.ndarray) -> tuple[float, float]:
    width = max(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[3]))
    height = max(np.linalg.norm(quad[3] - quad[0]), np.linalg.norm(quad[2] - quad[1]))
    return float(width), float(height)


def stands_upright(quad: np.ndarray, ratio: float) -> bool:
    """Is the quadrilateral at least `ratio` times as tall as wide (a line set vertically)?"""
    width, height = quad_size(quad)
    return max(height, 1.0) / max(width, 1.0) >= ratio


def rectify(rgb: np.ndarray, quad: np.ndarray, params: RecParams) -> np.ndarray:
    """Perspective-warp the quadrilateral to an upright crop params.height high (uint8 RGB),
    softened by `params.blur`."""
    width, height = quad_size(quad)
    width, height = max(width, 1.0), max(height, 1.0)
    vertical = height / width >= params.vertical_ratio
    src = quad if not vertical else quad[[1, 2, 3, 0]]  # read a vertical line top to bottom
    if vertical:
        width, height = height, width
    out_h = params.height
    out_w = int(min(params.max_width, max(1, round(width * out_h / height * params.squeeze))))
    if height > 2 * out_h:  # strong downscale: warp at full size, then area-average
        full = _warp(rgb, src, int(round(width)), int(round(height)), cv2.INTER_LINEAR)
        crop = cv2.resize(full, (out_w, out_h), interpolation=cv2.INTER_AREA)
    else:
        crop = _warp(rgb, src, out_w, out_h, cv2.INTER_LINEAR)
    return cv2.GaussianBlur(crop, (0, 0), params.blur) if params.blur > 0 else crop


def _warp(rgb: np.ndarray, src: np.ndarray, w: int, h: int, interp: int) -> np.ndarray:
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(src.astype(np.float32), dst)
    return cv2.warpPerspective(rgb, matrix, (w, h), flags=interp, borderMode=cv2.BORDER_REPLICATE)
