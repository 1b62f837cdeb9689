"""Loading and running the split ncnn graphs.

Python traps this module exists to contain (all confirmed with ncnn 1.0.20261020):
- ncnn.Mat(ndarray) wraps without copying and without holding a reference: the array must stay
  alive in a named variable until .clone() has copied it.
- Without opt.kvcache_allocator the SDPA cache is garbage; the allocators must outlive every Net
  and every Mat they gave out, so they are the last attributes of every holder (attributes are
  released in order) and close() drops nets first.
- extract(name) (type 0) returns a converted copy of a blob; for the KV cache that copy loses
  the cache's capacity stride and the next step reads scrambled keys. Caches are extracted raw
  (type 1), which hands back SDPA's own Mat to be grown in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import ncnn
import numpy as np


@dataclass(frozen=True)
class NetSettings:
    threads: int = 2
    gpu: bool = False
    dtype: str = "fp32"  # storage precision of the converted weights (int8: fp32 but for the
    # block-quantized Gemms, which carry their own format and ignore these options)
    bf16_kv: bool = False  # bf16 storage on, for a graph whose layers but SDPA opt out (kv_dtype.py)


def to_mat(array: np.ndarray) -> ncnn.Mat:
    owned = np.ascontiguousarray(array, dtype=np.float32)
    mat = ncnn.Mat(owned).clone()
    del owned
    return mat


def to_numpy(mat: ncnn.Mat) -> np.ndarray:
    return np.array(mat, dtype=np.float32, copy=True)


class GraphStore:
    """All graphs of one model folder; resident (loaded once) or loaded for each use."""

    def __init__(self, folder: Path, settings: NetSettings, resident: bool = True):
        self.folder = folder
        self.settings = settings
        self.resident = resident
        self._nets: dict[str, ncnn.Net] = {}
        self._settings: dict[str, NetSettings] = {}  # graphs loaded with other settings
        self._fused: dict[str, tuple[str, list[Path]]] = {}
        # Shared pools: with ncnn's per-net defaults every one of the ~50 graphs keeps its own
        # cache of freed activation blocks, which reached 20 GB on a 1000x1400 page.
        self.blob_allocator = ncnn.PoolAllocator()
        self.workspace_allocator = ncnn.PoolAllocator()
        for pool in (self.blob_allocator, self.workspace_allocator):
            pool.set_size_compare_ratio(0.0)  # any cached block that is large enough may be reused
        self.kv_allocator = ncnn.UnlockedPoolAllocator()

    def set_settings(self, name: str, settings: NetSettings) -> None:
        """Load graph `name` with `settings` instead of the store's (before its first use)."""
        self._settings[name] = settings

    def register_fused(self, name: str, param_text: str, bins: list[Path]) -> None:
        """A graph assembled in memory (see fuse.py) whose weights are read from `bins` in order."""
        self._fused[name] = (param_text, bins)

    def net(self, name: str) -> ncnn.Net:
        net = self._nets.get(name)
        if net is None:
            net = self._load(name)
            self._nets[name] = net
        return net

    def done(self, name: str) -> None:
        """Called after each use: frees the graph unless graphs stay resident."""
        if not self.resident and name in self._nets:
            self._nets.pop(name).clear()

    def preload(self, names: list[str]) -> None:
        for name in names:
            self.net(name)

    def run(self, name: str, inputs: dict[str, ncnn.Mat], outputs: list[str],
            raw: tuple[str, ...] = ()) -> list[ncnn.Mat]:
        """Run graph `name`; blobs listed in `raw` come back unconverted (KV caches)."""
        ex = self.net(name).create_extractor()
        ex.set_blob_allocator(self.blob_allocator)
        ex.set_workspace_allocator(self.workspace_allocator)
        for blob, mat in inputs.items():
            ex.input(blob, mat)
        results = []
        for blob in outputs:
            ret, mat = ex.extract(blob, 1 if blob in raw else 0)
            if ret != 0:
                raise RuntimeError(f"ncnn graph {name}: extracting {blob} failed ({ret})")
            results.append(mat)
        return results

    def allocators(self) -> tuple[ncnn.Allocator, ...]:
        return (self.blob_allocator, self.workspace_allocator, self.kv_allocator)

    def trim(self) -> None:
        """Give cached activation blocks back (between pages: page sizes differ)."""
        self.blob_allocator.clear()
        self.workspace_allocator.clear()

    def close(self) -> None:
        for net in self._nets.values():
            net.clear()
        self._nets.clear()

    def _load(self, name: str) -> ncnn.Net:
        net = ncnn.Net()
        _configure(net.opt, self._settings.get(name, self.settings))
        net.opt.kvcache_allocator = self.kv_allocator
        if self.settings.gpu:
            net.set_vulkan_device(0)
        if name in self._fused:
            return self._load_fused(net, name)
        param, model = self.folder / f"{name}.param", self.folder / f"{name}.bin"
        if net.load_param(str(param)) != 0 or net.load_model(str(model)) != 0:
            raise RuntimeError(f"ncnn could not load {param.name}/{model.name}")
        return net

    def _load_fused(self, net: ncnn.Net, name: str) -> ncnn.Net:
        from model_cache.hunyuan.fuse import ChainedBinReader

        text, bins = self._fused[name]
        reader = ChainedBinReader(bins)
        try:
            if net.load_param_mem(text) != 0 or net.load_model(reader) != 0:
                raise RuntimeError(f"ncnn could not load the fused graph {name}")
        finally:
            reader.close()
        return net


def _configure(opt: ncnn.Option, settings: NetSettings) -> None:
    opt.num_threads = settings.threads
    opt.use_vulkan_compute = settings.gpu
    low = settings.dtype
    # fp32 must mean fp32 end to end: ncnn defaults to fp16 storage/arithmetic where supported.
    opt.use_fp16_storage = low == "fp16" or (settings.gpu and low == "bf16")
    opt.use_fp16_packed = opt.use_fp16_storage
    # fp16 arithmetic only where weights are already stored in 16 bits and on Vulkan, where it
    # is the fast path; x86 would gain nothing and lose precision.
    opt.use_fp16_arithmetic = settings.gpu and low in ("fp16", "bf16")
    opt.use_bf16_storage = (low == "bf16" and not settings.gpu) or settings.bf16_kv
    opt.use_bf16_packed = opt.use_bf16_storage
