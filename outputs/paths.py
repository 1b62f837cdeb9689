"""Output file names made only from sanitised relative input names: they can never leave OUT."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path, PurePosixPath

MAX_COMPONENT_BYTES = 180
_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"\\|?*]')


def safe_relative_stem(relname: str) -> str:
    """'a/b/scan 1.pdf' -> 'a/b/scan 1': no '..', no absolute part, valid UTF-8, bounded lengths."""
    parts = []
    for raw in PurePosixPath(relname.replace("\\", "/")).parts:
        if raw in ("", ".", "..", "/"):
            continue
        parts.append(_safe_component(raw))
    if not parts:
        parts = ["document"]
    last = parts[-1]
    stem = last.rsplit(".", 1)[0] if "." in last.strip(".") else last
    parts[-1] = stem or "document"
    return "/".join(parts)


def _safe_component(raw: str) -> str:
    # Names that are not valid UTF-8 arrive with surrogate escapes: make them visible, not fatal.
    text = raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    text = unicodedata.normalize("NFC", _UNSAFE.sub("_", text)).strip()
    text = text.lstrip(".") or "_"
    encoded = text.encode("utf-8")
    if len(encoded) > MAX_COMPONENT_BYTES:
        digest = hashlib.sha256(encoded).hexdigest()[:10]
        text = encoded[:MAX_COMPONENT_BYTES - 12].decode("utf-8", "ignore") + "~" + digest
    return text


def output_path(out_dir: Path, stem: str, suffix: str) -> Path:
    """OUT/<stem><suffix>, checked to lie inside OUT."""
    path = out_dir.joinpath(*stem.split("/")).with_name(stem.split("/")[-1] + suffix)
    root = out_dir.resolve()
    resolved = path.parent.resolve() / path.name
    if root != resolved and root not in resolved.parents:
        raise ValueError(f"output name {stem!r} escapes {out_dir}")
    return path
