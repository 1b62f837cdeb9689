"""Page selections such as "1-3,7,10-" (1-based, inclusive, open-ended ranges allowed)."""

from __future__ import annotations

from dataclasses import dataclass


class PageRangeError(ValueError):
    """The page selection text is malformed (a usage error)."""


@dataclass(frozen=True)
class PageRanges:
    spans: tuple[tuple[int, int | None], ...]  # (first, last or None for "to the end")
    text: str = ""

    @classmethod
    def parse(cls, text: str | None) -> "PageRanges":
        if text is None or not text.strip():
            return ALL_PAGES
        spans: list[tuple[int, int | None]] = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                raise PageRangeError(f"empty item in page selection {text!r}")
            first_s, sep, last_s = part.partition("-")
            if not first_s.strip() and not last_s.strip():
                raise PageRangeError(f"{part!r} names no page in {text!r}")
            first = _page_number(first_s or "1", text)
            last = None if sep and not last_s.strip() else _page_number(last_s if sep else first_s, text)
            if last is not None and last < first:
                raise PageRangeError(f"range {part!r} runs backwards in {text!r}")
            spans.append((first, last))
        return cls(tuple(spans), ",".join(p.strip() for p in text.split(",")))

    def select(self, page_count: int) -> list[int]:
        """The selected 1-based page numbers that exist in a document of page_count pages."""
        chosen: set[int] = set()
        for first, last in self.spans:
            end = page_count if last is None else min(last, page_count)
            chosen.update(range(first, end + 1))
        return sorted(chosen)

    def __str__(self) -> str:
        return self.text or "all"


def _page_number(raw: str, text: str) -> int:
    raw = raw.strip()
    if not raw.isdigit() or not raw.isascii():
        raise PageRangeError(f"{raw!r} is not a page number in {text!r}")
    number = int(raw)
    if number < 1:
        raise PageRangeError(f"page numbers start at 1 (got {raw!r} in {text!r})")
    if number > 10_000_000:
        raise PageRangeError(f"page number {raw!r} is out of range")
    return number


ALL_PAGES = PageRanges(((1, None),), "")
