"""Inputs shared by the HunyuanOCR tests on the tiny random model."""

from __future__ import annotations

import numpy as np
from PIL import Image

MAX_NEW = 48
SIZES = [(100, 160), (300, 120)]  # (height, width): landscape and tall portrait


def random_image(height: int, width: int) -> Image.Image:
    """Seeded noise of the given size: a different but repeatable image per size."""
    rng = np.random.RandomState(height * 7 + width)
    return Image.fromarray((rng.rand(height, width, 3) * 255).astype("uint8"))
