"""The feeder's side of the device owner (service.py): nets that run in another process.

`RemoteNet` stands in for the detector's NcnnNet and `RemoteStrips` for the StripRecognizer:
the engine calls them as it calls its local nets, and everything but those net calls (the
orientation vote, rectification, DB post-processing, CTC decoding, word boxes, layout) stays here.

One `ServiceClient` per feeder process: a socket to the owner and a shared buffer for pixels
(wire.py). One request is in flight at a time. A request that cannot be sent (the owner went
away while this feeder was idle) is sent again once the owner is back; a request whose reply
never comes raises DeviceLost, and the process must be restarted (its pages are retried as a
crashed worker's are).
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import Client, Connection
from typing import Any

import ncnn
import numpy as np

from model_cache.engine import DeviceLost, EngineError
from model_cache.ppocr.batch_rec import prepare
from model_cache.ppocr.recognition import RecParams
from model_cache.ppocr.runtime import NetStats
from model_cache.ppocr.wire import SharedBuffer, message_bytes, needed, pack, unpack

BUFFER_BYTES = 32 << 20  # a 1600 x 1600 detector input is 30.7 MB; larger ones grow the buffer
CONNECT_TIMEOUT = 180.0  # s: the owner loads its nets and compiles its shaders meanwhile


class ServiceClient:
    def __init__(self, address: str, connect_timeout: float = CONNECT_TIMEOUT):
        self.address = address
        self.connect_timeout = connect_timeout
        self.buffer = SharedBuffer(BUFFER_BYTES)
        self.conn: Connection | None = None
        self.info: dict[str, Any] = {}
        self.round_trips = 0
        try:
            self._connect()
        except DeviceLost as exc:
            raise EngineError(str(exc)) from None

    def _connect(self) -> None:
        deadline = time.monotonic() + self.connect_timeout
        while True:
            try:
                self.conn = Client(self.address, family="AF_UNIX",
                                   authkey=multiprocessing.current_process().authkey)
                break
            except (FileNotFoundError, ConnectionRefusedError, ConnectionResetError, EOFError):
                if time.monotonic() > deadline:
                    raise DeviceLost(f"no device owner answers at {self.address}") from None
                time.sleep(0.05)
        if self.buffer.path is None:  # unlinked after the last owner mapped it: a fresh one
            self.buffer.close()
            self.buffer = SharedBuffer(self.buffer.size)
        _, info, _ = self._exchange("hello", [], announce=True)
        self.info = info

    def call(self, op: str, arrays: list[np.ndarray]) -> tuple[list[np.ndarray], dict[str, float]]:
        """One request: the owner's result arrays (copies) and its statistics for this request."""
        announce = False
        size = needed(arrays)
        if size > self.buffer.size:
            self.buffer.close()
            self.buffer = SharedBuffer(max(size, 2 * self.buffer.size))
            announce = True
        try:
            items, stats, moved = self._exchange(op, arrays, announce)
        except _NotSent:
            self._connect()  # the owner restarted while we were idle: the request never left
            items, stats, moved = self._exchange(op, arrays, announce=False)
        stats["moved"] = moved
        return items, stats

    def _exchange(self, op: str, arrays: list[np.ndarray], announce: bool) -> tuple[Any, dict, int]:
        assert self.conn is not None
        payload, _ = pack(arrays, self.buffer)
        ref = (self.buffer.path, self.buffer.size) if announce or op == "hello" else None
        try:
            self.conn.send((op, ref, payload))
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            raise _NotSent() from exc
        try:
            status, items, stats = self.conn.recv()
        except (EOFError, OSError):
            raise DeviceLost(f"the device owner at {self.address} went away during a request") from None
        self.round_trips += 1
        if ref is not None:
            self.buffer.unlink()  # the owner has it mapped now
        if status != "ok":
            raise EngineError(f"device owner: {items}")
        if op == "hello":
            return None, items, 0
        results = unpack(items, self.buffer, copy=True)
        return results, stats, message_bytes(payload) + message_bytes(items)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.buffer.close()


class _NotSent(Exception):
    pass


class RemoteNet:
    """A net held by the owner (the detector): run(mat) as NcnnNet.run."""

    def __init__(self, client: ServiceClient, op: str):
        self.client = client
        self.op = op
        self.stats = NetStats()
        self.host_layers: list[str] = list(client.info.get("host_layers", {}).get(op, []))

    def run(self, mat: ncnn.Mat | np.ndarray, output: str | None = None) -> np.ndarray:
        if output is not None:
            raise EngineError("a remote net returns its output blob only")
        array = np.ascontiguousarray(np.asarray(mat), dtype=np.float32)
        start = time.perf_counter()
        (result,), stats = self.client.call(self.op, [array])
        _add(self.stats, stats, time.perf_counter() - start)
        return result

    def release(self) -> None:
        """The owner frees its buffers itself."""


class RemoteStrips:
    """The owner's strip recogniser: run(crops, rec) as StripRecognizer.run. Crops are
    normalized here (prepare), so the owner only places them into its strips."""

    def __init__(self, client: ServiceClient):
        self.client = client
        self.net = RemoteNet(client, "rec")

    @property
    def top1(self) -> bool:
        return bool(self.client.info.get("top1"))

    def run(self, crops: list[np.ndarray], rec: RecParams) -> list[np.ndarray]:
        start = time.perf_counter()
        results, stats = self.client.call("rec", [prepare(crop, rec) for crop in crops])
        _add(self.net.stats, stats, time.perf_counter() - start)
        return results


def _add(target: NetStats, stats: dict[str, float], seconds: float) -> None:
    """The owner's share of submissions and device bytes for this request; seconds are the
    round trip as the feeder waits for it (queueing behind other feeders included)."""
    target.add(stats.get("submissions", 0.0), stats.get("downloaded", 0.0), stats.get("uploaded", 0.0),
               seconds)
    target.moved += int(stats.get("moved", 0))
