"""Per-layer K/V caches, kept as opaque ncnn Mats and handed back to SDPA unchanged.

SDPA grows a cache in place when it was allocated by the net's kvcache_allocator, so the Mats
returned by one step are exactly what the next step must receive; they are never copied to numpy.
"""

from __future__ import annotations

import ncnn


class KVCache:
    def __init__(self, layers: int, allocators: tuple[ncnn.Allocator, ...]):
        self.layers = layers
        self.reset()
        # Set last, so released after the cache Mats: SDPA grows caches with the kv-cache
        # allocator, and on Vulkan the downloaded caches come from the blob allocator.
        self.allocators = allocators

    def reset(self) -> None:
        self.keys: list[ncnn.Mat] = [ncnn.Mat() for _ in range(self.layers)]
        self.values: list[ncnn.Mat] = [ncnn.Mat() for _ in range(self.layers)]
        self.length = 0

    def inputs(self, layer: int) -> dict[str, ncnn.Mat]:
        return {"cache_k": self.keys[layer], "cache_v": self.values[layer]}

    def update(self, layer: int, key: ncnn.Mat, value: ncnn.Mat) -> None:
        self.keys[layer] = key
        self.values[layer] = value

    def advance(self, tokens: int) -> None:
        self.length += tokens
