"""The output formats a run can write, by name, and the results file's name. Kept apart from the
exporters (runner/export.py), which import PDF and XML writers that a command needs only when
it writes those files."""

from __future__ import annotations

LAYER_FORMATS = ("pdf", "hocr", "alto")  # runner/export_layers.py
FORMATS = ("jsonl", "md", "txt", *LAYER_FORMATS, "html")
DEFAULT_FORMATS = ("jsonl", "md", "txt")
RESULTS_FILE = "results.jsonl"


def parse_formats(text: str) -> tuple[str, ...]:
    chosen = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown or not chosen:
        raise ValueError(f"unknown format(s) {', '.join(unknown) or text!r}; choose from {', '.join(FORMATS)}")
    return chosen
