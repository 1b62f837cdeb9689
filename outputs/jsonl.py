"""JSONL: one object per page, one line, UTF-8 (schema pagerunner.page/1, outputs/schema/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from outputs.model import PageResult


def page_line(page: PageResult) -> str:
    return record_line(page.to_dict())


def record_line(record: dict[str, Any]) -> str:
    """One JSONL line of a page record made by PageResult.to_dict (made once, used for several lines)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def jsonl_lines(pages: Iterable[PageResult]) -> Iterator[str]:
    for page in pages:
        yield page_line(page)


def document_failure_line(source: str, doc_id: str, engine: str, code: str, message: str) -> str:
    """A document that could not be opened has no pages: it is one failed record with page null."""
    record: dict[str, Any] = {
        "schema": "pagerunner.page/1", "source": source, "doc_id": doc_id, "page": None,
        "status": "failed", "width": 0, "height": 0, "dpi": None, "rotation": 0, "engine": engine,
        "mode": "none", "text": "", "blocks": [], "error": {"code": code, "message": message},
        "warnings": [], "timings": {},
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


class JsonlReadError(ValueError):
    pass


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Read page records; a torn last line (a crash mid-append) is skipped, any other bad line raises."""
    with open(path, "rb") as fh:
        raw_lines = fh.read().split(b"\n")
    last = len(raw_lines) - 1
    for number, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            if number == last:
                return  # a torn final line
            raise JsonlReadError(f"{path}:{number + 1}: not a JSON record ({exc})") from None
        if not isinstance(record, dict):
            raise JsonlReadError(f"{path}:{number + 1}: not a JSON object")
        yield record
