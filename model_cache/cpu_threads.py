"""The thread pools of the libraries a page pipeline calls (numpy's BLAS, OpenCV), held to the
engine's thread budget.

Both start one thread per core by default. A run puts several engine processes side by side
(CPU workers, or a GPU owner's feeders), each given a share of the cores, so a library's own
pool of one thread per core in every process oversubscribes the machine: on a 16-core H200 host
twelve GPU feeders, unlimited, spent 4.4 s a page in the skew search's dot products where a CPU
worker spent 0.18 s (docs/benchmarks.md, "The H200 in stop 39"). The limit is the process's
from the call on.
"""

from __future__ import annotations


def limit_library_threads(threads: int) -> None:
    """numpy's BLAS (whichever threadpoolctl finds loaded) and OpenCV get `threads` threads."""
    import cv2
    from threadpoolctl import threadpool_limits

    threads = max(1, int(threads))
    threadpool_limits(limits=threads, user_api="blas")
    cv2.setNumThreads(threads)
