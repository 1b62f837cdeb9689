"""Run a command and measure it: wall time, peak resident memory of its whole process tree
(sampled from /proc), and the largest single process's peak (the kernel's ru_maxrss)."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Measurement:
    seconds: float
    returncode: int
    tree_peak_mib: float  # sum of RSS over the process tree, highest sample
    process_peak_mib: float  # ru_maxrss of the largest single process in the tree
    samples: list[tuple[float, float, int]] = field(default_factory=list)  # (t, tree MiB, progress)
    stderr_tail: str = ""


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # the command name may contain spaces and parentheses: fields start after the last ')'
        fields = stat[stat.rfind(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def tree_rss_by_pid(root: int) -> dict[int, float]:
    """Resident MiB of `root` and of each of its descendants."""
    children = _children_map()
    found, stack = {}, [root]
    while stack:
        pid = stack.pop()
        try:
            resident = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            resident = 0
        found[pid] = resident * PAGE_SIZE / (1 << 20)
        stack.extend(children.get(pid, []))
    return found


def pss_mib(pid: int) -> float:
    """Proportional set size of a process in MiB (0 once it has gone): a page shared by n processes
    counts 1/n in each, so a sum over processes counts it once."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0.0
    return next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0) / 1024


def tree_rss_mib(root: int) -> float:
    return sum(tree_rss_by_pid(root).values())


def measure(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
            interval: float = 0.25, progress: Callable[[], int] | None = None,
            timeout: float = 7200) -> Measurement:
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    samples: list[tuple[float, float, int]] = []
    peak = 0.0
    stderr_chunks: list[bytes] = []
    os.set_blocking(proc.stderr.fileno(), False)  # type: ignore[union-attr]
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        now = time.perf_counter() - started
        rss = tree_rss_mib(proc.pid)
        peak = max(peak, rss)
        samples.append((now, rss, progress() if progress else 0))
        _drain(proc, stderr_chunks)
        if now > timeout:
            proc.kill()
        time.sleep(interval)
    seconds = time.perf_counter() - started
    _drain(proc, stderr_chunks)
    proc.returncode = os.waitstatus_to_exitcode(status)
    tail = b"".join(stderr_chunks).decode("utf-8", "replace")[-2000:]
    return Measurement(seconds, proc.returncode, peak, usage.ru_maxrss / 1024, samples, tail)


def _drain(proc: subprocess.Popen, chunks: list[bytes]) -> None:
    try:
        data = proc.stderr.read()  # type: ignore[union-attr]
    except (BlockingIOError, ValueError):
        return
    if data:
        chunks.append(data)
        if sum(len(c) for c in chunks) > 1 << 20:
            del chunks[:-4]


if __name__ == "__main__":  # python benchmarks/procmem.py COMMAND [ARGS...]
    import sys

    m = measure(sys.argv[1:], interval=0.05)
    print(f"wall {m.seconds:.1f} s, exit {m.returncode}, tree peak {m.tree_peak_mib:.0f} MiB, "
          f"largest process {m.process_peak_mib:.0f} MiB")
