"""model_cache/turns.py: one process at a time holds a turn; a dead holder's turn is freed."""

import multiprocessing
import os
import signal
import time
from pathlib import Path

from model_cache.turns import Turns


def _hold(path: str, seconds: float, log: str, ready) -> None:
    turns = Turns(path)
    with turns.taken():
        ready.set()
        start = time.monotonic()
        time.sleep(seconds)
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} {start} {time.monotonic()}\n")


def test_processes_sharing_a_file_take_turns(tmp_path: Path):
    ctx = multiprocessing.get_context("spawn")
    lock, log = str(tmp_path / "det.turns"), str(tmp_path / "log")
    ready = [ctx.Event() for _ in range(3)]
    procs = [ctx.Process(target=_hold, args=(lock, 0.3, log, r)) for r in ready]
    for p in procs:
        p.start()
    for p in procs:
        p.join(20)
        assert p.exitcode == 0
    spans = sorted(tuple(map(float, line.split()[1:])) for line in Path(log).read_text().splitlines())
    assert len(spans) == 3
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end  # no two inside at once


def _holding(tmp_path: Path, seconds: float) -> tuple[str, multiprocessing.process.BaseProcess]:
    """A process inside its turn (it holds it `seconds`): the lock path and the process."""
    ctx = multiprocessing.get_context("spawn")
    lock = str(tmp_path / "det.turns")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold, args=(lock, seconds, str(tmp_path / "log"), ready))
    holder.start()
    assert ready.wait(20)
    return lock, holder


def test_a_killed_holder_frees_its_turn(tmp_path: Path):
    lock, holder = _holding(tmp_path, 60.0)
    os.kill(holder.pid, signal.SIGKILL)  # dies inside its turn
    holder.join(10)
    turns = Turns(lock)
    start = time.monotonic()
    with turns.taken():
        pass
    assert time.monotonic() - start < 5
    assert turns.waited < 5
    turns.close()


def test_no_path_never_waits_and_opens_nothing(tmp_path: Path):
    turns = Turns(None)
    with turns.taken():
        with turns.taken():  # not even against itself
            pass
    assert turns.waited == 0.0 and list(tmp_path.iterdir()) == []


def test_the_wait_is_counted(tmp_path: Path):
    lock, holder = _holding(tmp_path, 0.5)
    turns = Turns(lock)
    with turns.taken():
        pass
    holder.join(10)
    assert turns.waited > 0.2
    turns.close()
