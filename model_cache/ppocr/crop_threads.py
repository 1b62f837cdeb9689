"""Recognition on a CPU spread over line crops instead of inside each layer.

ncnn parallelises every layer over channel packs with OpenMP. A 48-pixel line crop is small:
its 24-192 channels make 3-24 packs of 8, so a layer's threads are often unevenly loaded, and
every one of the recogniser's ~90 layers ends in a barrier (with OMP_WAIT_POLICY=PASSIVE, as
the CLI sets it, a sleep and a wake-up). Crops are independent, so on a CPU each of `workers`
Python threads runs whole crops through the net with one ncnn thread (ncnn's extract releases
the GIL): no barrier, no idle thread until the last crop. Longest crops go first, so the
threads finish together. Each crop's text is what the one-thread net gives alone.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

import ncnn
import numpy as np

from model_cache.engine import EngineError
from model_cache.heap import cap_mmap_threshold
from model_cache.ppocr.assets import NetFiles
from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions

T = TypeVar("T")


class CropThreads:
    """One ncnn net (num_threads=1) shared by `workers` threads; each call of `map` gives every
    thread its own pool allocators (ncnn's pools are not thread-safe), dropped at the end."""

    def __init__(self, files: NetFiles, runtime: RuntimeOptions, workers: int):
        if runtime.gpu:
            raise ValueError("crop threads are for the CPU")
        self.net = NcnnNet(files, RuntimeOptions(1, direct_conv=runtime.direct_conv))
        self.workers = max(1, workers)
        cap_mmap_threshold()
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="rec")
        self._stats_lock = threading.Lock()

    def map(self, crops: list[np.ndarray], to_mat: Callable[[np.ndarray], ncnn.Mat],
            decode: Callable[[np.ndarray], T], output: str | None = None) -> list[T]:
        """decode(output blob of crop) for every crop, in the crops' order."""
        allocators: queue.SimpleQueue = queue.SimpleQueue()
        for _ in range(self.workers):
            allocators.put((ncnn.UnlockedPoolAllocator(), ncnn.PoolAllocator()))

        def one(index: int) -> tuple[int, T]:
            pair = allocators.get()
            try:
                return index, decode(self._extract(to_mat(crops[index]), output, pair))
            finally:
                allocators.put(pair)

        longest_first = sorted(range(len(crops)), key=lambda i: -crops[i].shape[1])
        results: list = [None] * len(crops)
        for index, result in self._pool.map(one, longest_first):
            results[index] = result
        return results

    def _extract(self, mat: ncnn.Mat, output: str | None, pair: tuple) -> np.ndarray:
        start = time.perf_counter()
        with self.net.net.create_extractor() as ex:
            ex.set_blob_allocator(pair[0])
            ex.set_workspace_allocator(pair[1])
            ex.input(self.net.files.input, mat)
            ret, out = ex.extract(output or self.net.files.output)
            if ret != 0:
                raise EngineError(f"ncnn extract failed ({ret}) in {self.net.files.param.name}")
            result = np.array(out, copy=True)
        with self._stats_lock:
            self.net.stats.add(1, result.nbytes, mat.w * mat.h * mat.c * 4, time.perf_counter() - start)
        return result
