"""Executors run PageWorkers over a stream of page tasks and yield results as they finish.

- InlineExecutor: one worker in this process; a background thread renders the next page while
  the current one is recognised.
- ProcessExecutor (default): N worker processes, each with its engine loaded once. A worker that
  crashes (a hostile file crashing PDFium, out of memory) costs only its page: the page is retried
  once on a fresh worker, then recorded as failed. `--page-timeout` kills a stuck worker.

With batch > 1, pages go to a worker in groups of `batch` (engines with ocr_many recognise a
group in one go; each result still comes back, and is committed, on its own); a new worker's
first groups are 1, 2, 4, ... pages, so the first record does not wait for a whole group. A group that
crashes its worker is retried one page at a time; a group's timeout is batch x --page-timeout.
A worker may get its own engine options (configs[i]): one worker per GPU, each owning its device;
or, with `owners` (runner/device_owner.py), one device owner process per GPU holds the nets and
the workers feed it, each doing the CPU steps of its pages. Workers start in parallel.

The driver (runner/job.py) owns the store: executors never touch it. They pull tasks lazily from
the iterator they are given (so in-flight work stays bounded) and stop pulling once `stop` is set.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Iterator, Protocol

from jobs.store import PageTask
from outputs.model import ErrorCode, PageError, PageResult
from model_cache.engine import DeviceLost
from model_cache.heap import release_free_memory
from runner.errors import EngineUnavailable
from runner.signals import die_with_parent
from runner.worker import FatalWorkerError, PageWorker, Rendered, WorkerConfig

DEVICE_LOST_EXIT = 75  # a worker whose device owner went away mid-request (runner/device_owner.py)

if TYPE_CHECKING:
    from runner.device_owner import DeviceOwners

MAX_CRASHES_PER_PAGE = 2


class Executor(Protocol):
    def run(self, tasks: Iterator[PageTask], stop: threading.Event) -> Iterator[PageResult]: ...


class InlineExecutor:
    def __init__(self, config: WorkerConfig, prefetch: int = 1, batch: int = 1):
        self.config = config
        self.batch = max(1, batch)
        self.prefetch = max(1, prefetch) + self.batch - 1

    def run(self, tasks: Iterator[PageTask], stop: threading.Event) -> Iterator[PageResult]:
        worker = PageWorker(self.config)
        try:
            worker.warm_up()
        except FatalWorkerError as exc:
            raise EngineUnavailable(str(exc)) from exc
        todo: queue.Queue[PageTask | None] = queue.Queue()
        done: queue.Queue[Rendered] = queue.Queue()

        def render_loop() -> None:
            while (task := todo.get()) is not None:
                done.put(worker.render(task))
            worker.close_document()  # PDFium objects are closed on the thread that used them

        thread = threading.Thread(target=render_loop, name="render-prefetch", daemon=True)
        thread.start()
        source = iter(tasks)
        in_flight = groups = 0  # groups: as ProcessExecutor, the first ones are 1, 2, 4, ... pages
        try:
            while True:
                while not stop.is_set() and in_flight <= self.prefetch:
                    task = next(source, None)
                    if task is None:
                        break
                    todo.put(task)
                    in_flight += 1
                if in_flight == 0 or stop.is_set():
                    return
                group = [done.get() for _ in range(min(self.batch, in_flight, 2 ** groups))]
                groups += 1
                in_flight -= len(group)
                yield from worker.recognise_many(group)
        finally:
            todo.put(None)
            thread.join()


@dataclass
class _Slot:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    config: WorkerConfig | None = None
    in_flight: deque = field(default_factory=deque)
    groups: deque = field(default_factory=deque)  # sizes of the groups sent, oldest first
    sent: int = 0  # groups sent so far: the first ones are small (time to the first record)
    head_since: float = 0.0

    def popleft(self) -> PageTask:
        task = self.in_flight.popleft()
        self.groups[0] -= 1
        if not self.groups[0]:
            self.groups.popleft()
        return task

    def clear(self) -> None:
        self.in_flight.clear()
        self.groups.clear()


class ProcessExecutor:
    def __init__(self, config: WorkerConfig, workers: int = 1, page_timeout: float | None = None,
                 depth: int = 2, batch: int = 1, configs: list[WorkerConfig] | None = None,
                 owners: DeviceOwners | None = None):
        """`owners`: device owner processes the workers (configs) feed; started and watched here."""
        self.config = config
        self.configs = configs or [config]
        self.workers = max(1, workers, len(self.configs))
        self.page_timeout = page_timeout
        self.depth = max(1, depth)
        self.batch = max(1, batch)
        self.owners = owners
        self._context = multiprocessing.get_context("spawn")

    def _spawn(self, config: WorkerConfig) -> _Slot:
        parent, child = self._context.Pipe(duplex=True)
        process = self._context.Process(target=_child_main, args=(child, config), daemon=True,
                                        name="pagerunner-worker")
        process.start()
        child.close()
        return _Slot(process, parent, config)

    @staticmethod
    def _await_ready(slot: _Slot) -> _Slot:
        try:
            kind, payload = slot.conn.recv()
        except (EOFError, OSError):
            slot.process.join(5)
            raise EngineUnavailable(f"worker process died while starting (exit code {slot.process.exitcode})")
        if kind == "fatal":
            slot.process.join(5)
            raise EngineUnavailable(payload)
        return slot

    def _start_slot(self, config: WorkerConfig | None = None) -> _Slot:
        return self._await_ready(self._spawn(config or self.config))

    def run(self, tasks: Iterator[PageTask], stop: threading.Event) -> Iterator[PageResult]:
        if self.owners is None:
            yield from self._run(tasks, stop)
            return
        self.owners.start()
        try:
            yield from self._run(tasks, stop)
        finally:
            self.owners.stop()

    def _run(self, tasks: Iterator[PageTask], stop: threading.Event) -> Iterator[PageResult]:
        # Every worker starts at once (imports and model loading overlap), then each is awaited.
        slots = [self._spawn(self.configs[i % len(self.configs)]) for i in range(self.workers)]
        try:
            if self.owners is not None:
                self.owners.wait_serving()  # feeders render their first pages while the recogniser loads
            for slot in slots:
                while self.owners is not None and not slot.conn.poll(0.05):
                    self.owners.check_starting()  # a feeder waits on its owner: one that fails says why
                self._await_ready(slot)
        except BaseException:
            for slot in slots:
                self._stop_slot(slot)
            raise
        retry: deque[PageTask] = deque()
        solo: set[tuple[str, int]] = set()  # pages of a group that crashed: sent alone from now on
        crashes: dict[tuple[str, int], int] = {}
        source = iter(tasks)
        exhausted = False
        try:
            while True:
                if not stop.is_set():
                    exhausted = self._fill(slots, retry, source, exhausted, solo)
                busy = [s for s in slots if s.in_flight]
                if not busy:
                    return
                timeout = self._wait_timeout(busy)
                owners = self.owners.sentinels() if self.owners is not None else []
                controls = self.owners.controls() if self.owners is not None else []
                ready = wait([s.conn for s in busy] + [s.process.sentinel for s in busy] + owners + controls,
                             timeout)
                if any(control in ready for control in controls):
                    self.owners.poll()  # type: ignore[union-attr]  # a recogniser that failed to load stops the run
                if any(sentinel in ready for sentinel in owners):
                    self.owners.revive()  # type: ignore[union-attr]  # its feeders die and are retried
                for index, slot in enumerate(slots):
                    if not slot.in_flight:
                        continue
                    if slot.conn in ready:
                        try:
                            kind, payload = slot.conn.recv()
                        except (EOFError, OSError):
                            kind, payload = "died", None
                        if kind == "result":
                            slot.popleft()
                            slot.head_since = time.monotonic()
                            yield payload
                            if stop.is_set() and slot.in_flight:
                                slots[index] = self._retire(slot)  # abandon its prefetched page
                            continue
                        if kind == "fatal":
                            raise EngineUnavailable(payload)
                    died = slot.conn in ready or slot.process.sentinel in ready or not slot.process.is_alive()
                    if died:  # the pipe closed or the process ended without a result
                        failed = self._on_crash(slot, retry, crashes, solo, _death(slot.process.exitcode))
                        slots[index] = self._restart(slot)
                        if failed is not None:
                            yield failed
                    elif self._timed_out(slot):
                        group = slot.groups[0]
                        heads = [slot.popleft() for _ in range(group)]
                        retry.extendleft(reversed(slot.in_flight))
                        slot.clear()
                        slots[index] = self._restart(slot)
                        if group > 1:  # which page of the group was stuck is unknown: each alone
                            solo.update((t.doc_id, t.page) for t in heads)
                            retry.extendleft(reversed(heads))
                            continue
                        yield _failed(heads[0], self.config.engine, ErrorCode.PAGE_TIMEOUT,
                                      f"page took longer than --page-timeout {self.page_timeout:g} s")
        finally:
            for slot in slots:
                self._stop_slot(slot)

    def _fill(self, slots: list[_Slot], retry: deque, source: Iterator[PageTask], exhausted: bool,
              solo: set) -> bool:
        for slot in slots:
            while len(slot.groups) < self.depth:
                group: list[PageTask] = []
                size = min(self.batch, 2 ** slot.sent)
                while len(group) < size:
                    task = retry.popleft() if retry else (None if exhausted else next(source, None))
                    if task is None:
                        exhausted = exhausted or not retry
                        break
                    if (task.doc_id, task.page) in solo and group:
                        retry.appendleft(task)  # a solo page starts a group of its own
                        break
                    group.append(task)
                    if (task.doc_id, task.page) in solo:
                        break
                if not group:
                    break
                if not slot.in_flight:
                    slot.head_since = time.monotonic()
                slot.in_flight.extend(group)
                slot.groups.append(len(group))
                slot.sent += 1
                try:
                    slot.conn.send(group)
                except (BrokenPipeError, ConnectionResetError):
                    break  # the worker died: run() sees it and requeues what it held, this group too
        return exhausted

    def _wait_timeout(self, busy: list[_Slot]) -> float:
        if not self.page_timeout:
            return 0.5
        now = time.monotonic()
        return max(0.05, min(min(s.head_since + self._limit(s) - now for s in busy), 0.5))

    def _limit(self, slot: _Slot) -> float:
        return (self.page_timeout or 0.0) * (slot.groups[0] if slot.groups else 1)

    def _timed_out(self, slot: _Slot) -> bool:
        return bool(self.page_timeout and slot.in_flight
                    and time.monotonic() - slot.head_since > self._limit(slot))

    def _on_crash(self, slot: _Slot, retry: deque, crashes: dict, solo: set,
                  message: str) -> PageResult | None:
        group = slot.groups[0]
        heads = [slot.popleft() for _ in range(group)]
        retry.extendleft(reversed(slot.in_flight))
        slot.clear()
        if group > 1:  # a crashed group: which page did it is unknown, so each goes alone
            solo.update((t.doc_id, t.page) for t in heads)
            retry.extendleft(reversed(heads))
            return None
        head = heads[0]
        key = (head.doc_id, head.page)
        crashes[key] = crashes.get(key, 0) + 1
        if crashes[key] >= MAX_CRASHES_PER_PAGE:
            return _failed(head, self.config.engine, ErrorCode.ENGINE_FAILED, message)
        retry.appendleft(head)
        return None

    def _restart(self, slot: _Slot) -> _Slot:
        self._stop_slot(slot)
        if self.owners is not None:
            self.owners.revive()  # a feeder starts only once its owner serves
        return self._start_slot(slot.config)

    def _retire(self, slot: _Slot) -> _Slot:
        slot.clear()
        self._stop_slot(slot)
        return slot

    @staticmethod
    def _stop_slot(slot: _Slot) -> None:
        try:
            slot.conn.send(None)
        except (OSError, ValueError):
            pass
        slot.process.join(0.2 if slot.in_flight else 2.0)
        if slot.process.is_alive():
            slot.process.kill()
            slot.process.join(5)
        slot.conn.close()


def _death(exitcode: int | None) -> str:
    if exitcode == DEVICE_LOST_EXIT:
        return "the device owner process died during the page"
    return f"worker process died (exit code {exitcode})"


def _failed(task: PageTask, engine: str, code: ErrorCode, message: str) -> PageResult:
    return PageResult.failed(source=task.relname, doc_id=task.doc_id, page=task.page, engine=engine,
                             error=PageError(code, message))


def _child_main(conn: Connection, config: WorkerConfig) -> None:
    """A worker process: render on a receiver thread, recognise on the main thread, a group
    of pages at a time (one result message per page)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides when to stop
    die_with_parent()
    worker = PageWorker(config)
    try:
        worker.warm_up()
    except FatalWorkerError as exc:
        conn.send(("fatal", str(exc)))
        return
    conn.send(("ready", None))
    inbox: queue.Queue[list[Rendered] | None] = queue.Queue()

    def receive() -> None:
        try:
            while (group := conn.recv()) is not None:
                inbox.put([worker.render(task) for task in group])
        except (EOFError, OSError):
            pass
        finally:
            worker.close_document()
            inbox.put(None)

    threading.Thread(target=receive, name="render", daemon=True).start()
    while (rendered := inbox.get()) is not None:
        try:
            results = worker.recognise_many(rendered)
        except FatalWorkerError as exc:
            conn.send(("fatal", str(exc)))
            return
        except DeviceLost:
            os._exit(DEVICE_LOST_EXIT)  # the driver retries these pages once the owner is back
        try:
            for result in results:
                conn.send(("result", result))
        except (OSError, ValueError):
            return
        del rendered, results
        release_free_memory()
