"""How many worker processes, and how many engine threads each, when the user does not say.

PP-OCR on a CPU is fastest as one process per physical core: a 48-pixel line crop gives ncnn's
per-layer threads too little to share (each of ~90 layers ends in a barrier), and the page's
Python steps (DB post-processing, crop rectification, CTC decoding, layout) hold the GIL. On 2
cores (no SMT), PP-OCRv6 tiny, 12 dense pages side by side: 2 workers x 1 thread 34.1 pages/min,
1 x 2 26.5. Hardware threads of one core share its units, so they go to one worker as its threads
(an H200 host's 16 vCPUs: 8 x 2 97.2 pages/min, 16 x 1 88.8; docs/benchmarks.md). Each worker
holds its own detector buffers, so the count is capped by the memory the host has free. Other
engines (HunyuanOCR holds a 1B model) get one worker that uses every core; a GPU keeps its
owner/feeder plan (job.py); Ray keeps its per-actor request.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# Highest RSS of one ppocr worker at 200 dpi (PP-OCRv5 mobile, detector at 1600 px: 733 MiB
# measured; PP-OCRv6 tiny ~480). Only used to cap the automatic worker count.
PPOCR_WORKER_MIB = 800
MEMORY_SHARE = 0.6  # of MemAvailable, for the automatic worker count
LEGACY_THREADS = 2  # GPU feeders and Ray actors, as before automatic plans existed
TOPOLOGY = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class Parallelism:
    workers: int
    threads: int


def usable_cpus() -> set[int]:
    """CPUs this process may run on (its affinity mask, e.g. taskset or a container's cpuset)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def physical_cores(cpus: set[int], topology: Path = TOPOLOGY) -> int:
    """How many physical cores the given logical CPUs sit on (SMT siblings count once); the
    number of CPUs where Linux does not say."""
    cores = set()
    for cpu in cpus:
        base = topology / f"cpu{cpu}" / "topology"
        try:
            cores.add(((base / "physical_package_id").read_text().strip(), (base / "core_id").read_text().strip()))
        except OSError:
            return max(1, len(cpus))
    return max(1, len(cores))


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
         cores: int | None = None, memory_mib: int | None = None,
         physical: int | None = None) -> Parallelism:
    """Fill in what the user left out (None); what the user gave is kept as given. `cores`:
    logical CPUs, `physical`: the physical cores under them (both read from the host if None)."""
    if cores is None:
        cpus = usable_cpus()
        cores, physical = max(1, len(cpus)), physical or physical_cores(cpus)
    physical = min(cores, physical or cores)
    if executor == "ray" or (engine == "ppocr" and device != "cpu"):
        return Parallelism(workers or 1, threads or LEGACY_THREADS)
    if executor == "inline" or engine != "ppocr":
        count = workers or 1
        return Parallelism(count, threads or max(1, cores // count))
    if workers is None:
        per = threads or max(1, cores // physical)  # one worker per physical core by default
        workers = max(1, min(cores // per, _memory_cap(memory_mib)))
    return Parallelism(workers, threads or max(1, cores // workers))


def _memory_cap(memory_mib: int | None) -> int:
    if memory_mib is None:
        memory_mib = available_memory_mib()
    if memory_mib is None:
        return 1 << 16
    return max(1, int(memory_mib * MEMORY_SHARE) // PPOCR_WORKER_MIB)
