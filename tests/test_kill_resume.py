"""The store invariants under SIGKILL, SIGINT and SIGTERM, against a real `pagerunner run` process."""

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FAKE_ENGINE, REPO, make_page, make_pdf


def build_corpus(root: Path) -> Path:
    root.mkdir(parents=True)
    for index in range(4):
        make_pdf(root / f"doc{index}.pdf", 4, f"doc{index}")
    (root / "scans").mkdir()
    for index in range(4):
        make_page(f"scan {index}", seed=index).save(root / "scans" / f"s{index}.png")
    # Identical bytes under other names: OCR'd once, but every name gets its records and files.
    shutil.copyfile(root / "doc0.pdf", root / "doc0 (1).pdf")
    (root / "scans" / "again").mkdir()
    shutil.copyfile(root / "scans" / "s1.png", root / "scans" / "again" / "s1.png")
    return root  # 20 pages of work, 25 pages of records


def command(corpus: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "runner", "run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE, "-q"]


def start(corpus: Path, out: Path, delay: float = 0.08) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PAGERUNNER_FAKE_DELAY": str(delay)}
    return subprocess.Popen(command(corpus, out), cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def finish(corpus: Path, out: Path) -> int:
    return start(corpus, out, delay=0.0).wait(timeout=180)


def snapshot(out: Path) -> dict[str, object]:
    """Every output file; JSONL records without timings (the only field allowed to differ)."""
    files: dict[str, object] = {}
    for path in sorted(out.rglob("*")):
        if not path.is_file() or ".pagerunner" in path.parts:
            continue
        rel = path.relative_to(out).as_posix()
        if rel == "results.jsonl":
            records = [json.loads(line) for line in path.read_text().splitlines()]
            for record in records:
                record.pop("timings")
            files[rel] = records
        else:
            files[rel] = path.read_bytes()
    return files


def check_store(out: Path) -> dict[str, int]:
    path = out / ".pagerunner" / "store.sqlite"
    if not path.exists():
        return {}  # killed before the store was created
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'pages'").fetchone() is None:
        db.close()
        return {}  # killed before the schema's first transaction committed: an empty store
    bad = db.execute("SELECT COUNT(*) FROM pages WHERE state IN ('done','failed') AND result IS NULL").fetchone()[0]
    assert bad == 0, "a finished page without its result"
    states = dict(db.execute("SELECT state, COUNT(*) FROM pages GROUP BY state").fetchall())
    db.close()
    return states


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    base = tmp_path_factory.mktemp("ref")
    corpus = build_corpus(base / "in")
    out = base / "out"
    assert finish(corpus, out) == 0
    expected = snapshot(out)
    sources = [r["source"] for r in expected["results.jsonl"]]
    assert len(sources) == 25 and sources.count("doc0 (1).pdf") == 4 and "scans/again/s1.png" in sources
    assert "doc0 (1).md" in expected and "scans/again/s1.txt" in expected
    return corpus, expected


def kill_and_resume(corpus: Path, out: Path, after: float, whole_group: bool) -> dict[str, int]:
    proc = start(corpus, out)
    time.sleep(after)
    if proc.poll() is None:
        if whole_group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()  # the driver alone: its worker must die with it
    proc.wait(timeout=60)
    return check_store(out)


@pytest.mark.parametrize("after,whole_group", [(0.4, False), (1.2, True), (2.0, False)])
def test_sigkill_then_rerun_equals_uninterrupted(reference, tmp_path, after, whole_group):
    corpus, expected = reference
    out = tmp_path / "out"
    kill_and_resume(corpus, out, after, whole_group)
    assert finish(corpus, out) == 0
    assert check_store(out) == {"done": 20}
    assert snapshot(out) == expected


@pytest.mark.slow
def test_sigkill_soak(reference, tmp_path):
    """Kill one job at >= 20 random moments, rerunning after each; then finish and compare."""
    corpus, expected = reference
    out = tmp_path / "out"
    rng = random.Random(20261129)
    kills = 0
    survived_states = []
    deadline = time.monotonic() + 240
    while kills < 20 and time.monotonic() < deadline:
        states = kill_and_resume(corpus, out, rng.uniform(0.05, 1.6), whole_group=rng.random() < 0.5)
        survived_states.append(states)
        kills += 1
        if states.get("done", 0) == 20:  # finished before the kill: start over to keep killing mid-run
            shutil.rmtree(out)
    assert kills >= 20
    assert finish(corpus, out) == 0
    assert snapshot(out) == expected


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_stops_cleanly_and_resumes(reference, tmp_path, signum, code):
    corpus, expected = reference
    out = tmp_path / "out"
    proc = start(corpus, out, delay=0.25)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until some pages are committed
        time.sleep(0.2)
        db_path = out / ".pagerunner" / "store.sqlite"
        if db_path.exists():
            try:
                db = sqlite3.connect(db_path)
                done = db.execute("SELECT COUNT(*) FROM pages WHERE state='done'").fetchone()[0]
                db.close()
            except sqlite3.Error:
                continue
            if done >= 2:
                break
    os.kill(proc.pid, signum)
    assert proc.wait(timeout=60) == code
    states = check_store(out)
    assert states.get("running", 0) == 0 and 2 <= states.get("done", 0) < 20
    assert finish(corpus, out) == 0
    assert snapshot(out) == expected
