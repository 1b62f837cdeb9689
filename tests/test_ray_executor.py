"""`--executor ray`: same outputs as a local run, actor deaths and stuck pages handled, the CLI end to end.

The Ray tests share one local Ray instance (2 CPUs, loopback, no dashboard) started here; the CLI
test starts its own through `pagerunner run`. Everything is skipped when Ray is not installed.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from model_cache.engine import EngineError, EngineOptions
from tests.conftest import FAKE_ENGINE, REPO, make_page, run_cli
from tests.fake_engine import DigestEngine

TEST_ENGINE = "tests.test_ray_executor:create_test_engine"
BROKEN_ENGINE = "tests.test_ray_executor:create_broken_engine"
ODD_SIZE = (420, 310)  # the page size the fault-injecting engine reacts to


# --- engines used inside the Ray actors (imported there by their plugin name) -------------------

class FaultyEngine(DigestEngine):
    """DigestEngine that dies (`crash_size`) or hangs (`hang_size`) on pages of one size."""

    def __init__(self, delay: float, crash_size: str | None, hang_size: str | None):
        super().__init__(delay)
        self.crash_size, self.hang_size = crash_size, hang_size

    def ocr(self, image):
        size = f"{image.width}x{image.height}"
        if size == self.crash_size:
            os._exit(3)  # like a segfault in native code: the whole actor process goes
        if size == self.hang_size:
            time.sleep(600)
        return super().ocr(image)


def create_test_engine(options: EngineOptions) -> FaultyEngine:
    return FaultyEngine(float(options.get("delay", "0") or 0), options.get("crash_size"),
                        options.get("hang_size"))


def create_broken_engine(options: EngineOptions) -> DigestEngine:
    raise EngineError("model files refused (test)")


# --- helpers -----------------------------------------------------------------------------------

ray = pytest.importorskip("ray")

from runner.errors import EngineUnavailable  # noqa: E402
from runner.job import RunConfig, make_executor, run_job  # noqa: E402
from runner.ray_executor import RayExecutor  # noqa: E402


CLI_DELAY = "0.4"  # seconds per page for CLI drivers joining the shared cluster (time to kill them)


@pytest.fixture(scope="module")
def ray_cluster():
    if ray.is_initialized():
        ray.shutdown()
    # The cluster's own environment (inherited by the workers of every job) carries the fake
    # engine's delay for CLI drivers that join it; this test process's job sets it back to 0.
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "PAGERUNNER_FAKE_DELAY": "0"}
    saved = os.environ.get("PAGERUNNER_FAKE_DELAY")
    sigterm = signal.getsignal(signal.SIGTERM)
    os.environ["PAGERUNNER_FAKE_DELAY"] = CLI_DELAY
    try:
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING,
                 runtime_env={"env_vars": env})
    finally:
        signal.signal(signal.SIGTERM, sigterm)  # ray.init installs its own; other tests expect pytest's
        if saved is None:
            os.environ.pop("PAGERUNNER_FAKE_DELAY", None)
        else:
            os.environ["PAGERUNNER_FAKE_DELAY"] = saved
    yield ray
    ray.shutdown()


def comparable(out: Path) -> list[dict]:
    """results.jsonl without timings, which are the only thing allowed to differ."""
    rows = []
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row.pop("timings", None)
        rows.append(row)
    return rows


def text_outputs(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text(encoding="utf-8")
            for p in sorted(out.rglob("*")) if p.suffix in (".md", ".txt")}


def local_run(inputs: Path, out: Path, engine: str = FAKE_ENGINE, **extra: str) -> list[dict]:
    """The same job in this process; `extra` engine settings are part of a document's identity,
    so a run compared with this one must use the same."""
    summary = run_job(RunConfig([str(inputs)], out, engine=engine, executor="inline",
                                engine_extra=tuple(extra.items())))
    assert summary.pages_failed == 0
    return comparable(out)


def ray_config(inputs: Path, out: Path, engine: str = FAKE_ENGINE, **extra: str) -> RunConfig:
    # one engine thread per actor, so that two actors fit the 2-CPU test cluster
    return RunConfig([str(inputs)], out, engine=engine, executor="ray", workers=2, threads=1,
                     engine_extra=tuple(extra.items()))


def add_odd_page(corpus: Path) -> str:
    make_page("odd one", size=ODD_SIZE, seed=7).save(corpus / "odd.png")
    return f"{ODD_SIZE[0]}x{ODD_SIZE[1]}"


class KillOneActor:
    """Runs a RayExecutor and, after `after` results, kills an actor that holds pages in flight."""

    def __init__(self, inner: RayExecutor, after: int = 2):
        self.inner, self.after, self.killed = inner, after, 0

    def run(self, tasks, stop):
        for count, result in enumerate(self.inner.run(tasks, stop), start=1):
            yield result
            if count == self.after:
                busy = [s for s in self.inner.slots if s.in_flight]
                assert busy, "nothing in flight to kill"
                ray.kill(busy[0].actor, no_restart=True)
                self.killed += 1


# --- no Ray needed ----------------------------------------------------------------------------

def test_missing_ray_is_a_clear_error(monkeypatch):
    from runner.ray_executor import import_ray

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(EngineUnavailable, match=r"pip install 'pagerunner\[ray\]'"):
        import_ray()


def test_document_references_are_dropped_when_their_pages_are_back():
    from jobs.store import PageTask
    from runner.ray_executor import _Documents

    class FakeRay:
        puts = 0

        def put(self, data):
            FakeRay.puts += 1
            return ("ref", FakeRay.puts)

    docs = _Documents(FakeRay())
    tasks = [PageTask(doc, page, __file__, doc, "pdf", {}) for doc in "abc" for page in (1, 2)]
    for task in tasks[:2]:
        docs.acquire(task)
    assert FakeRay.puts == 1  # one put per document, shared by its pages
    docs.release(tasks[0])
    docs.acquire(tasks[2])  # document b starts while a page of a is still out
    assert set(docs.refs) == {"a", "b"}
    docs.release(tasks[1])
    assert set(docs.refs) == {"b"}
    for task in tasks[3:]:
        docs.acquire(task)
    docs.release(tasks[2]), docs.release(tasks[3])
    assert set(docs.refs) == {"c"}  # only the latest document's bytes may stay


# --- the CLI starts its own local Ray (runs first, before the shared cluster exists) -----------

@pytest.mark.slow
def test_cli_run_with_ray_executor_equals_local(corpus, tmp_path):
    expected = local_run(corpus, tmp_path / "local")
    out = tmp_path / "ray"
    done = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE, "--executor", "ray",
                   "--workers", "2", "--threads", "1", "--jsonl", "-", timeout=240)
    assert done.returncode == 0, done.stderr
    streamed = [json.loads(line) for line in done.stdout.splitlines()]  # stdout: results only
    assert sorted((r["source"], r["page"]) for r in streamed) == sorted((r["source"], r["page"])
                                                                          for r in expected)
    assert comparable(out) == expected
    assert text_outputs(out) == text_outputs(tmp_path / "local")
    status = run_cli("status", str(out))
    assert status.returncode == 0, status.stderr


# --- on the shared local Ray instance -----------------------------------------------------------

def test_same_outputs_as_local_executor(ray_cluster, corpus, tmp_path):
    expected = local_run(corpus, tmp_path / "local")
    summary = run_job(ray_config(corpus, tmp_path / "ray"))
    assert summary.exit_code == 0 and summary.pages_done == len(expected) == 9
    assert comparable(tmp_path / "ray") == expected
    assert text_outputs(tmp_path / "ray") == text_outputs(tmp_path / "local")


def test_killed_actor_loses_and_duplicates_no_page(ray_cluster, corpus, tmp_path):
    expected = local_run(corpus, tmp_path / "local", engine=TEST_ENGINE, delay="0.3")
    executors: list[KillOneActor] = []

    def factory(config: RunConfig):
        executors.append(KillOneActor(make_executor(config)))
        return executors[0]

    summary = run_job(ray_config(corpus, tmp_path / "ray", engine=TEST_ENGINE, delay="0.3"),
                      executor_factory=factory)
    ex = executors[0]
    assert ex.killed == 1 and ex.inner.restarts >= 1  # the kill really hit pages in flight
    assert summary.exit_code == 0 and summary.pages_done == 9 and summary.processed_now == 9
    assert comparable(tmp_path / "ray") == expected  # one line per page, same content


def test_page_that_kills_actors_twice_is_failed_and_the_batch_goes_on(ray_cluster, corpus, tmp_path):
    odd = add_odd_page(corpus)
    summary = run_job(ray_config(corpus, tmp_path / "ray", engine=TEST_ENGINE, crash_size=odd))
    assert summary.pages_done == 9 and summary.pages_failed == 1
    rows = {(r["source"], r["page"]): r for r in comparable(tmp_path / "ray")}
    failed = rows[("odd.png", 1)]
    assert failed["status"] == "failed" and failed["error"]["code"] == "engine_failed"
    assert "Ray worker died" in failed["error"]["message"]


def test_stuck_page_times_out_and_its_actor_is_replaced(ray_cluster, corpus, tmp_path):
    odd = add_odd_page(corpus)
    config = ray_config(corpus, tmp_path / "ray", engine=TEST_ENGINE, hang_size=odd)
    config.page_timeout = 5.0
    started = time.monotonic()
    summary = run_job(config)
    assert time.monotonic() - started < 60
    assert summary.pages_done == 9 and summary.pages_failed == 1
    failed = [r for r in comparable(tmp_path / "ray") if r["status"] == "failed"]
    assert [(r["source"], r["error"]["code"]) for r in failed] == [("odd.png", "page_timeout")]


def test_engine_that_cannot_load_stops_the_run(ray_cluster, corpus, tmp_path):
    with pytest.raises(EngineUnavailable, match="model files refused"):
        run_job(ray_config(corpus, tmp_path / "ray", engine=BROKEN_ENGINE))


def test_cli_joins_an_existing_cluster_by_address(ray_cluster, corpus, tmp_path):
    expected = local_run(corpus, tmp_path / "local")
    address = ray_cluster.get_runtime_context().gcs_address
    out = tmp_path / "ray"
    done = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE, "--executor", "ray",
                   "--ray-address", address, "--workers", "2", "--threads", "1", timeout=240)
    assert done.returncode == 0, done.stderr
    assert comparable(out) == expected


@pytest.mark.slow
def test_driver_killed_mid_run_then_rerun_resumes(ray_cluster, corpus, tmp_path):
    expected = local_run(corpus, tmp_path / "local")
    out = tmp_path / "ray"
    args = ["run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE, "--executor", "ray",
            "--ray-address", ray_cluster.get_runtime_context().gcs_address, "--workers", "2", "--threads", "1"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    driver = subprocess.Popen([sys.executable, "-m", "runner", *args], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and driver.poll() is None:
        if results.exists() and len(results.read_text(encoding="utf-8").splitlines()) >= 2:
            break
        time.sleep(0.05)
    driver.kill()  # SIGKILL: no cleanup at all
    driver.wait()
    done_before = len(results.read_text(encoding="utf-8").splitlines())
    assert 2 <= done_before < len(expected), "the driver was not killed mid-run"
    again = run_cli(*args, timeout=240)
    assert again.returncode == 0, again.stderr
    assert comparable(out) == expected
