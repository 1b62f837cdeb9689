#!/usr/bin/env python3
"""Run a command in a memory cgroup of its own, optionally under a limit, and print what the kernel
charged it beside the process tree's sampled peaks: whether a job fits a container's memory limit.

    python benchmarks/memory_limit.py [--limit 1e9] [--interval 0.05] -- pagerunner run X.pdf -o OUT -q

One table row: exit status, OOM kills, the cgroup's peak charge (anonymous memory and the page cache
the job touched), the highest sum of the tree's RSS (a shared library counted in every process that
maps it, as benchmarks/procmem.py gives it) and of its PSS (shared pages split), and the wall time.
Under a limit the kernel first gives back page cache, then kills. Needs root and the memory
controller: cgroup v1 (/sys/fs/cgroup/memory) or v2 (/sys/fs/cgroup with `memory` in
cgroup.controllers).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from procmem import pss_mib, tree_rss_by_pid  # noqa: E402
from report_md import markdown_table  # noqa: E402

V1_ROOT = Path("/sys/fs/cgroup/memory")
V2_ROOT = Path("/sys/fs/cgroup")
MIB = 1 << 20


@dataclass
class MemoryCgroup:
    """A fresh memory cgroup, v1 or v2, with the few files this benchmark reads and writes."""
    path: Path
    v2: bool

    @classmethod
    def create(cls, name: str) -> "MemoryCgroup":
        if (V1_ROOT / "cgroup.procs").exists():
            group = cls(V1_ROOT / name, v2=False)
        elif "memory" in _read(V2_ROOT / "cgroup.controllers").split():
            group = cls(V2_ROOT / name, v2=True)
        else:
            raise SystemExit("no memory cgroup controller here (cgroup v1 or v2 with memory)")
        group.path.mkdir()
        return group

    def limit(self, limit_bytes: int) -> None:
        """The limit on memory and on memory plus swap, so a job cannot spill into swap."""
        if self.v2:
            self._write("memory.max", limit_bytes)
            self._write("memory.swap.max", 0, optional=True)
        else:
            self._write("memory.limit_in_bytes", limit_bytes)
            self._write("memory.memsw.limit_in_bytes", limit_bytes, optional=True)

    def join(self) -> None:
        """Put the calling process in the group (run in the child between fork and exec)."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def peak_mib(self) -> float:
        name = "memory.peak" if self.v2 else "memory.max_usage_in_bytes"
        return int(_read(self.path / name) or 0) / MIB

    def oom_kills(self) -> int:
        text = _read(self.path / ("memory.events" if self.v2 else "memory.oom_control"))
        counts = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
        return int(counts.get("oom_kill", 0))

    def remove(self) -> None:
        for _ in range(50):  # the last exited processes may still be charged for a moment
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)

    def _write(self, name: str, value: int, optional: bool = False) -> None:
        target = self.path / name
        if optional and not target.exists():
            return
        target.write_text(str(value))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def run(argv: list[str], limit: int | None, interval: float) -> dict[str, object]:
    group = MemoryCgroup.create(f"pagerunner-bench-{os.getpid()}")
    try:
        if limit:
            group.limit(limit)
        start = time.perf_counter()
        proc = subprocess.Popen(argv, preexec_fn=group.join)
        rss_peak = pss_peak = 0.0
        while proc.poll() is None:
            rss = tree_rss_by_pid(proc.pid)  # one walk of the tree for both sums
            rss_peak = max(rss_peak, sum(rss.values()))
            pss_peak = max(pss_peak, sum(pss_mib(pid) for pid in rss))
            time.sleep(interval)
        wall = time.perf_counter() - start
        return {"limit": f"{limit:.3g} bytes" if limit else "none", "exit": proc.returncode,
                "OOM kills": group.oom_kills(), "cgroup peak MiB": round(group.peak_mib()),
                "RSS sum peak MiB": round(rss_peak), "PSS sum peak MiB": round(pss_peak),
                "wall s": round(wall, 1)}
    finally:
        group.remove()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=float, help="memory limit in bytes (e.g. 1e9); none by default")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between samples of the tree")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    row = run(command, int(args.limit) if args.limit else None, args.interval)
    print(markdown_table(list(row), [[str(v) for v in row.values()]]))


if __name__ == "__main__":
    main()
