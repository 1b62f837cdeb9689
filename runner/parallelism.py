"""How many worker processes, and how many engine threads each, when the user does not say.

PP-OCR on a CPU is fastest as one single-threaded process per core: a 48-pixel line crop gives
ncnn's per-layer threads too little to share (each of ~90 layers ends in a barrier), and the
page's Python steps (DB post-processing, crop rectification, CTC decoding, layout) hold the GIL
(measured on 2 cores, PP-OCRv6 tiny, 20 dense pages: 2 x 1 took 24.5 s, 1 x 2 38.2 s; see
docs/benchmarks.md). Each such worker holds its own detector buffers, so the count is capped by
the memory the host has free. Other engines (HunyuanOCR holds a 1B model) get one worker that
uses every core; a GPU keeps its owner/feeder plan (job.py); Ray keeps its per-actor request.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

# Highest RSS of one ppocr worker at 200 dpi (PP-OCRv5 mobile, detector at 1600 px: 733 MiB
# measured; PP-OCRv6 tiny ~480). Only used to cap the automatic worker count.
PPOCR_WORKER_MIB = 800
MEMORY_SHARE = 0.6  # of MemAvailable, for the automatic worker count
LEGACY_THREADS = 2  # GPU feeders and Ray actors, as before automatic plans existed


@dataclass(frozen=True)
class Parallelism:
    workers: int
    threads: int


def usable_cores() -> int:
    """CPUs this process may run on (its affinity mask, e.g. taskset or a container's cpuset)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def available_memory_mib() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def plan(engine: str, device: str, executor: str, workers: int | None, threads: int | None,
         cores: int | None = None, memory_mib: int | None = None) -> Parallelism:
    """Fill in what the user left out (None); what the user gave is kept as given."""
    cores = cores or usable_cores()
    if executor == "ray" or (engine == "ppocr" and device != "cpu"):
        return Parallelism(workers or 1, threads or LEGACY_THREADS)
    if executor == "inline" or engine != "ppocr":
        count = workers or 1
        return Parallelism(count, threads or max(1, cores // count))
    if workers is None:
        per = threads or 1
        workers = max(1, min(cores // per, _memory_cap(memory_mib)))
    return Parallelism(workers, threads or max(1, cores // workers))


def _memory_cap(memory_mib: int | None) -> int:
    if memory_mib is None:
        memory_mib = available_memory_mib()
    if memory_mib is None:
        return 1 << 16
    return max(1, int(memory_mib * MEMORY_SHARE) // PPOCR_WORKER_MIB)
