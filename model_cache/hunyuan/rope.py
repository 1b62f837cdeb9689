"""HunyuanOCR's xdRoPE: four position axes (sequence, image column, image row, image index),
each owning a slice of the head's frequencies; cos/sin are computed here and fed to the graphs.

Variants (what the prefill of each layer sees):
  "1.5": every layer uses the 4-axis positions (transformers >= 5.13 behaviour).
  "1.0": layer 0 uses the 4-axis positions, layers 1.. plain sequence positions (the 1.0-era
         remote code read layer 0's cache length and fell back to 1-D RoPE after it).
Decoding is identical for both: every axis carries the absolute position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

VARIANTS = ("1.0", "1.5")


@dataclass
class Rope:
    head_dim: int
    base: float
    sections: list[int]

    def __post_init__(self) -> None:
        exponents = np.arange(0, self.head_dim, 2, dtype=np.float32) / np.float32(self.head_dim)
        self.inv_freq = (np.float32(1.0) / (np.float32(self.base) ** exponents)).astype(np.float32)

    def cos_sin(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """positions [axes, L] -> cos, sin [L, head_dim] (float32, full width)."""
        axes = len(self.sections)
        if positions.ndim == 1:
            positions = np.broadcast_to(positions, (axes, positions.shape[0]))
        freqs = positions.astype(np.float32)[..., None] * self.inv_freq  # [axes, L, hd/2]
        doubled = np.concatenate([freqs, freqs], axis=-1)  # [axes, L, hd]
        mixed = np.empty(doubled.shape[1:], dtype=np.float32)
        start = 0
        for i, section in enumerate(self.sections):
            stop = start + 2 * section
            mixed[:, start:stop] = doubled[i % axes, :, start:stop]
            start = stop
        return np.ascontiguousarray(np.cos(mixed)), np.ascontiguousarray(np.sin(mixed))


def prompt_positions(length: int, axes: int, image_spans: list[tuple[int, int, int]]) -> np.ndarray:
    """[axes, length] positions. image_spans: (first placeholder index, merged rows, merged cols);
    the span's first and last placeholders (begin/end vectors) keep sequence positions."""
    pos = np.tile(np.arange(length, dtype=np.int64), (axes, 1))
    for image_index, (start, rows, cols) in enumerate(image_spans):
        row, col = np.meshgrid(np.arange(rows), np.arange(cols + 1), indexing="ij")
        first = start + 1
        last = first + rows * (cols + 1)
        offset = axes - 3
        pos[offset, first:last] = col.reshape(-1)
        pos[offset + 1, first:last] = row.reshape(-1)
        pos[offset + 2, first:last] = image_index
    return pos


def position_delta(positions: np.ndarray) -> int:
    """Offset of decode positions from the token index (0 for one image in the usual prompt)."""
    return int(positions.max()) + 1 - positions.shape[1]
