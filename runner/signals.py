"""SIGINT/SIGTERM: finish the page in flight, then stop (exit 130/143). A second Ctrl-C stops at once."""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class StopSignals:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.signum: int | None = None

    def _handle(self, signum: int, frame: object) -> None:
        if self.event.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signum = signum
        self.event.set()

    @contextmanager
    def installed(self) -> Iterator["StopSignals"]:
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {s: signal.signal(s, self._handle) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield self
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def die_with_parent() -> None:
    """Ask Linux to kill this worker if the driver dies (SIGKILL included)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            os._exit(0)
    except (OSError, AttributeError):
        pass
