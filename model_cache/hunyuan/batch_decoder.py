"""Decode steps for up to `slots` pages at once through the batch graph (batch_graph.py).

A page enters a slot after its prefill (by the one-page Decoder, whose KV caches it takes over)
and leaves it when it stops; a free slot is fed a padding row with an empty cache and a 1x1
mask, which costs one tiny attention and nothing in the weight-bound layers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import ncnn
import numpy as np

from model_cache.hunyuan.batch_graph import ROW_INPUTS, batch_param, slot_cache_names, slot_mask
from model_cache.hunyuan.decoder import Decoder
from model_cache.hunyuan.graphs import GraphStore, to_mat, to_numpy
from model_cache.hunyuan.kv_dtype import bf16_attention
from model_cache.hunyuan.model_config import ModelConfig
from model_cache.hunyuan.rope import Rope

BATCH = "decoder_batch"  # graph name prefix; the slot count follows


@dataclass
class Slot:
    keys: list[ncnn.Mat]
    values: list[ncnn.Mat]
    length: int  # tokens in the cache
    delta: int  # decode position offset from the token index
    token: int = 0  # the token this slot feeds at the next step


@dataclass
class BatchDecoder:
    folder: Path
    cfg: ModelConfig
    graphs: GraphStore
    slots: int
    host_attention: bool = False
    storage: str | None = None
    bf16_kv: bool = False  # attention and its caches in bf16 (kv_dtype.py), as the Decoder's
    state: list[Slot | None] = field(init=False)
    step_s: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        cfg = self.cfg
        params = [(self.folder / f"dec_{i}.param").read_text() for i in range(cfg.layers)]
        bins = [self.folder / f"dec_{i}.bin" for i in range(cfg.layers)]
        text = batch_param(params, self.slots, cfg.heads, cfg.kv_heads, self.host_attention)
        self.name = f"{BATCH}{self.slots}"
        self.graphs.register_fused(self.name, bf16_attention(text) if self.bf16_kv else text, bins)
        if self.storage is not None or self.bf16_kv:
            settings = self.graphs.settings
            self.graphs.set_settings(self.name, replace(settings, dtype=self.storage or settings.dtype,
                                                        bf16_kv=self.bf16_kv))
        self.state = [None] * self.slots
        self._pad_row = np.zeros((1, cfg.hidden), dtype=np.float32)
        self._rope = Rope(cfg.head_dim, cfg.rope_base, cfg.mrope_section)

    def graph_names(self) -> list[str]:
        return [self.name]

    def free_slot(self) -> int | None:
        return next((j for j, s in enumerate(self.state) if s is None), None)

    def active(self) -> list[int]:
        return [j for j, s in enumerate(self.state) if s is not None]

    def admit(self, slot: int, decoder: Decoder, token: int) -> None:
        """Move the one-page decoder's freshly prefilled caches into `slot`."""
        cache = decoder.cache
        self.state[slot] = Slot(list(cache.keys), list(cache.values), cache.length, decoder.delta, token)
        cache.reset()

    def release(self, slot: int) -> None:
        self.state[slot] = None

    def step(self, embed) -> dict[int, np.ndarray]:
        """One token for every occupied slot (each fed its Slot.token); returns slot -> hidden
        row [hidden] of the last layer (the LM head is the caller's, on the rows it wants)."""
        cfg = self.cfg
        active = self.active()
        rows = np.repeat(self._pad_row, self.slots, axis=0)
        positions = np.zeros(self.slots, dtype=np.int64)
        for j in active:
            slot = self.state[j]
            rows[j] = embed([slot.token])[0]
            positions[j] = slot.length + slot.delta
        cos, sin = self._rope.cos_sin(positions)
        keep = [to_mat(rows), to_mat(cos), to_mat(sin)]
        inputs = dict(zip(ROW_INPUTS, keep))
        empty = ncnn.Mat()
        outs: list[str] = []
        for j in range(self.slots):
            slot = self.state[j]
            past = slot.length if slot is not None else 0
            inputs[slot_mask(j)] = to_mat(np.zeros((1, past + 1), dtype=np.float32))
            for layer in range(cfg.layers):
                k_in, v_in, k_out, v_out = slot_cache_names(layer, j)
                inputs[k_in] = slot.keys[layer] if slot is not None else empty
                inputs[v_in] = slot.values[layer] if slot is not None else empty
                if slot is not None:
                    outs += [k_out, v_out]
        t0 = time.perf_counter()
        results = self.graphs.run(self.name, inputs, ["out0", *outs], raw=tuple(outs))
        self.step_s = time.perf_counter() - t0
        hidden = to_numpy(results[0]).reshape(self.slots, -1)
        grown = iter(results[1:])
        for j in active:
            slot = self.state[j]
            for layer in range(cfg.layers):
                slot.keys[layer], slot.values[layer] = next(grown), next(grown)
            slot.length += 1
        self.graphs.done(self.name)
        return {j: hidden[j] for j in active}
