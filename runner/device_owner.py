"""Device owners of a run: one process per GPU holding the engine's nets
(model_cache/ppocr/service.py), and the feeder worker processes that use them.

The executor (runner/executors.py) starts the owners next to its workers and watches both. A
feeder whose owner dies mid-request exits with DEVICE_LOST_EXIT, so its pages in flight are
retried as any crashed worker's are; the owner is started again before a feeder is, and
feeders reconnect to the same socket path. An owner that cannot start (no Vulkan device, a
model problem) stops the run with its message instead of leaving feeders waiting.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, Listener
from typing import TYPE_CHECKING, Any

from model_cache.engine import EngineOptions
from runner.errors import EngineUnavailable

if TYPE_CHECKING:  # the owner process imports this module: it needs none of the worker's imports
    from model_cache.ppocr.service import ServiceStats
    from runner.worker import WorkerConfig

READY_TIMEOUT = 300.0  # s for an owner to load its nets (shader compilation on a cold GPU included)
MAX_FEEDERS_PER_DEVICE = 12


def default_feeders(devices: int, cores: int | None = None) -> int:
    """Feeder processes per device: the host's cores less two per owner (its submission and
    copy threads), shared among the devices, at least 2, at most MAX_FEEDERS_PER_DEVICE."""
    cores = cores or os.cpu_count() or 2
    return max(2, min(MAX_FEEDERS_PER_DEVICE, (cores - 2 * devices) // max(1, devices)))


@dataclass
class OwnerProcess:
    options: EngineOptions
    address: str
    process: multiprocessing.process.BaseProcess | None = None
    control: Connection | None = None
    info: dict | None = None
    loaded: bool = False  # every net, the recogniser too
    starts: int = 0

    def start(self, context) -> None:
        parent, child = context.Pipe(duplex=True)
        self.process = context.Process(target=owner_main, args=(self.options, self.address, child),
                                       daemon=True, name=f"pagerunner-owner-{self.options.device}")
        self.process.start()
        child.close()
        self.control, self.info, self.loaded = parent, None, False
        self.starts += 1

    def wait_serving(self, timeout: float = READY_TIMEOUT) -> dict:
        """Until the owner serves feeders (its detector loaded); its info."""
        if self.info is None:
            self._handle(*self._receive(timeout))
        assert self.info is not None
        return self.info

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> dict:
        """Until every net is loaded (the recogniser too); its info."""
        self.wait_serving(timeout)
        while not self.loaded:
            self._handle(*self._receive(timeout))
        assert self.info is not None
        return self.info

    def poll(self) -> None:
        """Take a message the owner sent on its own (its recogniser loaded, or could not be)."""
        while self.control is not None and self.control.poll(0):
            try:
                message = self.control.recv()
            except (EOFError, OSError):
                return  # it died: the executor sees its sentinel and starts it again
            self._handle(*message)

    def check_starting(self) -> None:
        """Raise with the reason if the owner failed or died (its last words, if it sent them)."""
        self.poll()
        if not self.alive():
            self._handle(*self._receive(0.0))

    def stats(self) -> ServiceStats:
        """What the owner has served so far."""
        assert self.control is not None
        self.control.send("stats")
        while True:
            kind, payload = self._receive(READY_TIMEOUT)
            if kind == "stats":
                return payload
            self._handle(kind, payload)

    def _receive(self, timeout: float) -> tuple[str, Any]:
        assert self.process is not None and self.control is not None
        deadline = time.monotonic() + timeout
        while not self.control.poll(0.05):
            if not self.process.is_alive():
                raise EngineUnavailable(f"the device owner for {self.options.device} died while starting "
                                        f"(exit code {self.process.exitcode})")
            if time.monotonic() > deadline:
                raise EngineUnavailable(f"the device owner for {self.options.device} did not start "
                                        f"within {timeout:g} s")
        try:
            return self.control.recv()
        except (EOFError, OSError):
            raise EngineUnavailable(f"the device owner for {self.options.device} died while starting") from None

    def _handle(self, kind: str, payload: Any) -> None:
        if kind == "fatal":
            raise EngineUnavailable(payload)
        self.info = payload
        self.loaded = kind == "ready"

    def alive(self) -> bool:
        return self.process is not None and self.process.is_alive()

    def stop(self) -> None:
        if self.control is not None:
            try:
                self.control.send(None)
            except (OSError, ValueError):
                pass
        if self.process is not None:
            self.process.join(2.0)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(5)
        if self.control is not None:
            self.control.close()
        self.process, self.control = None, None


class DeviceOwners:
    """One owner per device config, and the feeder configs pointing at them (round robin)."""

    def __init__(self, configs: list[WorkerConfig], feeders_per_device: int):
        self.configs = configs
        self.feeders = max(1, feeders_per_device) * len(configs)
        self._dir = tempfile.mkdtemp(prefix="pagerunner-owners-")
        self.owners = [OwnerProcess(c.engine_options, os.path.join(self._dir, f"owner-{i}.sock"))
                       for i, c in enumerate(configs)]
        self._context = multiprocessing.get_context("spawn")
        self.restarts = 0

    def feeder_configs(self) -> list[WorkerConfig]:
        out = []
        for i in range(self.feeders):
            config, owner = self.configs[i % len(self.configs)], self.owners[i % len(self.owners)]
            out.append(replace(config, engine_options=replace(config.engine_options, service=owner.address)))
        return out

    def start(self) -> None:
        for owner in self.owners:
            owner.start(self._context)

    def wait_serving(self) -> None:
        for owner in self.owners:
            owner.wait_serving()

    def wait_ready(self) -> None:
        for owner in self.owners:
            owner.wait_ready()

    def controls(self) -> list[Connection]:
        return [o.control for o in self.owners if o.control is not None]

    def poll(self) -> None:
        """Late news from the owners: an owner whose recogniser failed to load stops the run."""
        for owner in self.owners:
            owner.poll()

    def check_starting(self) -> None:
        """While feeders start: an owner that failed or died stops the run, with its reason."""
        for owner in self.owners:
            owner.check_starting()

    def sentinels(self) -> list:
        return [o.process.sentinel for o in self.owners if o.process is not None]

    def revive(self) -> int:
        """Start again every owner that died; wait until they serve. Returns how many."""
        dead = [o for o in self.owners if not o.alive()]
        for owner in dead:
            owner.stop()
            owner.start(self._context)
        for owner in dead:
            owner.wait_ready()
        self.restarts += len(dead)
        return len(dead)

    def stop(self) -> None:
        for owner in self.owners:
            owner.stop()
        shutil.rmtree(self._dir, ignore_errors=True)


def owner_main(options: EngineOptions, address: str, control: Connection) -> None:
    """A device owner process: listen first (feeders may connect while the nets load), load
    the nets, report ready (or fatal) on `control`, then serve until `control` closes."""
    from model_cache.ppocr.service import NetService
    from runner.signals import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides when to stop
    die_with_parent()
    try:
        os.unlink(address)  # a dead owner's socket: this one takes its place
    except FileNotFoundError:
        pass
    listener = Listener(address, family="AF_UNIX", authkey=multiprocessing.current_process().authkey)
    start = time.perf_counter()
    try:
        service = NetService(options)
        service.start()
        threading.Thread(target=service.serve, args=(listener,), name="owner-accept", daemon=True).start()
        control.send(("serving", {**service.info, "serve_seconds": time.perf_counter() - start,
                                  "pid": os.getpid()}))
        service.load_recognizer()  # a CPU owner's; a GPU owner loaded both nets as one above
    except Exception as exc:  # EngineError, a missing Vulkan device, a model problem
        control.send(("fatal", f"device owner for {options.device}: {exc}"))
        listener.close()
        return
    control.send(("ready", {**service.info, "load_seconds": time.perf_counter() - start, "pid": os.getpid()}))
    try:
        while (message := control.recv()) is not None:
            if message == "stats":
                control.send(("stats", service.stats))
    except (EOFError, OSError):
        pass
    service.stop()
    listener.close()
