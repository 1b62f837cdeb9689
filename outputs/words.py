"""Words of a line for the word-level writers (hOCR, ALTO, the PDF text layer).

A line's own words are used when they spell its text. A line without them (a dot leader,
an engine that gives line boxes only) gets its text split at spaces, each word a slice of
the line's box in proportion to its characters. A line whose box is the whole page (an
engine that gives no boxes at all, like HunyuanOCR) has no geometry: `has_box` says so.
"""

from __future__ import annotations

from outputs.model import Box, Line, PageResult, Word


def has_box(line: Line, page: PageResult) -> bool:
    """False for a line placed nowhere in particular: its box is the whole page (or empty)."""
    xs = [p[0] for p in line.box]
    ys = [p[1] for p in line.box]
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    if width <= 0 or height <= 0:
        return False
    whole = (min(xs) <= 0.5 and min(ys) <= 0.5 and max(xs) >= page.width - 0.5
             and max(ys) >= page.height - 0.5)
    return not whole


def words_of(line: Line) -> list[Word]:
    """The line's words: its own when they spell its text, else slices of its box."""
    if line.words and " ".join(w.text for w in line.words) == " ".join(line.text.split()):
        return line.words
    return split_box(line.text, line.conf, line.box)


def joined_words(*lines: Line) -> list[Word] | None:
    """The words of lines joined into one (None when none of them has words of its own)."""
    if all(line.words is None for line in lines):
        return None
    return [word for line in lines for word in words_of(line)]


def split_box(text: str, conf: float, box: Box) -> list[Word]:
    """Words of `text`, each the slice of `box` (top edge p0-p1, bottom p3-p2) its characters
    take in proportion to the whole text."""
    tokens = text.split()
    if not tokens:
        return []
    total = max(len(" ".join(tokens)), 1)
    words, pos = [], 0
    for token in tokens:
        a, b = pos / total, (pos + len(token)) / total
        words.append(Word(token, conf, [_along(box[0], box[1], a), _along(box[0], box[1], b),
                                        _along(box[3], box[2], b), _along(box[3], box[2], a)]))
        pos += len(token) + 1
    return words


def _along(p: list[float], q: list[float], t: float) -> list[float]:
    return [p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t]
