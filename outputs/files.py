"""Crash-safe file writes: write a temp file beside the target, fsync, rename, fsync the folder."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, Iterable


# write_atomic's temp names: "." + target name (at most 60 chars) + "." + mkstemp's 8 chars + ".tmp"
TEMP_NAME = re.compile(r"^\..{1,60}\.[A-Za-z0-9_]{8}\.tmp$", re.DOTALL)


def write_atomic(path: Path, chunks: Iterable[str]) -> None:
    """Replace `path` with the concatenated chunks (UTF-8, LF); readers see the old or the new
    file, never a torn one."""
    def write(fh: BinaryIO) -> None:
        for chunk in chunks:
            fh.write(chunk.encode("utf-8"))

    write_atomic_bytes(path, write)


def write_atomic_bytes(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Replace `path` with what `write` writes into the stream it is given, crash-safely."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name[:60]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.chmod(tmp_name, 0o666 & ~_umask())
            os.fsync(fh.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temps(root: Path, skip: str) -> int:
    """Delete write_atomic temp files a killed run left under `root` (not under `root/skip`).
    Call only while holding the output folder's run lock: then no live writer owns them."""
    removed = 0
    for folder, dirs, files in os.walk(root):
        if Path(folder) == root and skip in dirs:
            dirs.remove(skip)
        for name in files:
            if TEMP_NAME.match(name):
                try:
                    os.unlink(os.path.join(folder, name))
                    removed += 1
                except OSError:
                    pass
    return removed
