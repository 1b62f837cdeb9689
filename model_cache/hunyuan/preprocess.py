"""Image -> flat patches, as HunyuanOCR's image processor does it (PIL backend):
smart resize to a multiple of 32, PIL bicubic, /255, CLIP normalisation, row-major 16x16 patches.
Also the learned 128x128 position grid resized to the patch grid (bilinear, align_corners=False)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PIL import Image


class ImageSizeError(ValueError):
    """The image cannot be fed to the model (e.g. aspect ratio beyond 200:1)."""


@dataclass
class Patches:
    values: np.ndarray  # [gh*gw, 3*16*16] float32, row-major over the patch grid
    grid_h: int
    grid_w: int
    resized: tuple[int, int]  # (width, height) fed to the model


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    if max(height, width) / min(height, width) > 200:
        raise ImageSizeError(f"aspect ratio {max(height, width) / min(height, width):.0f}:1 exceeds 200:1")
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def image_to_patches(image: Image.Image, patch: int, merge: int, min_pixels: int, max_pixels: int,
                     mean: list[float], std: list[float]) -> Patches:
    rgb = image.convert("RGB")
    height, width = smart_resize(rgb.height, rgb.width, patch * merge, min_pixels, max_pixels)
    if (width, height) != rgb.size:
        rgb = rgb.resize((width, height), Image.Resampling.BICUBIC)
    pixels = np.asarray(rgb, dtype=np.float32) / np.float32(255.0)
    pixels = (pixels - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    gh, gw = height // patch, width // patch
    chw = pixels.transpose(2, 0, 1)
    values = chw.reshape(3, gh, patch, gw, patch).transpose(1, 3, 0, 2, 4).reshape(gh * gw, -1)
    return Patches(np.ascontiguousarray(values, dtype=np.float32), gh, gw, (width, height))


def resize_position_grid(table: np.ndarray, edge: int, out_h: int, out_w: int) -> np.ndarray:
    """[edge*edge, C] learned grid -> [out_h*out_w, C], like torch bilinear align_corners=False."""
    grid = table.reshape(edge, edge, -1)
    rows = _linear_weights(edge, out_h)
    cols = _linear_weights(edge, out_w)
    tmp = _apply(grid, rows, axis=0)
    out = _apply(tmp, cols, axis=1)
    return np.ascontiguousarray(out.reshape(out_h * out_w, -1), dtype=np.float32)


def _linear_weights(size_in: int, size_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    scale = np.float32(size_in / size_out)
    src = (np.arange(size_out, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    src = np.maximum(src, np.float32(0.0))
    i0 = np.floor(src).astype(np.int64)
    i0 = np.minimum(i0, size_in - 1)
    i1 = np.minimum(i0 + 1, size_in - 1)
    frac = (src - i0).astype(np.float32)
    return i0, i1, frac


def _apply(grid: np.ndarray, weights, axis: int) -> np.ndarray:
    i0, i1, frac = weights
    a = np.take(grid, i0, axis=axis)
    b = np.take(grid, i1, axis=axis)
    shape = [1, 1, 1]
    shape[axis] = -1
    frac = frac.reshape(shape)
    return a * (np.float32(1.0) - frac) + b * frac
