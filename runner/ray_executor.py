"""RayExecutor: the page queue on a Ray cluster (`pagerunner run ... --executor ray`).

The driver keeps the store and stays its only writer; pages go to a pool of Ray actors, each
holding a PageWorker (engine loaded once). A document's bytes are put into Ray's object store
once and shared by all its pages, so workers need no shared filesystem; the reference is dropped
when the document's last page in flight is back. At most `depth` pages are in flight per actor.

Faults: an actor that dies mid-page is replaced and its unfinished pages are retried, alone, on
another actor; a page that was on two dying actors is failed (engine_failed) so the batch goes on.
A page that runs past `page_timeout` is failed (page_timeout) and its actor killed and replaced.
The driver dying leaves the store as the local executors do: a rerun resumes.

Ray is optional (`pip install 'pagerunner[ray]'`) and imported only when this executor runs.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from jobs.store import PageTask
from outputs.model import ErrorCode, PageError, PageResult
from runner.errors import EngineUnavailable, EnvironmentFailure, UsageError
from runner.worker import FatalWorkerError, PageWorker, Rendered, WorkerConfig

MAX_CRASHES_PER_PAGE = 2
INSTALL_HINT = "pip install 'pagerunner[ray]'"


def import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise EngineUnavailable(f"--executor ray needs Ray, which is not installed ({exc}): "
                                f"{INSTALL_HINT}") from None
    return ray


# --- the actor (runs in a Ray worker process) ---------------------------------------------------

class PageActor:
    """One PageWorker. Two calls run at once: the next page renders while this one is recognised.

    PDFium is touched from one dedicated thread only. Calls carry the driver's sequence number and
    both steps take their turn in that order, so the page the driver sees as oldest is the one
    being recognised (which makes timeouts and crash blame point at the right page).
    """

    def __init__(self, config: WorkerConfig):
        _quiet_stdout()
        self.worker = PageWorker(config)
        self._renderer = ThreadPoolExecutor(1, thread_name_prefix="render")
        self._turns = threading.Condition()
        self._render_turn = 0
        self._recognise_turn = 0
        self._doc_id: str | None = None
        self._data: bytes | None = None

    def start(self) -> str | None:
        """Load the engine now; returns the fatal error's message, or None when ready."""
        try:
            self.worker.warm_up()
        except FatalWorkerError as exc:
            return str(exc)
        return None

    def process(self, seq: int, task: PageTask, data: list) -> tuple[str, Any]:
        # `data` is [ObjectRef | None]: wrapped in a list so Ray does not copy the bytes into
        # every call; they are fetched once per document instead.
        with self._turn("_render_turn", seq):
            future = self._renderer.submit(self._render, task, data[0])
        with self._turn("_recognise_turn", seq):
            rendered = future.result()
            try:
                return "result", self.worker.recognise(rendered)
            except FatalWorkerError as exc:
                return "fatal", str(exc)

    @contextmanager
    def _turn(self, name: str, seq: int) -> Iterator[None]:
        with self._turns:
            self._turns.wait_for(lambda: getattr(self, name) == seq)
        try:
            yield
        finally:
            with self._turns:
                setattr(self, name, seq + 1)
                self._turns.notify_all()

    def _render(self, task: PageTask, ref: Any) -> Rendered:
        if task.doc_id != self._doc_id:
            import ray

            self._data = None
            self._data = ray.get(ref) if ref is not None else None
            self._doc_id = task.doc_id
        return self.worker.render(task, self._data)


def _quiet_stdout() -> None:
    """Ray forwards a worker's stdout to the driver's stdout, which carries results only."""
    try:
        sys.stdout.flush()
        os.dup2(2, 1)
    except OSError:
        pass


# --- the driver side ----------------------------------------------------------------------------

@dataclass
class _Call:
    task: PageTask
    ref: Any
    slot: "_Slot"


@dataclass
class _Slot:
    actor: Any
    ready: Any | None  # the start() reference until the actor has loaded its engine
    created: float
    in_flight: list[_Call] = field(default_factory=list)  # in submission order
    head_since: float = 0.0
    sent: int = 0  # sequence number of the next call
    solo: bool = False  # holds a suspect page, alone


class _Documents:
    """One object-store reference per document in flight; dropped when its pages are back."""

    def __init__(self, ray: Any):
        self.ray = ray
        self.refs: dict[str, list] = {}  # doc_id -> [ref or None, pages in flight]
        self.latest: str | None = None

    def acquire(self, task: PageTask) -> Any:
        entry = self.refs.get(task.doc_id)
        if entry is None:
            entry = self.refs[task.doc_id] = [self._put(task), 0]
        entry[1] += 1
        previous, self.latest = self.latest, task.doc_id
        if previous is not None and previous != task.doc_id:
            self._drop_if_idle(previous)
        return entry[0]

    def release(self, task: PageTask) -> None:
        entry = self.refs.get(task.doc_id)
        if entry is not None:
            entry[1] -= 1
            if task.doc_id != self.latest:  # the latest stays: its next page is likely next
                self._drop_if_idle(task.doc_id)

    def _drop_if_idle(self, doc_id: str) -> None:
        entry = self.refs.get(doc_id)
        if entry is not None and entry[1] <= 0:
            del self.refs[doc_id]

    def _put(self, task: PageTask) -> Any:
        try:
            data = Path(task.path).read_bytes()
        except OSError:
            return None  # the worker opens the path itself and reports the error like a local run
        return self.ray.put(data)


class RayExecutor:
    def __init__(self, config: WorkerConfig, workers: int = 1, address: str | None = None,
                 gpus_per_worker: float = 0.0, page_timeout: float | None = None, depth: int = 2,
                 start_timeout: float = 300.0):
        if gpus_per_worker < 0:
            raise UsageError("--gpus-per-worker must be 0 or more")
        self.config = config
        self.workers = max(1, workers)
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.gpus_per_worker = gpus_per_worker
        self.page_timeout = page_timeout
        self.depth = max(1, depth)
        self.start_timeout = start_timeout
        self.cpus_per_worker = max(1, int(config.engine_options.threads or 1))
        self.ray: Any = None
        self._actor_class: Any = None
        self.slots: list[_Slot] = []  # the live pool (tests and diagnostics look at it)
        self.restarts = 0

    # --- lifecycle -------------------------------------------------------------------------

    def run(self, tasks: Iterator[PageTask], stop: threading.Event) -> Iterator[PageResult]:
        self.ray = import_ray()
        owns = self._connect()
        self.slots = []
        try:
            self._actor_class = self.ray.remote(num_cpus=self.cpus_per_worker, num_gpus=self.gpus_per_worker,
                                                max_concurrency=2, max_restarts=0)(PageActor)
            self.slots = [self._new_slot() for _ in range(self.workers)]
            self._await_start(self.slots)
            yield from _Loop(self, self.slots, iter(tasks), stop).run()
        finally:
            for slot in self.slots:
                self._kill(slot)
            if owns:
                self.ray.shutdown()

    def _connect(self) -> bool:
        """Join the cluster at --ray-address, or start a local one. True if we own the connection."""
        ray = self.ray
        if ray.is_initialized():
            return False
        saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        common = dict(logging_level=logging.WARNING, log_to_driver=True)
        try:
            if self.address:
                ray.init(address=self.address, **common)
            else:
                ray.init(num_cpus=self.workers * self.cpus_per_worker, include_dashboard=False, **common)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
            where = f"the Ray cluster at {self.address}" if self.address else "a local Ray instance"
            raise EnvironmentFailure(f"cannot start or join {where}: {exc}") from None
        finally:
            for sig, handler in saved.items():  # ray.init replaces SIGTERM: keep our clean stop
                if handler is not None and threading.current_thread() is threading.main_thread():
                    signal.signal(sig, handler)
        if not self.address and self.gpus_per_worker > ray.cluster_resources().get("GPU", 0):
            ray.shutdown()
            raise UsageError(f"--gpus-per-worker {self.gpus_per_worker:g}: Ray found no such GPU "
                             "on this machine")
        return True

    def _new_slot(self) -> _Slot:
        actor = self._actor_class.remote(self.config)
        return _Slot(actor, actor.start.remote(), time.monotonic())

    def _await_start(self, slots: list[_Slot]) -> None:
        ray = self.ray
        try:
            errors = ray.get([s.ready for s in slots], timeout=self.start_timeout)
        except ray.exceptions.GetTimeoutError:
            raise EnvironmentFailure(
                f"Ray could not start {len(slots)} workers ({self.cpus_per_worker} CPU"
                f"{f', {self.gpus_per_worker:g} GPU' if self.gpus_per_worker else ''} each) within "
                f"{self.start_timeout:g} s; the cluster has {ray.cluster_resources()}") from None
        except ray.exceptions.RayError as exc:
            raise EngineUnavailable(f"a Ray worker died while starting: {_first_line(exc)}") from None
        for error in errors:
            if error is not None:
                raise EngineUnavailable(error)
        for slot in slots:
            slot.ready = None

    def _kill(self, slot: _Slot) -> None:
        try:
            self.ray.kill(slot.actor, no_restart=True)
        except Exception:  # already gone, or the cluster went away
            pass

    def replace(self, slot: _Slot) -> _Slot:
        self._kill(slot)
        self.restarts += 1
        return self._new_slot()


class _Loop:
    """The driver loop of one run: fill actors, wait for the next reply, handle faults.

    Crash blame: when an actor dies, every page it had not finished counts one crash and becomes a
    suspect; suspects are retried alone on an actor, so a second crash names its page for sure.
    A page is failed (engine_failed) at its second crash.
    """

    def __init__(self, executor: RayExecutor, slots: list[_Slot], source: Iterator[PageTask],
                 stop: threading.Event):
        self.ex = executor
        self.ray = executor.ray
        self.slots = slots
        self.source = source
        self.stop = stop
        self.exhausted = False
        self.retry: deque[PageTask] = deque()  # innocent pages to redo (their actor was replaced)
        self.suspects: deque[PageTask] = deque()  # pages that were on an actor when it died
        self.crashes: dict[tuple[str, int], int] = {}
        self.calls: dict[Any, _Call] = {}
        self.docs = _Documents(self.ray)

    def run(self) -> Iterator[PageResult]:
        while True:
            if not self.stop.is_set():
                self._fill()
            if not self.calls and (self.stop.is_set() or not self._work_left()):
                return
            starting = {s.ready: s for s in self.slots if s.ready is not None}
            self._check_starting(starting)
            waiting = [*self.calls, *starting]
            if not waiting:
                return  # unreachable while slots live: an idle ready slot would have been fed
            ready, _ = self.ray.wait(waiting, num_returns=1, timeout=self._wait_timeout())
            for ref in ready:
                if ref in starting:
                    self._on_started(starting[ref])
                elif ref in self.calls:
                    yield from self._on_reply(self.calls[ref])
            yield from self._check_timeouts()

    def _work_left(self) -> bool:
        return bool(self.retry or self.suspects or not self.exhausted)

    # --- feeding ---------------------------------------------------------------------------

    def _fill(self) -> None:
        for slot in self.slots:
            if slot.ready is not None or slot.solo:
                continue
            if self.suspects and not slot.in_flight:
                self._submit(slot, self.suspects.popleft(), solo=True)
                continue
            while len(slot.in_flight) < self.ex.depth:
                task = self._next_task()
                if task is None:
                    break
                self._submit(slot, task)

    def _next_task(self) -> PageTask | None:
        if self.retry:
            return self.retry.popleft()
        if self.exhausted:
            return None
        task = next(self.source, None)
        self.exhausted = task is None
        return task

    def _submit(self, slot: _Slot, task: PageTask, solo: bool = False) -> None:
        ref = slot.actor.process.remote(slot.sent, task, [self.docs.acquire(task)])
        slot.sent += 1
        slot.solo = solo
        if not slot.in_flight:
            slot.head_since = time.monotonic()
        call = _Call(task, ref, slot)
        slot.in_flight.append(call)
        self.calls[ref] = call

    # --- replies ---------------------------------------------------------------------------

    def _on_reply(self, call: _Call) -> Iterator[PageResult]:
        slot = call.slot
        try:
            kind, payload = self.ray.get(call.ref)
        except self.ray.exceptions.RayActorError as exc:
            yield from self._on_actor_died(slot, f"Ray worker died: {_first_line(exc)}")
            return
        except self.ray.exceptions.RayError as exc:  # an error inside the call: count it as a crash
            self._forget(call)
            failed = self._count_crash(call.task, f"Ray worker error: {_first_line(exc)}")
            if failed is not None and not self.stop.is_set():
                yield failed
            return
        if kind == "fatal":
            raise EngineUnavailable(payload)
        self._forget(call)
        slot.head_since = time.monotonic()
        slot.solo = False
        yield payload
        if self.stop.is_set():
            self._abandon(slot)  # its other pages are released by the driver

    def _on_actor_died(self, slot: _Slot, message: str) -> Iterator[PageResult]:
        finished, lost = self._salvage(slot)
        yield from finished
        if self.stop.is_set():
            return  # the driver releases the lost pages; no need for a new actor
        self._replace(slot)
        for task in lost:
            failed = self._count_crash(task, message)
            if failed is not None:
                yield failed

    def _salvage(self, slot: _Slot) -> tuple[list[PageResult], list[PageTask]]:
        """Results the actor sent before it died, and the pages it took down with it."""
        calls = list(slot.in_flight)
        for call in calls:
            self._forget(call)
        done, _ = self.ray.wait([c.ref for c in calls], num_returns=len(calls), timeout=0)
        finished: list[PageResult] = []
        lost: list[PageTask] = []
        for call in calls:
            try:
                kind, payload = self.ray.get(call.ref) if call.ref in done else ("lost", None)
            except self.ray.exceptions.RayError:
                kind, payload = "lost", None
            if kind == "result":
                finished.append(payload)
            else:
                lost.append(call.task)
        return finished, lost

    def _count_crash(self, task: PageTask, message: str) -> PageResult | None:
        key = (task.doc_id, task.page)
        self.crashes[key] = self.crashes.get(key, 0) + 1
        if self.crashes[key] >= MAX_CRASHES_PER_PAGE:
            return _failed(task, self.ex.config.engine, ErrorCode.ENGINE_FAILED,
                           f"{message} (twice on this page)")
        self.suspects.append(task)
        return None

    def _on_started(self, slot: _Slot) -> None:
        try:
            error = self.ray.get(slot.ready)
        except self.ray.exceptions.RayError as exc:
            raise EngineUnavailable(f"a Ray worker died while starting: {_first_line(exc)}") from None
        if error is not None:
            raise EngineUnavailable(error)
        slot.ready = None

    def _check_starting(self, starting: dict[Any, _Slot]) -> None:
        if not starting or any(s.ready is None for s in self.slots):
            return
        oldest = min(s.created for s in starting.values())
        if time.monotonic() - oldest > self.ex.start_timeout:
            raise EnvironmentFailure(f"no Ray worker could be (re)started within {self.ex.start_timeout:g} s; "
                                     f"the cluster has {self.ray.cluster_resources()}")

    # --- timeouts ----------------------------------------------------------------------------

    def _wait_timeout(self) -> float:
        timeout = self.ex.page_timeout
        busy = [s for s in self.slots if s.in_flight]
        if not timeout or not busy:
            return 0.5
        now = time.monotonic()
        return max(0.05, min(min(s.head_since + timeout - now for s in busy), 0.5))

    def _check_timeouts(self) -> Iterator[PageResult]:
        timeout = self.ex.page_timeout
        if not timeout:
            return
        now = time.monotonic()
        for slot in list(self.slots):
            if not slot.in_flight or now - slot.head_since <= timeout:
                continue
            finished, lost = self._salvage(slot)
            yield from finished
            if self.stop.is_set():
                continue
            self._replace(slot)
            if not lost:
                continue
            self.retry.extendleft(reversed(lost[1:]))
            yield _failed(lost[0], self.ex.config.engine, ErrorCode.PAGE_TIMEOUT,
                          f"page took longer than --page-timeout {timeout:g} s")

    # --- bookkeeping -------------------------------------------------------------------------

    def _forget(self, call: _Call) -> None:
        self.calls.pop(call.ref, None)
        if call in call.slot.in_flight:
            call.slot.in_flight.remove(call)
            self.docs.release(call.task)
        if not call.slot.in_flight:
            call.slot.solo = False

    def _abandon(self, slot: _Slot) -> None:
        for call in list(slot.in_flight):
            self._forget(call)

    def _replace(self, slot: _Slot) -> None:
        index = self.slots.index(slot)
        self.slots[index] = self.ex.replace(slot)


def _failed(task: PageTask, engine: str, code: ErrorCode, message: str) -> PageResult:
    return PageResult.failed(source=task.relname, doc_id=task.doc_id, page=task.page, engine=engine,
                             error=PageError(code, message))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
