"""Pre-layout lines kept on disk, so a change of layout rules is measured without a new OCR pass.

With PAGERUNNER_LAYOUT_LINES=<folder> set, an engine that supports it (ppocr) stores the lines
it recognised on each page image (with the upright page's size and rotation) under a key made of
the image's pixels and the engine's settings; the next time it sees the same pixels with the
same settings it reads them back and runs only the cheap annotators (bullets, leaders, figures)
and the layout stage.
Any benchmark or `pagerunner eval` run then replays in a fraction of the time. A development
tool: unset, nothing is read or written. With PAGERUNNER_LAYOUT_LINES_ONLY=1 as well, a page
not recorded there raises instead of being recognised (a replay that must not OCR).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from model_cache.layout.lines import LayoutLine
from outputs.model import Word

ENV = "PAGERUNNER_LAYOUT_LINES"
ONLY_ENV = "PAGERUNNER_LAYOUT_LINES_ONLY"


@dataclass
class PageLines:
    """A page's recognised lines, before the annotators and the layout stage."""
    lines: list[LayoutLine]
    width: int
    height: int
    rotation: int = 0


def page_key(rgb: np.ndarray, settings: str) -> str:
    digest = hashlib.sha256(f"{rgb.shape}|{settings}|".encode())
    digest.update(np.ascontiguousarray(rgb).tobytes())
    return digest.hexdigest()[:32]


def cached(rgb: np.ndarray, settings: str, read: Callable[[], PageLines]) -> PageLines:
    """`read()`'s page lines, through the folder named by PAGERUNNER_LAYOUT_LINES if set."""
    folder = os.environ.get(ENV)
    if not folder:
        return read()
    path = Path(folder) / f"{page_key(rgb, settings)}.json"
    if path.is_file():
        return _decode(json.loads(path.read_text(encoding="utf-8")))
    if os.environ.get(ONLY_ENV):
        raise LookupError(f"{ONLY_ENV} is set and this page's lines are not in {folder} ({path.name})")
    page = read()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(asdict(page), ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    return page


def _decode(data: dict) -> PageLines:
    lines = []
    for ld in data["lines"]:
        words = [Word(**w) for w in ld["words"]] if ld.get("words") is not None else None
        lines.append(LayoutLine(**{**ld, "words": words}))
    return PageLines(lines, int(data["width"]), int(data["height"]), int(data.get("rotation", 0)))
