"""An enumerated list item's label ("1.", "2)", "(iv)", "b.", "3．", "（1）", "3、") and whether one
label counts on from another. Shared by the layout stage, which makes runs of such items `list`
blocks, and the Markdown writer, which writes them as list items."""

from __future__ import annotations

import re

# A number (with a letter), one or two letters or a roman numeral, then "." or ")" and a space;
# a full-width mark, which the text may follow at once ("3、点击"); or a number and a mark the
# words follow at once, as OCR often reads a narrow space ("2.Explanation", never "2.5").
ENUMERATION = re.compile(r"\s*(?P<open>[(（]?)(?P<core>\d{1,6}[A-Za-z]?|[^\W\d_]{1,2}|[ivxlcIVXLC]{1,5})"
                         r"(?P<close>[.)．）、])(?:\s|(?<=[．）、])(?=\S)|(?<=\d[.)])(?=[^\W\d_]))")
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}


def enumeration_label(text: str) -> str | None:
    """The label leading `text`, as written ("2)", "(iv)"), or None."""
    match = ENUMERATION.match(text)
    return match.group("open") + match.group("core") + match.group("close") if match else None


def counts_on(first: str, second: str) -> bool:
    """Does `second` start with the label after the one `first` starts with (1. then 2.,
    b) then c), iii. then iv.), written alike?"""
    a, b = ENUMERATION.match(first), ENUMERATION.match(second)
    if a is None or b is None or (a["open"], a["close"]) != (b["open"], b["close"]):
        return False
    after = _values(b["core"])
    return any((style, n + 1) in after for style, n in _values(a["core"]))


def _values(core: str) -> set[tuple[str, int]]:
    """What the label counts as, per style: "i" is the ninth letter or roman one."""
    values = set()
    if core.isdigit():
        values.add(("digit", int(core)))
    if len(core) == 1 and core.isascii() and core.isalpha():
        values.add(("upper" if core.isupper() else "lower", ord(core.lower()) - ord("a") + 1))
    roman = _roman(core.lower())
    if roman is not None and (core.islower() or core.isupper()):
        values.add(("roman-upper" if core.isupper() else "roman", roman))
    return values


def _roman(core: str) -> int | None:
    if not core or any(ch not in _ROMAN for ch in core):
        return None
    digits = [_ROMAN[ch] for ch in core]
    return sum(-d if k + 1 < len(digits) and d < digits[k + 1] else d for k, d in enumerate(digits))
