"""Text normalisation and the accuracy metrics: CER, WER, bag-of-characters F1.

Normalisation follows the evaluation kit's conventions (shared/eval/tools/gt_normalize.py):
NFKC; U+0002 (PDFium's joined line-end hyphen) -> '-'; soft hyphens dropped; dot leaders -> '...';
CJK pages drop all whitespace, other pages collapse whitespace runs to one space.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

_DOT_LEADERS = re.compile(r"(?:\.[ \t\u00a0]*){3,}")
_WHITESPACE = re.compile(r"\s+")

# A page counts as CJK when at least this share of its non-space reference characters is CJK.
# Mixed pages (Chinese slides with code samples) sit around 15-30 %; Latin pages are at 0.
CJK_SHARE_THRESHOLD = 0.10

_CJK_RANGES = (
    (0x2E80, 0x2FDF),  # radicals
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3100, 0x31BF),  # bopomofo
    (0x31F0, 0x31FF),  # katakana extensions
    (0x3400, 0x4DBF),  # ideographs extension A
    (0x4E00, 0x9FFF),  # unified ideographs
    (0xAC00, 0xD7AF),  # hangul syllables
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0xFF00, 0xFFEF),  # half/full-width forms
    (0x20000, 0x3FFFF),  # ideographs extensions B..
)


def is_cjk_char(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def cjk_share(text: str) -> float:
    """Share of CJK characters among the non-space characters of `text` (0 for empty text)."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    return sum(1 for c in chars if is_cjk_char(c)) / len(chars)


def is_cjk_text(text: str, threshold: float = CJK_SHARE_THRESHOLD) -> bool:
    return cjk_share(unicodedata.normalize("NFKC", text)) >= threshold


def canonical(text: str) -> str:
    """The normalisation shared by both modes, before whitespace handling."""
    out = unicodedata.normalize("NFKC", text)
    out = out.replace("\x02", "-").replace("\u00ad", "")
    out = out.replace("\r\n", "\n").replace("\r", "\n")
    return _DOT_LEADERS.sub("...", out)


def normalize(text: str, cjk: bool = False) -> str:
    out = canonical(text)
    if cjk:
        return _WHITESPACE.sub("", out)
    return _WHITESPACE.sub(" ", out).strip()


def tokenize_words(text: str, cjk: bool = False) -> list[str]:
    """Words for WER. On CJK pages every CJK character is a word of its own (CJK text has no
    spaces between words); runs of other characters split on whitespace as usual."""
    words: list[str] = []
    for chunk in canonical(text).split():
        if not cjk:
            words.append(chunk)
            continue
        run = ""
        for ch in chunk:
            if is_cjk_char(ch):
                if run:
                    words.append(run)
                    run = ""
                words.append(ch)
            else:
                run += ch
        if run:
            words.append(run)
    return words


def levenshtein(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Unit-cost edit distance between two sequences (strings or token lists).

    Bit-parallel (Myers 1999 / Hyyrö 2001) with Python integers as arbitrarily long bit
    vectors: one column of the DP matrix per element of the shorter sequence, each step a
    handful of big-integer operations, so a 4000 x 4000 character page takes milliseconds.
    """
    if len(a) < len(b):
        a, b = b, a
    m = len(a)
    if not b:
        return m
    match_bits: dict[Hashable, int] = {}
    for i, item in enumerate(a):
        match_bits[item] = match_bits.get(item, 0) | (1 << i)
    mask = (1 << m) - 1
    top = 1 << (m - 1)
    vp, vn, score = mask, 0, m
    for item in b:
        eq = match_bits.get(item, 0)
        xv = eq | vn
        xh = ((((eq & vp) + vp) & mask) ^ vp) | eq
        hp = vn | (~(xh | vp) & mask)
        hn = vp & xh
        if hp & top:
            score += 1
        elif hn & top:
            score -= 1
        hp = ((hp << 1) | 1) & mask
        hn = (hn << 1) & mask
        vp = hn | (~(xv | hp) & mask)
        vn = hp & xv
    return score


def bag_counts(ref: str, hyp: str) -> tuple[int, int, int]:
    """(matched, ref_total, hyp_total) over the multisets of characters."""
    r, h = Counter(ref), Counter(hyp)
    return sum((r & h).values()), len(ref), len(hyp)


def f1_from_counts(matched: int, ref_total: int, hyp_total: int) -> float:
    if ref_total == 0 and hyp_total == 0:
        return 1.0
    precision = matched / max(1, hyp_total)
    recall = matched / max(1, ref_total)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def cer(ref: str, hyp: str) -> float:
    """Character error rate on already normalised text: edits / reference length."""
    return levenshtein(ref, hyp) / max(1, len(ref))


def wer(ref_words: Sequence[str], hyp_words: Sequence[str]) -> float:
    return levenshtein(ref_words, hyp_words) / max(1, len(ref_words))


def bag_f1(ref: str, hyp: str) -> float:
    """Order-insensitive F1 over the multiset of characters: a page read in a different
    order scores high here and badly on CER; a misread page scores badly on both."""
    return f1_from_counts(*bag_counts(ref, hyp))


@dataclass(frozen=True)
class Counts:
    """Additive error counts, so documents and the whole run are micro-averaged
    (long pages weigh more) by summing pages."""

    ref_chars: int = 0
    char_edits: int = 0
    ref_words: int = 0
    word_edits: int = 0
    bag_matched: int = 0
    hyp_chars: int = 0

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(*(x + y for x, y in zip(self.astuple(), other.astuple())))

    def astuple(self) -> tuple[int, ...]:
        return (self.ref_chars, self.char_edits, self.ref_words, self.word_edits,
                self.bag_matched, self.hyp_chars)

    @property
    def cer(self) -> float:
        return self.char_edits / max(1, self.ref_chars)

    @property
    def wer(self) -> float:
        return self.word_edits / max(1, self.ref_words)

    @property
    def bag_f1(self) -> float:
        return f1_from_counts(self.bag_matched, self.ref_chars, self.hyp_chars)


@dataclass(frozen=True)
class TextScore:
    cjk: bool
    counts: Counts
    ref: str  # normalised reference
    hyp: str  # normalised hypothesis

    @property
    def cer(self) -> float:
        return self.counts.cer

    @property
    def wer(self) -> float:
        return self.counts.wer

    @property
    def bag_f1(self) -> float:
        return self.counts.bag_f1


def score_text(reference: str, hypothesis: str, cjk: bool | None = None) -> TextScore:
    """Score one page. `cjk=None` decides from the reference's share of CJK characters."""
    if cjk is None:
        cjk = is_cjk_text(reference)
    ref, hyp = normalize(reference, cjk), normalize(hypothesis, cjk)
    ref_words, hyp_words = tokenize_words(reference, cjk), tokenize_words(hypothesis, cjk)
    matched, _, _ = bag_counts(ref, hyp)
    counts = Counts(ref_chars=len(ref), char_edits=levenshtein(ref, hyp),
                    ref_words=len(ref_words), word_edits=levenshtein(ref_words, hyp_words),
                    bag_matched=matched, hyp_chars=len(hyp))
    return TextScore(cjk=cjk, counts=counts, ref=ref, hyp=hyp)


def non_space_length(text: str) -> int:
    return sum(1 for c in canonical(text) if not c.isspace())
