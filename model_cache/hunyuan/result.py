"""Generated text -> PageResult. The VLM gives no boxes: every line gets the full-page box and
the page's mean token probability as its confidence."""

from __future__ import annotations

import math

from outputs.model import Block, Line, PageResult


def split_blocks(text: str, width: int, height: int, conf: float) -> list[Block]:
    box = [[0.0, 0.0], [float(width), 0.0], [float(width), float(height)], [0.0, float(height)]]
    blocks = []
    for chunk in text.replace("\r\n", "\n").split("\n\n"):
        lines = [Line(text=line, conf=conf, box=[list(p) for p in box])
                 for line in chunk.split("\n") if line.strip()]
        if lines:
            blocks.append(Block(lines=lines))
    return blocks


def mean_confidence(probs: list[float]) -> float:
    """Geometric mean of the chosen tokens' probabilities (1.0 for an empty output)."""
    if not probs:
        return 1.0
    return math.exp(sum(math.log(max(p, 1e-12)) for p in probs) / len(probs))


def page_result(text: str, probs: list[float], width: int, height: int, engine: str,
                timings: dict[str, float], warnings: list[str]) -> PageResult:
    blocks = split_blocks(text, width, height, mean_confidence(probs))
    return PageResult.from_blocks(blocks, width=width, height=height, engine=engine,
                                  timings=timings, warnings=warnings)
