"""The recogniser's shape probe (batch_rec.probe: 16 runs of the net on the CPU, ~0.7 s on a
fast host, more on a slow one) remembered on disk, so a run's start does not pay for it again.

The key is the net's .param text, the .bin's size, the probed blobs, the probe's widths and
ncnn's version: anything that could change a blob's shape. A cache that cannot be read or
written is skipped (the probe runs, as without a cache). PAGERUNNER_CACHE (a folder) moves it;
PAGERUNNER_CACHE=off turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Callable

import ncnn

from model_cache.ppocr.assets import NetFiles
from model_cache.ppocr.batch_graph import Shapes

VERSION = 1


def cache_dir() -> Path | None:
    value = os.environ.get("PAGERUNNER_CACHE", "")
    if value.lower() == "off":
        return None
    if value:
        return Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pagerunner"


def probe_key(files: NetFiles, blobs: list[str], widths: range) -> str:
    digest = hashlib.sha256()
    digest.update(Path(files.param).read_bytes())
    parts = [str(VERSION), str(Path(files.bin).stat().st_size), files.input, getattr(ncnn, "__version__", "?"),
             f"{widths.start}:{widths.stop}", *blobs]
    digest.update("\0".join(parts).encode())
    return digest.hexdigest()[:32]


def cached_probe(files: NetFiles, blobs: list[str], widths: range,
                 probe: Callable[[], tuple[Shapes, dict]]) -> tuple[Shapes, dict]:
    """probe()'s (Shapes, {blob: WidthMap}), from the cache when it holds them for this key."""
    from model_cache.ppocr.batch_rec import WidthMap

    folder = cache_dir()
    if folder is None:
        return probe()
    path = folder / f"rec-probe-{probe_key(files, blobs, widths)}.json"
    try:
        data = json.loads(path.read_text())
        shapes = Shapes({name: tuple(shape) for name, shape in data["shapes"].items()})
        maps = {name: WidthMap(tuple(m["base"]), m["per_align"], m["axis"]) for name, m in data["maps"].items()}
        if set(maps) == set(blobs):
            return shapes, maps
    except (OSError, ValueError, KeyError, TypeError):
        pass
    shapes, maps = probe()
    data = {"shapes": {k: list(v) for k, v in shapes.of.items()},
            "maps": {k: {"base": list(m.base), "per_align": m.per_align, "axis": m.axis} for k, m in maps.items()}}
    try:  # written whole then renamed: a concurrent reader sees the old file or the new one
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as handle:
            json.dump(data, handle)
        os.replace(handle.name, path)
    except OSError:
        pass
    return shapes, maps
