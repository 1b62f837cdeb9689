"""A short aligned diff of two normalised texts, to show *what* went wrong on the worst pages."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    op: str  # "equal" | "replace" | "delete" (only in ref) | "insert" (only in hyp)
    ref: str
    hyp: str

    def to_dict(self) -> dict[str, str]:
        if self.op == "equal":
            return {"op": self.op, "text": self.ref}
        return {"op": self.op, "ref": self.ref, "hyp": self.hyp}


Hunk = list[Segment]


def aligned_diff(ref: str, hyp: str, *, max_hunks: int = 4, context: int = 12,
                 max_span: int = 40) -> list[Hunk]:
    """The first `max_hunks` regions where ref and hyp differ, each with `context` characters
    of agreeing text around it. Changes at most 2*context apart share a hunk, so a hunk reads
    as a phrase with its errors marked, not as single letters."""
    matcher = difflib.SequenceMatcher(None, ref, hyp, autojunk=False)
    hunks: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(context):
        hunks.append([_segment(tag, ref[i1:i2], hyp[j1:j2], max_span, context)
                      for tag, i1, i2, j1, j2 in group])
        if len(hunks) == max_hunks:
            break
    return hunks


def hunk_lines(hunk: Hunk) -> tuple[str, str]:
    """Plain two-line rendering: changed spans in [brackets]."""
    ref = "".join(s.ref if s.op == "equal" else f"[{s.ref}]" for s in hunk)
    hyp = "".join(s.hyp if s.op == "equal" else f"[{s.hyp}]" for s in hunk)
    return ref, hyp


def _segment(tag: str, ref: str, hyp: str, max_span: int, context: int) -> Segment:
    if tag == "equal":
        return Segment(tag, _clip(ref, 2 * context), _clip(hyp, 2 * context))
    return Segment(tag, _clip(ref, max_span), _clip(hyp, max_span))


def _clip(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    half = (width - 1) // 2
    return text[:half] + "…" + text[len(text) - half:]
