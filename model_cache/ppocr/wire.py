"""How arrays travel between a feeder process and the device owner (service.py, remote.py).

Each feeder has one shared buffer: a file in /dev/shm that both processes map. A request's
large arrays are written into it and only their places (offset, shape, dtype) go through the
socket; the owner writes large results back into the same buffer (the feeder waits for the
reply, so the buffer is free once the owner has read the inputs). Small arrays go inline, as
pickles: for them a shared-memory place costs more than the bytes.

The file is unlinked as soon as the owner has mapped it, so a process that dies (either side)
leaves nothing behind.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from dataclasses import dataclass

import numpy as np

INLINE_BELOW = 64 * 1024  # bytes: arrays smaller than this are pickled into the message
ALIGN = 64


@dataclass(frozen=True)
class Place:
    """An array in the shared buffer."""
    offset: int
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize



def _shm_dir() -> str | None:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class SharedBuffer:
    """A memory-mapped file; `path` is None once unlinked (the mapping stays valid)."""

    def __init__(self, size: int, path: str | None = None):
        self.size = size
        if path is None:
            fd, path = tempfile.mkstemp(prefix="pagerunner-shm-", dir=_shm_dir())
            os.ftruncate(fd, size)
        else:
            fd = os.open(path, os.O_RDWR)
        try:
            self.map = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        self.path: str | None = path

    def unlink(self) -> None:
        if self.path is not None:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self.path = None

    def view(self, place: Place) -> np.ndarray:
        count = int(np.prod(place.shape, dtype=np.int64))
        return np.frombuffer(self.map, np.dtype(place.dtype), count, place.offset).reshape(place.shape)

    def close(self) -> None:
        self.unlink()
        try:
            self.map.close()
        except BufferError:  # a view is still alive: the mapping goes when it does
            pass


def needed(arrays: list[np.ndarray]) -> int:
    """Bytes of shared buffer that `pack` uses for these arrays."""
    return sum(_aligned(a.nbytes) for a in arrays if a.nbytes >= INLINE_BELOW)


def pack(arrays: list[np.ndarray], buffer: SharedBuffer | None) -> tuple[list, int]:
    """Large arrays into the buffer (from offset 0), small ones inline. Returns the message
    part and the bytes written to the buffer. Without room (or a buffer), everything is inline."""
    out: list = []
    offset = 0
    room = buffer is not None and needed(arrays) <= buffer.size
    for array in arrays:
        if room and array.nbytes >= INLINE_BELOW:
            place = Place(offset, tuple(array.shape), array.dtype.str)
            buffer.view(place)[...] = array  # type: ignore[union-attr]
            out.append(place)
            offset += _aligned(array.nbytes)
        else:
            out.append(np.ascontiguousarray(array))
    return out, offset


def unpack(items: list, buffer: SharedBuffer | None, copy: bool = False) -> list[np.ndarray]:
    """Arrays of a message; `copy=False` gives views into the buffer (valid until it is reused)."""
    arrays = []
    for item in items:
        if isinstance(item, Place):
            if buffer is None:
                raise ValueError("a shared-buffer array arrived but no buffer is attached")
            view = buffer.view(item)
            arrays.append(view.copy() if copy else view)
        else:
            arrays.append(item)
    return arrays


def message_bytes(items: list) -> int:
    """Payload bytes of a message's arrays (shared and inline alike)."""
    return sum(item.nbytes for item in items)


def _aligned(size: int) -> int:
    return -(-size // ALIGN) * ALIGN
