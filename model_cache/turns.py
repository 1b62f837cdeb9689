"""Turns at a memory-heavy step across the worker processes of one run.

Two PP-OCRv5 CPU workers that detect at the same moment hold two detectors' feature maps
(~440 MiB each on a dense A4 page at 200 dpi): their tree peaked at 1.27-1.31 GiB. Workers that
share a Turns lock file run that step one at a time. The lock is flock(2) on the file, so the
kernel frees it when its holder dies (a crashed or killed worker never blocks the others), and
nothing has to be cleaned up between runs: the file stays empty.

flock locks belong to an open file description: a Turns object excludes other processes, not
other threads of its own process (each CPU worker runs its detector on one thread).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Turns:
    """`taken()` holds the turn of the processes sharing `path`; with no path it never waits."""

    def __init__(self, path: str | None):
        self.path = path
        self.waited = 0.0  # seconds spent waiting for turns, all calls together
        self._fd: int | None = None

    @contextmanager
    def taken(self) -> Iterator[None]:
        if self.path is None:
            yield
            return
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        start = time.perf_counter()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        self.waited += time.perf_counter() - start
        try:
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
