"""Handing freed memory back to the system between pages (glibc only; a no-op elsewhere).

A worker allocates and frees hundreds of MB per page (the detector's feature maps, line
crops, logits) from two threads (render and recognise), so glibc's heaps fill with free
chunks it keeps: over 500 pages two PP-OCRv6 tiny workers grew from 846 to 1189 MiB
(benchmarks/flat_memory.py). malloc_trim(0) after each group of pages returns the free pages
of every heap; it costs a few milliseconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018  (absent outside glibc)
        return libc
    except (OSError, AttributeError):
        return None


def release_free_memory() -> bool:
    """Return the heaps' free pages to the system; False where that cannot be done."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
