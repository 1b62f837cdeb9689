"""The decode loop: prefill, then one token at a time until an EOS id, max_new_tokens or a
repetition loop; every token is streamed to a callback as it is chosen. TokenStream is one
page's choosing and stopping rule, shared by this loop and the batch scheduler."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from model_cache.hunyuan.decoder import Decoder
from model_cache.hunyuan.loop_guard import LoopGuard
from model_cache.hunyuan.sampling import Sampler

TokenCallback = Callable[[int, float], None]  # (token id, seconds since decoding of the page began)


@dataclass
class Generation:
    tokens: list[int]  # generated ids, the stopping EOS included
    probs: list[float]
    stop: str  # "eos" | "max_new_tokens" | "repetition_loop"
    first_logits: np.ndarray
    prefill_s: float
    decode_s: float
    step_s: list[float] = field(default_factory=list)
    split_s: list[tuple[float, float]] = field(default_factory=list)  # (layers, LM head) per step


@dataclass
class GenerationSettings:
    eos_ids: frozenset[int]
    max_new_tokens: int
    guard: LoopGuard | None = None


class TokenStream:
    """One page's tokens: choose from logits, apply the stopping rules, stream to a callback."""

    def __init__(self, sampler: Sampler, settings: GenerationSettings, prompt_ids: list[int],
                 on_token: TokenCallback | None = None, started: float | None = None):
        sampler.start(prompt_ids)
        self.sampler = sampler
        self.settings = settings
        self.on_token = on_token
        self.started = time.perf_counter() if started is None else started
        self.tokens: list[int] = []
        self.probs: list[float] = []
        self.stop = "max_new_tokens"
        self.done = settings.max_new_tokens <= 0

    def push(self, logits: np.ndarray) -> bool:
        """Choose the next token from `logits`; True once the page has stopped (then the last
        token needs no decode step)."""
        token, prob = self.sampler.choose(logits)
        self.tokens.append(token)
        self.probs.append(prob)
        self.sampler.observe([token])
        if self.on_token is not None:
            self.on_token(token, time.perf_counter() - self.started)
        guard = self.settings.guard
        if token in self.settings.eos_ids:
            self.stop, self.done = "eos", True
        elif guard is not None and (keep := guard.find(self.tokens)) is not None:
            del self.tokens[keep:], self.probs[keep:]
            self.stop, self.done = "repetition_loop", True
        elif len(self.tokens) >= self.settings.max_new_tokens:
            self.done = True
        return self.done

    @property
    def last(self) -> int:
        return self.tokens[-1]


def generate(decoder: Decoder, embeds: np.ndarray, positions: np.ndarray, prompt_ids: list[int],
             sampler: Sampler, settings: GenerationSettings,
             on_token: TokenCallback | None = None) -> Generation:
    t0 = time.perf_counter()
    stream = TokenStream(sampler, settings, prompt_ids, on_token, t0)
    logits = decoder.prefill(embeds, positions)
    prefill_s = time.perf_counter() - t0
    first_logits = logits
    steps: list[float] = []
    splits: list[tuple[float, float]] = []
    t1 = time.perf_counter()
    while not stream.done and not stream.push(logits):
        ts = time.perf_counter()
        logits = decoder.step(stream.last)
        steps.append(time.perf_counter() - ts)
        splits.append(decoder.step_split)
    return Generation(stream.tokens, stream.probs, stream.stop, first_logits, prefill_s,
                      time.perf_counter() - t1, steps, splits)
