"""Choosing the next token: repetition penalty (as transformers applies it, over every id in the
sequence including the prompt), then greedy or temperature / top-k / top-p sampling with a seed."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SamplingOptions:
    repetition_penalty: float = 1.0
    temperature: float = 0.0  # 0 = greedy
    top_k: int = 0  # 0 = off
    top_p: float = 1.0
    seed: int | None = None


class Sampler:
    def __init__(self, options: SamplingOptions, vocab: int):
        self.options = options
        self.vocab = vocab
        self.rng = np.random.default_rng(options.seed)
        self.seen = np.zeros(vocab, dtype=bool)
        self.seen_ids = np.zeros(0, dtype=np.int64)  # the same ids as a list: penalising
        # ~1500 entries is far cheaper than a boolean mask over the vocabulary at every step

    def start(self, prompt_ids: list[int]) -> None:
        self.seen[:] = False
        self.seen_ids = np.zeros(0, dtype=np.int64)
        self.rng = np.random.default_rng(self.options.seed)
        self.observe(prompt_ids)

    def observe(self, ids: list[int]) -> None:
        ids = np.unique(np.asarray(ids, dtype=np.int64))
        new = ids[~self.seen[ids]]
        if new.size:
            self.seen[new] = True
            self.seen_ids = np.concatenate([self.seen_ids, new])

    def choose(self, logits: np.ndarray) -> tuple[int, float]:
        """Return (token id, its probability under the penalised distribution)."""
        scores = self._penalised(logits.astype(np.float32, copy=True))
        opts = self.options
        if opts.temperature <= 0.0:
            token = int(np.argmax(scores))
            return token, _top_probability(scores, token)
        scores = scores / np.float32(opts.temperature)
        scores = _top_k(scores, opts.top_k)
        scores = _top_p(scores, opts.top_p)
        probs = _softmax(scores)
        token = int(self.rng.choice(len(probs), p=probs))
        return token, float(probs[token])

    def _penalised(self, scores: np.ndarray) -> np.ndarray:
        penalty = np.float32(self.options.repetition_penalty)
        if penalty == 1.0:
            return scores
        hit = scores[self.seen_ids]
        scores[self.seen_ids] = np.where(hit < 0, hit * penalty, hit / penalty)
        return scores


def _top_probability(scores: np.ndarray, token: int) -> float:
    """softmax(scores)[token] for the arg-max token, from the scores within 30 of it only (the
    rest add < 1e-8 relative): this runs for every page of a batch at every step, and a full
    float64 softmax over the vocabulary cost ~1-3 ms a page."""
    top = scores[token]
    if not np.isfinite(top):  # NaN logits (a broken graph): no probability to speak of
        return 0.0
    near = scores[scores > top - np.float32(30.0)]
    return float(1.0 / np.exp((near - top).astype(np.float64)).sum())


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp((scores - scores.max()).astype(np.float64))
    return shifted / shifted.sum()


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    if k <= 0 or k >= len(scores):
        return scores
    kth = np.partition(scores, -k)[-k]
    return np.where(scores < kth, -np.inf, scores)


def _top_p(scores: np.ndarray, p: float) -> np.ndarray:
    if p >= 1.0:
        return scores
    order = np.argsort(-scores, kind="stable")
    probs = _softmax(scores)[order]
    cumulative = np.cumsum(probs)
    # keep the smallest prefix whose mass reaches p (always at least one token)
    drop = cumulative - probs >= p
    out = scores.copy()
    out[order[drop]] = -np.inf
    return out
