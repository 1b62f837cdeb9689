"""The decode loop: prefill, then one token at a time until an EOS id, max_new_tokens or a
repetition loop; every token is streamed to a callback as it is chosen."""

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


def generate(decoder: Decoder, embeds: np.ndarray, positions: np.ndarray, prompt_ids: list[int],
             sampler: Sampler, settings: GenerationSettings,
             on_token: TokenCallback | None = None) -> Generation:
    sampler.start(prompt_ids)
    t0 = time.perf_counter()
    logits = decoder.prefill(embeds, positions)
    prefill_s = time.perf_counter() - t0
    first_logits = logits
    tokens: list[int] = []
    probs: list[float] = []
    steps: list[float] = []
    splits: list[tuple[float, float]] = []
    stop = "max_new_tokens"
    t1 = time.perf_counter()
    while len(tokens) < settings.max_new_tokens:
        token, prob = sampler.choose(logits)
        tokens.append(token)
        probs.append(prob)
        sampler.observe([token])
        if on_token is not None:
            on_token(token, time.perf_counter() - t0)
        if token in settings.eos_ids:
            stop = "eos"
            break
        if settings.guard is not None and (keep := settings.guard.find(tokens)) is not None:
            del tokens[keep:], probs[keep:]
            stop = "repetition_loop"
            break
        if len(tokens) == settings.max_new_tokens:
            break
        ts = time.perf_counter()
        logits = decoder.step(token)
        steps.append(time.perf_counter() - ts)
        splits.append(decoder.step_split)
    return Generation(tokens, probs, stop, first_logits, prefill_s, time.perf_counter() - t1, steps, splits)
