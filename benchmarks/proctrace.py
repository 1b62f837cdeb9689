#!/usr/bin/env python3
"""Runs a pagerunner command and writes every process's RSS once a second, with the pages done so
far (lines of OUT/results.jsonl), to a CSV; then prints each process's lowest and highest RSS per
window of pages and the tree's peak. benchmarks/flat_memory.py gives the tree alone; this tells
the driver and each worker apart.

    python benchmarks/proctrace.py --csv trace.csv [--window 100] -- pagerunner run X.pdf -o OUT ...
"""

from __future__ import annotations

import argparse
import collections
import csv
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from procmem import tree_rss_by_pid  # noqa: E402
from throughput import count_lines  # noqa: E402


def trace(argv: list[str], results: Path, interval: float) -> tuple[int, float, list[tuple[float, int, int, int]]]:
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    samples: list[tuple[float, int, int, int]] = []  # seconds, pid, MiB, pages done
    while proc.poll() is None:
        now, done = time.monotonic() - start, count_lines(results)
        samples += [(now, pid, round(mib), done) for pid, mib in tree_rss_by_pid(proc.pid).items()]
        time.sleep(interval)
    return proc.returncode, time.monotonic() - start, samples


def report(samples: list[tuple[float, int, int, int]], window: int) -> str:
    tree: dict[float, int] = collections.defaultdict(int)
    per: dict[int, dict[int, list[int]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for seconds, pid, mib, done in samples:
        tree[seconds] += mib
        per[pid][done // window].append(mib)
    lines = [f"tree peak {max(tree.values(), default=0)} MiB"]
    for pid, windows in per.items():
        cells = " ".join(f"{w * window}+: {min(v)}/{max(v)}" for w, v in sorted(windows.items()))
        lines.append(f"pid {pid} (lowest/highest MiB per {window} pages) {cells}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", type=Path, required=True)
    parser.add_argument("--window", type=int, default=100)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    out = Path(argv[argv.index("-o") + 1])
    code, seconds, samples = trace(argv, out / "results.jsonl", args.interval)
    with open(args.csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["seconds", "pid", "rss_mib", "pages_done"])
        writer.writerows((f"{s:.1f}", pid, mib, done) for s, pid, mib, done in samples)
    print(f"exit {code} in {seconds:.0f} s")
    print(report(samples, args.window))


if __name__ == "__main__":
    main()
