"""The device owner: one process per GPU that holds the ppocr detector and strip recogniser
(with its top-1 tail) and runs them for feeder processes, which do everything else (render,
DB post-processing, the page's orientation vote on their own CPU, crop rectification, CTC
decoding, word boxes, annotation, layout, and the per-page commit through the executor).

Why: a single worker doing all of a page's steps one after another leaves the GPU idle most of
the time, and several workers on one GPU each pay for their own Vulkan context and shaders and
time-share the device. Here one context serves every feeder:

- recognition requests that arrive while the recogniser is busy are merged: their crops are
  packed into the same strips (batch_rec.py, the one home of the batching design, also used on
  the CPU), and each request is answered as soon as its last strip is done;
- detection runs on threads of its own, so the detector works while the
  recogniser does (ncnn releases the GIL inside extract); on a GPU `gpu_streams` (2) threads
  run each of the detector and the recogniser, so strips overlap too;
- pixels travel through shared memory (wire.py); feeders normalize their crops, so the owner
  only places them into strips.

Protocol (multiprocessing.connection over a Unix socket, the run's authkey): a request is
(op, buffer, arrays) with op in hello/det/rec; `buffer` is (path, size) when the feeder
hands over a new shared buffer, else None. The reply is ("ok", arrays, stats) or
("error", message, {}). stats: this request's share of submissions, bytes up/downloaded
to the device, and seconds inside the nets.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, Listener
from typing import Any

import numpy as np

from model_cache.engine import EngineError, EngineOptions
from model_cache.ppocr import nets
from model_cache.ppocr.assets import load_model_set
from model_cache.ppocr.batch_rec import StripRecognizer
from model_cache.ppocr.wire import SharedBuffer, pack, unpack


DEFAULT_STREAMS = 2


@dataclass
class _Feeder:
    conn: Connection
    buffer: SharedBuffer | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def attach(self, ref: tuple[str, int]) -> None:
        old, self.buffer = self.buffer, SharedBuffer(ref[1], ref[0])
        if old is not None:
            old.close()

    def reply(self, arrays: list[np.ndarray], stats: dict[str, float]) -> None:
        payload, _ = pack(arrays, self.buffer)
        self._send(("ok", payload, stats))

    def fail(self, message: str) -> None:
        self._send(("error", message, {}))

    def _send(self, message: Any) -> None:
        with self.lock:
            try:
                self.conn.send(message)
            except (OSError, ValueError):
                pass  # the feeder died: its reader thread drops it


@dataclass
class _Request:
    feeder: _Feeder
    op: str
    arrays: list[np.ndarray]
    results: list[np.ndarray | None] = field(default_factory=list)
    left: int = 0
    stats: dict[str, float] = field(default_factory=lambda: {"submissions": 0.0, "downloaded": 0.0,
                                                             "uploaded": 0.0, "seconds": 0.0})


@dataclass
class ServiceStats:
    """What the owner did, all feeders together (for the benchmark and the tests)."""
    requests: dict[str, int] = field(default_factory=lambda: {"det": 0, "rec": 0})
    strips: int = 0
    merged: int = 0  # recognition rounds that served more than one request
    rounds: int = 0


class NetService:
    """The nets of one device and the threads that run them. On a GPU both nets are loaded here,
    as one ncnn net (nets.owner_nets). Otherwise the detector is loaded here and the recogniser
    by load_recognizer(), which the owner calls once it serves; recognition requests wait for it.
    (ncnn's Python binding holds the GIL while it makes a net's pipelines, so serving early gained
    little on a GPU: docs/benchmarks.md, "The GPU run's start, piece by piece".)"""

    def __init__(self, options: EngineOptions):
        extra = dict(options.extra)
        extra.setdefault("rec_batch", "on")
        self.options = replace(options, service=None, extra=tuple(extra.items()))
        self.models = load_model_set(options.model_dir, options.model)
        self.det, self.strips = nets.owner_nets(self.models, self.options)
        gpu = self.det.net.opt.use_vulkan_compute
        # Concurrent calls per net: each takes a Vulkan queue of its own, so one strip's upload
        # and host-side preparation overlap another's compute. A CPU owner keeps one (its nets'
        # pooled allocators are not thread-safe).
        self.streams = _streams(options) if gpu else 1
        self.det_queue: queue.Queue[_Request | None] = queue.Queue()
        self.rec_queue: queue.Queue[_Request | None] = queue.Queue()
        self.stats = ServiceStats()
        self._rec_loaded = threading.Event()
        # What a feeder needs to know (hello); the strips end in the top-1 tail on a GPU.
        self.info = {"top1": gpu, "model": self.models.name, "host_layers": {"det": self.det.host_layers}}
        if self.strips is not None:
            self._loaded(self.strips)

    def load_recognizer(self) -> None:
        """Load the strip recogniser; recognition requests queue until then. If it cannot be
        loaded this raises, and the owner exits: its feeders' pages are retried, and the
        owner started again reports the failure, which stops the run."""
        if self._rec_loaded.is_set():  # loaded with the detector
            return
        self._loaded(nets.owner_recognizer(self.models, self.options))

    def _loaded(self, strips: StripRecognizer) -> None:
        assert strips.net is not None
        self.strips = strips
        self.info["host_layers"]["rec"] = strips.net.host_layers
        self._rec_loaded.set()

    def start(self) -> list[threading.Thread]:
        threads = []
        for _ in range(self.streams):
            threads.append(threading.Thread(target=self._det_loop, name="owner-det", daemon=True))
            threads.append(threading.Thread(target=self._rec_loop, name="owner-rec", daemon=True))
        for thread in threads:
            thread.start()
        return threads

    def stop(self) -> None:
        for _ in range(self.streams):
            self.det_queue.put(None)
            self.rec_queue.put(None)

    def serve(self, listener: Listener) -> None:
        """Accept feeders until the listener is closed; each gets a reader thread."""
        while True:
            try:
                conn = listener.accept()
            except OSError:
                return
            except Exception:  # a connection that failed the authkey challenge: ignore it
                continue
            threading.Thread(target=self._read, args=(_Feeder(conn),), name="owner-feeder",
                             daemon=True).start()

    def _read(self, feeder: _Feeder) -> None:
        try:
            while True:
                try:
                    op, ref, payload = feeder.conn.recv()
                except (EOFError, OSError):
                    return
                try:
                    if ref is not None:
                        feeder.attach(ref)
                    arrays = unpack(payload, feeder.buffer)
                except (OSError, ValueError) as exc:
                    feeder.fail(f"{type(exc).__name__}: {exc}")
                    continue
                if op == "hello":
                    feeder._send(("ok", self.info, {}))
                elif op == "det":
                    self.det_queue.put(_Request(feeder, op, arrays))
                elif op == "rec":
                    self.rec_queue.put(_Request(feeder, op, arrays))
                else:
                    feeder.fail(f"unknown request {op!r}")
        finally:
            feeder.conn.close()

    def _det_loop(self) -> None:
        net = self.det
        while (request := self.det_queue.get()) is not None:
            self.stats.requests["det"] += 1
            try:
                out = net.run(request.arrays[0])
                net.release()  # the detector's buffers are the biggest (a page size each)
                request.feeder.reply([out], net.last_call())
            except Exception as exc:  # one bad input fails its page, not the owner
                request.feeder.fail(f"{type(exc).__name__}: {exc}")

    def _rec_loop(self) -> None:
        self._rec_loaded.wait()
        while True:
            requests = self._take_rec()
            if requests is None:
                return
            self._recognise(requests)

    def _take_rec(self) -> list[_Request] | None:
        """Every recognition request waiting now (at least one)."""
        first = self.rec_queue.get()
        if first is None:
            return None
        requests = [first]
        while True:
            try:
                more = self.rec_queue.get_nowait()
            except queue.Empty:
                return requests
            if more is None:
                self.rec_queue.put(None)  # for this thread's next round
                return requests
            requests.append(more)

    def _recognise(self, requests: list[_Request]) -> None:
        """One round: the crops of all requests in strips, each request answered when done."""
        owners: list[tuple[_Request, int]] = []
        crops: list[np.ndarray] = []
        for request in requests:
            request.results = [None] * len(request.arrays)
            request.left = len(request.arrays)
            self.stats.requests["rec"] += 1
            owners.extend((request, i) for i in range(len(request.arrays)))
            crops.extend(request.arrays)
            if not request.arrays:
                request.feeder.reply([], request.stats)
        self.stats.rounds += 1
        self.stats.merged += len(requests) > 1
        assert self.strips is not None  # _rec_loop waits for load_recognizer
        net = self.strips.net
        try:
            for strip, scores in self.strips.iter_prepared(crops):
                self.stats.strips += 1
                delta = net.last_call()
                touched: dict[int, tuple[_Request, int]] = {}
                for index, part in zip(strip.crops, scores):
                    request, slot = owners[index]
                    request.results[slot] = part
                    request.left -= 1
                    touched[id(request)] = (request, touched.get(id(request), (request, 0))[1] + 1)
                for request, count in touched.values():  # device work shared out by crops
                    for key, value in delta.items():
                        request.stats[key] += value * count / len(strip.crops)
                    if request.left == 0:
                        request.feeder.reply(request.results, request.stats)  # type: ignore[arg-type]
        except Exception as exc:  # e.g. out of device memory: these requests fail, the owner lives
            message = f"{type(exc).__name__}: {exc}"
            for request in {id(r): r for r, _ in owners}.values():
                if request.left:
                    request.feeder.fail(message)
        finally:
            net.release()


def _streams(options: EngineOptions) -> int:
    value = options.get("gpu_streams") or str(DEFAULT_STREAMS)
    if not value.isdigit() or int(value) < 1:
        raise EngineError(f"ppocr option gpu_streams={value!r} is not a positive whole number")
    return int(value)
