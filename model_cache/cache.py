"""Where models live: the PP-OCR files shipped in the package, and the user's model cache
($PAGERUNNER_HOME, default ~/.cache/pagerunner) for models a user adds or converts."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from model_cache.manifest import MANIFEST_NAME, Manifest, ModelVerificationError

BUNDLED_PPOCR = Path(__file__).parent / "ppocr" / "models"  # the base (PP-OCRv5 mobile) folder


def home() -> Path:
    return Path(os.environ.get("PAGERUNNER_HOME") or Path.home() / ".cache" / "pagerunner")


def models_root() -> Path:
    return home() / "models"


@dataclass
class ModelEntry:
    name: str
    engine: str
    path: Path
    bundled: bool


def known_models() -> list[ModelEntry]:
    from model_cache.ppocr.assets import BUNDLED_MODELS, bundled_model_dir

    entries: list[ModelEntry] = []
    for name in BUNDLED_MODELS:
        folder = bundled_model_dir(name)
        if (folder / MANIFEST_NAME).exists():
            entries.append(_entry(folder, bundled=True))
    root = models_root()
    if root.is_dir():
        for folder in sorted(p for p in root.iterdir() if (p / MANIFEST_NAME).exists()):
            entries.append(_entry(folder, bundled=False))
    return entries


def find_model(name_or_path: str) -> Path:
    """A model folder by path, or by the name in its manifest / its folder name."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    for entry in known_models():
        if name_or_path in (entry.name, entry.path.name, entry.engine):
            return entry.path
    raise ModelVerificationError(path, [f"no model folder or known model named {name_or_path!r}"])


def _entry(folder: Path, bundled: bool) -> ModelEntry:
    try:
        manifest = Manifest.load(folder)
        return ModelEntry(manifest.name, manifest.engine, folder, bundled)
    except ModelVerificationError:
        return ModelEntry(folder.name, "?", folder, bundled)
