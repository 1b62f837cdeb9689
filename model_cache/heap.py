"""glibc's heap in a process that allocates and frees hundreds of MB per page (glibc only; a
no-op elsewhere): one libc handle for the mmap cap of crop threads and the trim between pages.

A worker allocates and frees hundreds of MB per page (the detector's feature maps, line
crops, logits) from two threads (render and recognise), so glibc's heaps fill with free
chunks it keeps: over 500 pages two PP-OCRv6 tiny workers grew from 846 to 1189 MiB
(benchmarks/flat_memory.py). malloc_trim(0) after each group of pages returns the free pages
of every heap. Its cost is the next page faulting that memory in again: ~0.1 s of system time a
page on 2 cores; trimming every 8 pages instead saved that but let a 500-page run peak 90 MiB
higher, so it stays per group (docs/benchmarks.md, stop 14).
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


M_MMAP_THRESHOLD = -3  # glibc mallopt parameter
MMAP_THRESHOLD = 1 << 20


def cap_mmap_threshold() -> bool:
    """Serve every allocation of 1 MiB or more with its own mmap, returned on free. glibc
    otherwise raises the threshold each time such a block is freed, so the blobs and logits of
    crops of ever new widths, allocated by two threads in two arenas, stay in the heaps: PP-OCRv5
    peaked at 813 MB with crop threads against 590 one crop at a time, 574 with this cap
    (two dense pages, measured). Process-wide."""
    libc = _libc()
    return bool(libc is not None and libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def release_free_memory() -> bool:
    """Return the heaps' free pages to the system; False where that cannot be done."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
