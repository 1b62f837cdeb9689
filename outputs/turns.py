"""Quarter turns of a page image as affine maps: the one rule for /Rotate and engine rotation."""

from __future__ import annotations

import numpy as np

Matrix = np.ndarray  # 3x3 affine, column vectors: [x', y', 1] = M @ [x, y, 1]


def quarter_turn(k: int, width: float, height: float) -> Matrix:
    """Pixels of a width x height image -> pixels of the image turned clockwise k*90 degrees."""
    k %= 4
    if k == 1:
        return np.array([[0, -1, height], [1, 0, 0], [0, 0, 1]], float)
    if k == 2:
        return np.array([[-1, 0, width], [0, -1, height], [0, 0, 1]], float)
    if k == 3:
        return np.array([[0, 1, 0], [-1, 0, width], [0, 0, 1]], float)
    return np.eye(3)
