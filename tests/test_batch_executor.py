"""Pages in flight through an engine's optional ocr_many (DESIGN.md): grouping, per-page
results, a crashing or raising group retried one page at a time, timeouts scaled by the group."""

import json
from pathlib import Path

import pytest

from runner.devices import expand_devices
from runner.errors import UsageError
from runner.job import RunConfig, run_job
from tests.conftest import FAKE_ENGINE, make_page, run_cli

MANY = {"PAGERUNNER_FAKE_MANY": "1"}


def corpus(tmp_path: Path, pages: int, bad_width: int | None = None) -> Path:
    root = tmp_path / "in"
    root.mkdir()
    for index in range(pages):
        make_page(f"page {index}", seed=index).save(root / f"p{index:02d}.png")
    if bad_width:
        make_page("bad", size=(bad_width, 200)).save(root / "bad.png")
    return root


def records(out: Path) -> dict[str, dict]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["source"]: r for r in map(json.loads, lines)}


def texts(out: Path) -> dict[str, str]:
    return {source: r.get("text") for source, r in records(out).items()}


def test_groups_go_to_ocr_many_and_give_the_same_results(tmp_path):
    root = corpus(tmp_path, 7)
    single, grouped = tmp_path / "single", tmp_path / "grouped"
    assert run_cli("run", str(root), "-o", str(single), "--engine", FAKE_ENGINE, env=MANY).returncode == 0
    proc = run_cli("run", str(root), "-o", str(grouped), "--engine", FAKE_ENGINE, "--batch", "3", env=MANY)
    assert proc.returncode == 0, proc.stderr
    assert texts(grouped) == texts(single)
    sizes = [w for r in records(grouped).values() for w in r["warnings"] if w.startswith("batch of")]
    # Groups of 1 (through ocr()), 2, then 3: the first record does not wait for a full group.
    assert sorted(sizes) == ["batch of 2"] * 2 + ["batch of 3"] * 3
    assert len(records(grouped)) == 7
    assert not any(w.startswith("batch of") for r in records(single).values() for w in r["warnings"])


def test_inline_executor_groups_too(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGERUNNER_FAKE_MANY", "1")
    root = corpus(tmp_path, 5)
    summary = run_job(RunConfig([str(root)], tmp_path / "out", engine=FAKE_ENGINE, executor="inline", batch=2))
    assert summary.exit_code == 0 and summary.pages_done == 5
    sizes = sorted(w for r in records(tmp_path / "out").values() for w in r["warnings"])
    assert sizes == ["batch of 2"] * 4  # groups of 1, 2, 2


def test_a_group_that_crashes_is_retried_one_page_at_a_time(tmp_path):
    root = corpus(tmp_path, 5, bad_width=444)
    out = tmp_path / "out"
    proc = run_cli("run", str(root), "-o", str(out), "--engine", FAKE_ENGINE, "--batch", "3",
                   env={**MANY, "PAGERUNNER_FAKE_CRASH_WIDTH": "444"}, timeout=120)
    assert proc.returncode == 1, proc.stderr
    status = records(out)
    assert status["bad.png"]["error"]["code"] == "engine_failed"
    assert all(status[f"p{i:02d}.png"]["status"] == "ok" for i in range(5))


def test_a_group_that_raises_fails_only_the_bad_page(tmp_path):
    root = corpus(tmp_path, 4, bad_width=555)
    out = tmp_path / "out"
    proc = run_cli("run", str(root), "-o", str(out), "--engine", FAKE_ENGINE, "--batch", "5",
                   env={**MANY, "PAGERUNNER_FAKE_RAISE_WIDTH": "555"})
    assert proc.returncode == 1
    status = records(out)
    assert status["bad.png"]["error"]["message"] == "RuntimeError: engine bug on this page"
    assert all(status[f"p{i:02d}.png"]["status"] == "ok" for i in range(4))


def test_page_timeout_scales_with_the_group(tmp_path):
    # 3 pages of 1.2 s each in one group: 3.6 s, over --page-timeout 2 for one page but within
    # the group's 3 x 2 s, so nothing times out.
    root = corpus(tmp_path, 3)
    out = tmp_path / "out"
    proc = run_cli("run", str(root), "-o", str(out), "--engine", FAKE_ENGINE, "--batch", "3",
                   "--page-timeout", "2", env={**MANY, "PAGERUNNER_FAKE_DELAY": "1.2"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert all(r["status"] == "ok" for r in records(out).values())


def test_device_lists():
    assert expand_devices("cpu") == ["cpu"]
    assert expand_devices("gpu:0,1") == ["gpu:0", "gpu:1"]
    assert expand_devices("gpu:1,1") == ["gpu:1"]
    for bad in ("tpu", "gpu:x", "gpu:0,"):
        with pytest.raises(UsageError):
            expand_devices(bad)


def test_one_worker_per_listed_gpu():
    from runner.job import make_executor
    executor = make_executor(RunConfig([], Path("/nonexistent"), device="gpu:0,1", feeders=0))  # no owners
    devices = [c.engine_options.device for c in executor.configs]
    assert devices == ["gpu:0", "gpu:1"] and executor.workers == 2 and executor.batch == 8


def test_hunyuan_keeps_as_many_pages_in_flight_as_it_decodes_together():
    def calls(device: str, extra: tuple = ()) -> int:
        return RunConfig([], Path("/x"), engine="hunyuan", device=device, engine_extra=extra).pages_per_call()

    assert calls("cpu") == 8 and calls("gpu") == 32
    assert calls("cpu", (("batch_pages", "3"),)) == 3
    assert calls("gpu", (("low_memory", "1"),)) == 1
    assert RunConfig([], Path("/x"), engine="hunyuan", batch=5).pages_per_call() == 5
    assert RunConfig([], Path("/x")).pages_per_call() == 1  # ppocr on a CPU: one page per call
