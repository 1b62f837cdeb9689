"""One run per output folder: an exclusive flock on OUT/.pagerunner/lock, released by the kernel
when the holder exits or dies, so a crashed run never leaves a stale lock behind."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

from runner.errors import OutputBusyError


class RunLock:
    def __init__(self, folder: Path):
        self.path = folder / "lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise OutputBusyError(f"another pagerunner run is working on {self.path.parent.parent} "
                                  f"({holder}); wait for it to finish or stop it, then rerun") from None
        info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "RunLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return f"pid {info['pid']} on {info['host']}, since {info['since']}"
    except (OSError, ValueError, KeyError):
        return "holder unknown"
