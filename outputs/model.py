"""The one typed document tree every engine produces and every writer consumes.

A page holds blocks in reading order; a block holds lines in reading order; a line may
hold words. Boxes are four (x, y) points in pixels of the rendered (upright) image,
clockwise from the top-left corner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

SCHEMA_ID = "pagerunner.page/1"

Box = list[list[float]]  # [[x0, y0], [x1, y1], [x2, y2], [x3, y3]]


class ErrorCode(str, Enum):
    """The closed set of page/document error codes (documented in the README and schema)."""

    PASSWORD_REQUIRED = "password_required"
    INCORRECT_PASSWORD = "incorrect_password"
    CORRUPT_PDF = "corrupt_pdf"
    EMPTY_DOCUMENT = "empty_document"
    EMPTY_FILE = "empty_file"
    IMAGE_TOO_LARGE = "image_too_large"
    CORRUPT_IMAGE = "corrupt_image"
    UNSUPPORTED_FORMAT = "unsupported_format"
    PAGE_LOAD_FAILED = "page_load_failed"
    RENDER_FAILED = "render_failed"
    ENGINE_FAILED = "engine_failed"
    PAGE_TIMEOUT = "page_timeout"
    REPETITION_LOOP = "repetition_loop"
    FILE_UNREADABLE = "file_unreadable"


# List bullets as read or found on a page; a line that starts with one is a list item.
BULLETS = "•·‣▶►▸■□▪◆●⚫○◦➢✓"

@dataclass
class PageError:
    code: ErrorCode
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code.value, "message": self.message}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PageError":
        return cls(ErrorCode(data["code"]), str(data["message"]))


@dataclass
class Word:
    text: str
    conf: float
    box: Box


@dataclass
class Line:
    text: str
    conf: float
    box: Box
    words: list[Word] | None = None
    # Offsets in `text` after which the line runs on to the next row of the page: a text layer's
    # line that PDFium joined over a line-end hyphen ("devel-opment"). Markdown mends the word
    # there as it does between two lines; the text itself stays as the text layer has it.
    breaks: list[int] | None = None


# Block kinds, as the layout stage (model_cache/layout) assigns them.
BLOCK_KINDS = ("title", "text", "list", "table", "caption", "header", "footer", "footnote", "figure")


@dataclass
class Block:
    lines: list[Line]
    kind: str = "text"  # one of BLOCK_KINDS
    grid: list[list[str]] | None = None  # a table's cell texts row by row, where its columns are clear

    @property
    def text(self) -> str:
        """The lines joined by newlines; a table's cells one row to a line, a space apart."""
        if self.kind == "table":
            return "\n".join(" ".join(row) for row in table_rows(self.lines))
        return "\n".join(line.text for line in self.lines)


def table_rows(lines: list[Line]) -> list[list[str]]:
    """A table's lines (cells, read row by row) as rows of cell texts: a line joins the row
    before it when it stands level with that row's first line (its centre inside that line's
    height) and to the right of it."""
    rows: list[tuple[Line, Line, list[str]]] = []  # first line, last line, texts
    for line in lines:
        text = line.text.strip()
        if not text:
            continue
        ys, xs = [p[1] for p in line.box], [p[0] for p in line.box]
        if rows:
            first, last, texts = rows[-1]
            top, bottom = min(p[1] for p in first.box), max(p[1] for p in first.box)
            if top <= (min(ys) + max(ys)) / 2 <= bottom and min(xs) >= max(p[0] for p in last.box) - 1:
                rows[-1] = (first, line, texts + [text])
                continue
        rows.append((line, line, [text]))
    return [texts for _, _, texts in rows]


def blocks_text(blocks: list[Block]) -> str:
    """Plain text of a page: lines joined by newlines, blocks separated by a blank line."""
    return "\n\n".join(b.text for b in blocks if b.lines)


@dataclass
class PageResult:
    source: str  # input path relative to its root, as shown to the user
    doc_id: str
    page: int  # 1-based page (or TIFF frame) number inside the document
    width: int
    height: int
    dpi: float | None
    rotation: int  # degrees (0/90/180/270) the page was turned clockwise to make it upright
    text: str
    blocks: list[Block]
    engine: str
    timings: dict[str, float] = field(default_factory=dict)
    mode: str = "ocr"  # "ocr" | "textlayer" | "none"
    status: str = "ok"  # "ok" | "failed"
    error: PageError | None = None
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_blocks(cls, blocks: list[Block], *, width: int, height: int, engine: str,
                    rotation: int = 0, mode: str = "ocr", timings: dict[str, float] | None = None,
                    warnings: list[str] | None = None) -> "PageResult":
        """What an engine returns: the recognised tree; the runner fills in source/doc/page/dpi."""
        return cls(source="", doc_id="", page=0, width=width, height=height, dpi=None,
                   rotation=rotation, text=blocks_text(blocks), blocks=blocks, engine=engine,
                   timings=dict(timings or {}), mode=mode, warnings=list(warnings or []))

    @classmethod
    def failed(cls, *, source: str, doc_id: str, page: int, engine: str,
               error: PageError) -> "PageResult":
        return cls(source=source, doc_id=doc_id, page=page, width=0, height=0, dpi=None,
                   rotation=0, text="", blocks=[], engine=engine, mode="none",
                   status="failed", error=error)

    def to_dict(self) -> dict[str, Any]:
        """The JSONL record (schema pagerunner.page/1). Key order is stable."""
        return {
            "schema": SCHEMA_ID,
            "source": self.source,
            "doc_id": self.doc_id,
            "page": self.page,
            "status": self.status,
            "width": self.width,
            "height": self.height,
            "dpi": self.dpi,
            "rotation": self.rotation,
            "engine": self.engine,
            "mode": self.mode,
            "text": self.text,
            "blocks": [_block_dict(b) for b in self.blocks],
            "error": self.error.to_dict() if self.error else None,
            "warnings": list(self.warnings),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PageResult":
        return cls(
            source=data["source"], doc_id=data["doc_id"], page=int(data["page"]),
            width=int(data["width"]), height=int(data["height"]), dpi=data.get("dpi"),
            rotation=int(data.get("rotation", 0)), text=data["text"],
            blocks=[_block_from(b) for b in data.get("blocks", [])], engine=data["engine"],
            timings=dict(data.get("timings") or {}), mode=data.get("mode", "ocr"),
            status=data.get("status", "ok"),
            error=PageError.from_dict(data["error"]) if data.get("error") else None,
            warnings=list(data.get("warnings") or []),
        )


def _round_box(box: Box) -> Box:
    return [[round(float(x), 1), round(float(y), 1)] for x, y in box]


def _line_dict(line: Line) -> dict[str, Any]:
    out: dict[str, Any] = {"text": line.text, "conf": round(float(line.conf), 4),
                           "box": _round_box(line.box)}
    if line.words is not None:
        out["words"] = [{"text": w.text, "conf": round(float(w.conf), 4), "box": _round_box(w.box)}
                        for w in line.words]
    if line.breaks:
        out["breaks"] = list(line.breaks)
    return out


def _block_dict(block: Block) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": block.kind, "lines": [_line_dict(line) for line in block.lines]}
    if block.grid is not None:
        out["grid"] = [list(row) for row in block.grid]
    return out


def _block_from(data: dict[str, Any]) -> Block:
    lines = []
    for ld in data.get("lines", []):
        words = None
        if ld.get("words") is not None:
            words = [Word(w["text"], float(w["conf"]), w["box"]) for w in ld["words"]]
        breaks = [int(b) for b in ld["breaks"]] if ld.get("breaks") else None
        lines.append(Line(ld["text"], float(ld["conf"]), ld["box"], words, breaks))
    grid = data.get("grid")
    return Block(lines=lines, kind=data.get("kind", "text"),
                 grid=[[str(c) for c in row] for row in grid] if grid is not None else None)
