"""A document's identity: the sha256 of its bytes plus the options that change its results."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

# Options that change a document's results; anything else (threads, device, formats) does not.
RESULT_OPTIONS = ("engine", "model", "dpi", "pages", "text_layer", "max_pixels")


def file_sha256(path: Path, chunk: int = 1 << 20) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def document_id(content_sha256: str, options: dict[str, Any]) -> str:
    relevant = {key: options.get(key) for key in RESULT_OPTIONS}
    for key in ("engine_options", "ppocr_model"):  # added only when set: earlier ids stay as they were
        if options.get(key):
            relevant[key] = options[key]
    payload = json.dumps({"sha256": content_sha256, "options": relevant}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
