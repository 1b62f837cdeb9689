"""The best order of a page's lines against its reference: how much of a page's CER no reading
order of those lines could remove.

Each line of four characters or more is placed where it matches the reference best (approximate
substring match, free start and end), longest lines first, each on reference characters no longer
line has taken, so repeated lines land on their own copies. Shorter lines, and lines that match
nothing (more than half their characters wrong wherever they are put), follow the line before them
in the page's own order. An estimate of the best order, not a proof of it: callers take the lower
of it and the page's own CER. It splits a page's CER into order and characters (misread, missed
or extra text).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runner.evaluation.metrics import bag_counts, cer, normalize

# A line whose best match costs more than this share of its characters matches nothing.
UNMATCHED_SHARE = 0.5
# Shorter lines ("1", "a)", a bullet) match anywhere and are not placed by matching.
MIN_PLACED = 4
_TAKEN = -1  # a reference character a longer line has matched: equal to no character


@dataclass(frozen=True)
class Match:
    distance: int  # edits of the best approximate occurrence
    end: int  # index just past that occurrence in the reference


def best_match(pattern: str, reference: np.ndarray) -> Match:
    """Semi-global edit distance of `pattern` against the code points `reference`: the cheapest
    substring of the reference to turn into the pattern, and where it ends."""
    if not pattern:
        return Match(0, 0)
    columns = np.arange(len(reference) + 1)
    row = np.zeros(len(reference) + 1, dtype=np.int64)  # a match may start anywhere
    for i, char in enumerate(pattern, start=1):
        step = np.empty_like(row)
        step[0] = i
        step[1:] = np.minimum(row[:-1] + (reference != ord(char)), row[1:] + 1)
        # insertions along the row: row[j] = min over k <= j of step[k] + (j - k)
        row = np.minimum.accumulate(step - columns) + columns
    end = int(np.argmin(row))
    return Match(int(row[end]), end)


def reference_order(lines: list[str], reference: str) -> list[str]:
    """`lines` (already normalised) in the order of where they match the normalised reference."""
    codes = np.frombuffer(reference.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    starts: dict[int, int] = {}
    for index in sorted(range(len(lines)), key=lambda i: -len(lines[i])):
        line = lines[index]
        if len(line) < MIN_PLACED:
            break
        match = best_match(line, codes)
        if match.distance <= UNMATCHED_SHARE * len(line):
            start = max(0, match.end - len(line))
            starts[index] = start
            codes[start:match.end] = _TAKEN
    keys = []
    anchor = -1
    for index in range(len(lines)):
        anchor = starts.get(index, anchor)
        keys.append((anchor, index))
    return [lines[index] for index in sorted(range(len(lines)), key=keys.__getitem__)]


def ordered_cer(reference: str, hypothesis: str, cjk: bool = True) -> float:
    """CER of `hypothesis` with its lines read in the reference's order (normalised as the
    corpus scoring does: whitespace removed), or its own CER where that is lower."""
    ref = normalize(reference, cjk=cjk)
    lines = [normalize(line, cjk=cjk) for line in hypothesis.splitlines()]
    ordered = cer(ref, "".join(reference_order([line for line in lines if line], ref)))
    return min(ordered, cer(ref, "".join(lines)))


def character_floor(reference: str, hypothesis: str, cjk: bool = True) -> float:
    """The lowest CER any order of the hypothesis's characters could reach: an alignment pairs
    at most the characters the two multisets share, so at least max(len) - shared edits remain.
    Missed and extra characters cost here what they cost CER; bag-F1 charges them half."""
    matched, ref_total, hyp_total = bag_counts(normalize(reference, cjk=cjk), normalize(hypothesis, cjk=cjk))
    return (max(ref_total, hyp_total) - matched) / max(1, ref_total)
