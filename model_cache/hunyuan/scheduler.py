"""Continuous batching of pages: up to `slots` pages decode together, one batch-graph step per
token for all of them; a page that stops is handed back at once and the next page's vision and
prefill take its slot.

Memory: a page is admitted only while the KV caches reserved for the pages in flight, each
sized for its prompt plus max_new_tokens, fit the budget; a page that does not fit beside the
others waits until the batch has drained and is then decoded alone (as a single page).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from model_cache.hunyuan.batch_decoder import BatchDecoder
from model_cache.hunyuan.generate import Generation, TokenStream, generate
from model_cache.hunyuan.sampling import Sampler

if TYPE_CHECKING:
    from model_cache.hunyuan.engine import HunyuanEngine, PageRun, PromptInputs

CACHE_RESERVE = 1.5  # SDPA grows a cache with this much headroom


@dataclass
class Job:
    index: int
    image: Image.Image
    inputs: "PromptInputs"
    stream: TokenStream
    prefill_s: float
    reserved: int  # KV-cache bytes held for this page
    started: float = field(default_factory=time.perf_counter)
    step_s: list[float] = field(default_factory=list)
    first_logits: np.ndarray | None = None
    batch_rows: int = 0  # sum over this page's steps of the pages stepped with it


class BatchScheduler:
    def __init__(self, engine: "HunyuanEngine", batch: BatchDecoder, budget_bytes: int):
        self.engine = engine
        self.batch = batch
        self.budget = budget_bytes
        self.jobs: dict[int, Job] = {}
        self.held: tuple[int, Image.Image, "PromptInputs"] | None = None

    def run(self, images: Iterable[Image.Image]) -> Iterator[tuple[int, "PageRun"]]:
        """(input index, PageRun) for every image, in the order the pages finish."""
        pages = enumerate(images)
        exhausted = False
        while True:
            while not exhausted and self.held is None and self.batch.free_slot() is not None:
                try:
                    index, image = next(pages)
                except StopIteration:
                    exhausted = True
                    break
                yield from self._admit(index, image)
            if not self.jobs:
                if self.held is not None:
                    yield self._alone(*self.held)
                    self.held = None
                    continue
                if exhausted:
                    return
                continue
            yield from self._step()

    def reserved(self) -> int:
        return sum(job.reserved for job in self.jobs.values())

    def _admit(self, index: int, image: Image.Image) -> Iterator[tuple[int, "PageRun"]]:
        engine = self.engine
        blank = engine.blank_run(image)
        if blank is not None:
            yield index, blank
            return
        inputs = engine.prompt_inputs(image)
        need = self._cache_bytes(len(inputs.ids))
        if self.jobs and self.reserved() + need > self.budget:
            self.held = (index, image, inputs)
            return
        if need > self.budget:  # too big to share: alone, with the whole budget
            yield self._alone(index, image, inputs)
            return
        t0 = time.perf_counter()
        stream = TokenStream(Sampler(engine.sampling, engine.cfg.vocab), engine.generation, inputs.ids,
                             started=t0)
        logits = engine.decoder.prefill(inputs.embeds, inputs.positions)
        job = Job(index, image, inputs, stream, time.perf_counter() - t0, need, first_logits=logits)
        if stream.done or stream.push(logits):
            engine.decoder.cache.reset()
            yield index, self._finish(job)
            return
        slot = self.batch.free_slot()
        self.batch.admit(slot, engine.decoder, stream.last)
        self.jobs[slot] = job

    def _step(self) -> Iterator[tuple[int, "PageRun"]]:
        engine = self.engine
        t0 = time.perf_counter()
        hidden = self.batch.step(engine.decoder.embed)
        slots = sorted(hidden)
        logits = engine.decoder.logits_rows(np.stack([hidden[j] for j in slots]))
        step_s = time.perf_counter() - t0
        for row, slot in enumerate(slots):
            job = self.jobs[slot]
            job.step_s.append(step_s)
            job.batch_rows += len(slots)
            if job.stream.push(logits[row]):
                self.batch.release(slot)
                del self.jobs[slot]
                yield job.index, self._finish(job)
            else:
                self.batch.state[slot].token = job.stream.last

    def _alone(self, index: int, image: Image.Image, inputs: "PromptInputs") -> tuple[int, "PageRun"]:
        engine = self.engine
        sampler = Sampler(engine.sampling, engine.cfg.vocab)
        gen = generate(engine.decoder, inputs.embeds, inputs.positions, inputs.ids, sampler, engine.generation)
        return index, engine.finish_page(image, inputs, gen, {"batch_mean": 1.0})

    def _finish(self, job: Job) -> "PageRun":
        stream = job.stream
        gen = Generation(stream.tokens, stream.probs, stream.stop, job.first_logits, job.prefill_s,
                         time.perf_counter() - job.started - job.prefill_s, job.step_s)
        mean = job.batch_rows / len(job.step_s) if job.step_s else 1.0
        return self.engine.finish_page(job.image, job.inputs, gen, {"batch_mean": mean})

    def _cache_bytes(self, prompt_tokens: int) -> int:
        engine = self.engine
        tokens = prompt_tokens + engine.generation.max_new_tokens
        return int(tokens * engine.kv_bytes_per_token() * CACHE_RESERVE)
