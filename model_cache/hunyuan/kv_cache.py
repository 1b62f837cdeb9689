"""Per-layer K/V caches, kept as opaque ncnn Mats and handed back to SDPA unchanged.

SDPA grows a cache in place when it was allocated by the net's kvcache_allocator, so the Mats
returned by one step are exactly what the next step must receive; they are never copied to numpy.
"""

from __future__ import annotations

import ncnn


class KVCache:
    def __init__(self, layers: int, allocator: ncnn.Allocator):
        self.layers = layers
        self.reset()
        self.allocator = allocator  # set last: released after the cache Mats it allocated

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
