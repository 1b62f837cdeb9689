"""The text decoder: token embedding (numpy, memory-mapped), 24 layer graphs with the SDPA KV
cache, and the LM head. Hidden states stay ncnn Mats from layer to layer."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import ncnn
import numpy as np

from model_cache.hunyuan.batch_graph import any_rows
from model_cache.hunyuan.fuse import cache_names, fused_param
from model_cache.hunyuan.graphs import GraphStore, to_mat, to_numpy
from model_cache.hunyuan.kv_cache import KVCache
from model_cache.hunyuan.kv_dtype import bf16_attention
from model_cache.hunyuan.kvcache_param import CACHE_OUT
from model_cache.hunyuan.model_config import ModelConfig
from model_cache.hunyuan.rope import Rope

FUSED = "decoder"  # name of the in-memory graph of all layers
FUSED_STEP = "decoder_step"  # the same with attention on the host (Vulkan decode)
MASKED = -30000.0  # large enough to zero a softmax weight, small enough for fp16 masks


class Decoder:
    def __init__(self, folder: Path, cfg: ModelConfig, graphs: GraphStore, rope_variant: str,
                 fused: bool = False, host_attention: bool = False, storage: str | None = None,
                 bf16_kv: bool = False):
        """storage: run the decoder graphs with this storage setting instead of the folder's dtype
        (int8 folders: "bf16" keeps activations and the KV cache in bf16; the block-quantized
        Gemms compute in fp32 whatever it is). bf16_kv: attention and its KV caches in bf16,
        every other layer as the folder says (kv_dtype.py)."""
        self.cfg = cfg
        self.fused = fused
        # With host attention the prefill's attention runs on the host too: caches made by
        # Vulkan SDPA come back packed for the GPU and host SDPA cannot continue them.
        self.graph = FUSED_STEP if host_attention else FUSED
        layer_text = bf16_attention if bf16_kv else (lambda text: text)
        params = [(folder / f"dec_{i}.param").read_text() for i in range(cfg.layers)]
        bins = [folder / f"dec_{i}.bin" for i in range(cfg.layers)]
        if fused:
            graphs.register_fused(self.graph, layer_text(fused_param(params, host_attention)), bins)
        elif bf16_kv:
            for i, (text, path) in enumerate(zip(params, bins)):
                graphs.register_fused(f"dec_{i}", layer_text(text), [path])
        graphs.register_fused("lm_head", any_rows((folder / "lm_head.param").read_text()),
                              [folder / "lm_head.bin"])
        self.graphs = graphs
        if storage is not None or bf16_kv:
            layers = replace(graphs.settings, dtype=storage or graphs.settings.dtype, bf16_kv=bf16_kv)
            for name in self.graph_names()[:-1]:
                graphs.set_settings(name, layers)
            if storage is not None:
                graphs.set_settings("lm_head", replace(graphs.settings, dtype=storage))
        self.rope_variant = rope_variant
        self.table = np.load(folder / "embed_tokens.npy", mmap_mode="r")
        self.rope = Rope(cfg.head_dim, cfg.rope_base, cfg.mrope_section)
        self.cache = KVCache(cfg.layers, graphs.allocators())
        self.delta = 0  # decode position offset from the token index
        self.step_split = (0.0, 0.0)  # last step: seconds in the layers, in the LM head

    def graph_names(self) -> list[str]:
        if self.fused:
            return [self.graph, "lm_head"]
        return [*(f"dec_{i}" for i in range(self.cfg.layers)), "lm_head"]

    def embed(self, ids: list[int] | np.ndarray) -> np.ndarray:
        return np.asarray(self.table[np.asarray(ids, dtype=np.int64)], dtype=np.float32)

    def prefill(self, embeds: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Run the whole prompt (fresh cache); return the logits of its last position."""
        self.cache.reset()
        length = embeds.shape[0]
        self.delta = int(positions.max()) + 1 - length
        cos, sin = self.rope.cos_sin(positions)
        cos_1d, sin_1d = self.rope.cos_sin(np.arange(length)) if self.rope_variant == "1.0" else (cos, sin)
        mask = np.triu(np.full((length, length), MASKED, dtype=np.float32), k=1)
        rope_mats = (to_mat(cos), to_mat(sin))
        plain_mats = rope_mats if self.rope_variant != "1.0" else (to_mat(cos_1d), to_mat(sin_1d))
        mask_mat = to_mat(mask)
        x = self._stack(to_mat(embeds), mask_mat, rope_mats, plain_mats, self.graph)
        self.cache.advance(length)
        last = to_numpy(x).reshape(length, -1)[-1:]
        return self.logits(last)

    def step(self, token: int) -> np.ndarray:
        """Feed one generated token; return the next logits."""
        position = self.cache.length + self.delta
        cos, sin = self.rope.cos_sin(np.array([position]))
        c, s = to_mat(cos), to_mat(sin)
        mask = to_mat(np.zeros((1, self.cache.length + 1), dtype=np.float32))
        t0 = time.perf_counter()
        x = self._stack(to_mat(self.embed([token])), mask, (c, s), (c, s), self.graph)
        self.cache.advance(1)
        hidden = to_numpy(x).reshape(1, -1)
        t1 = time.perf_counter()
        logits = self.logits(hidden)
        self.step_split = (t1 - t0, time.perf_counter() - t1)
        return logits

    def logits(self, hidden: np.ndarray) -> np.ndarray:
        return self.logits_rows(hidden).reshape(-1)

    def logits_rows(self, hidden: np.ndarray) -> np.ndarray:
        """[rows, hidden] -> [rows, vocab]: the LM head once for several pages' last rows."""
        (out,) = self.graphs.run("lm_head", {"in0": to_mat(hidden)}, ["out0"])
        self.graphs.done("lm_head")
        return to_numpy(out).reshape(hidden.shape[0], -1)

    def _stack(self, x: ncnn.Mat, mask: ncnn.Mat, rope0: tuple[ncnn.Mat, ncnn.Mat],
               rope: tuple[ncnn.Mat, ncnn.Mat], graph: str) -> ncnn.Mat:
        """All layers: rope0 (cos, sin) for layer 0, rope for the others."""
        if self.fused:
            return self._fused_stack(x, mask, rope0, rope, graph)
        for layer in range(self.cfg.layers):
            c, s = rope0 if layer == 0 else rope
            x = self._layer(layer, x, mask, c, s)
        return x

    def _fused_stack(self, x, mask, rope0, rope, graph: str) -> ncnn.Mat:
        inputs = {"in0": x, "in1": mask, "in2": rope[0], "in3": rope[1], "cos0": rope0[0], "sin0": rope0[1]}
        outs: list[str] = []
        for layer in range(self.cfg.layers):
            k_in, v_in, k_out, v_out = cache_names(layer)
            inputs[k_in], inputs[v_in] = self.cache.keys[layer], self.cache.values[layer]
            outs += [k_out, v_out]
        results = self.graphs.run(graph, inputs, ["out0", *outs], raw=tuple(outs))
        for layer in range(self.cfg.layers):
            self.cache.update(layer, results[1 + 2 * layer], results[2 + 2 * layer])
        self.graphs.done(graph)
        return results[0]

    def _layer(self, layer: int, x: ncnn.Mat, mask: ncnn.Mat, cos: ncnn.Mat, sin: ncnn.Mat) -> ncnn.Mat:
        name = f"dec_{layer}"
        inputs = {"in0": x, "in1": mask, "in2": cos, "in3": sin, **self.cache.inputs(layer)}
        out, key, value = self.graphs.run(name, inputs, ["out0", *CACHE_OUT], raw=CACHE_OUT)
        self.cache.update(layer, key, value)
        self.graphs.done(name)
        return out
