"""An append-only JSONL of (sample, tool) -> recognised text, so a long accuracy run can stop
and resume, and its tables can be rebuilt without OCR'ing again. A record is reused only for
the same tool description (tool and library versions) and the same render settings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CachedResult:
    text: str
    seconds: float | None  # None when the time was not recorded
    failed: bool


class ResultCache:
    def __init__(self, path: Path, settings: dict[str, object]):
        self.path = path
        self.settings = settings
        self._records: dict[tuple[str, str, str, str], CachedResult] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                self._load(line)

    def _load(self, line: str) -> None:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            return  # a line cut short by a kill: that sample is simply done again
        if record.get("settings") != self.settings:
            return
        key = (record["set"], record["ident"], record["tool"], record["description"])
        self._records[key] = CachedResult(record["text"], record.get("seconds"), bool(record.get("failed")))

    def get(self, set_name: str, ident: str, tool: str, description: str) -> CachedResult | None:
        return self._records.get((set_name, ident, tool, description))

    def put(self, set_name: str, ident: str, tool: str, description: str, result: CachedResult) -> None:
        self._records[(set_name, ident, tool, description)] = result
        record = {"set": set_name, "ident": ident, "tool": tool, "description": description,
                  "settings": self.settings, "text": result.text, "seconds": result.seconds,
                  "failed": result.failed}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
