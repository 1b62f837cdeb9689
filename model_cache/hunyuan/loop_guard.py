"""Stop a decode that has fallen into a loop (the same token run repeating), a known failure of
OCR VLMs on blank or repetitive pages, instead of burning max_new_tokens on it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoopGuard:
    max_period: int = 64  # longest repeating unit looked for, in tokens
    min_repeats: int = 4  # a unit must repeat this many times ...
    min_span: int = 48  # ... and cover at least this many tokens

    def find(self, tokens: list[int]) -> int | None:
        """If the tail of `tokens` is a loop, return the length to keep (text before the loop
        plus one copy of the repeating unit); otherwise None."""
        n = len(tokens)
        for period in range(1, self.max_period + 1):
            span = max(period * self.min_repeats, self.min_span)
            if span > n:
                break
            if tokens[n - span + period:] == tokens[n - span:n - period]:
                start = n - span
                while start > 0 and tokens[start - 1] == tokens[start - 1 + period]:
                    start -= 1
                return start + period
        return None
