"""Hostile inputs, faults and misuse: the batch goes on, the record stays truthful."""

import errno
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from jobs.store import JobStore
from outputs.jsonl import JsonlReadError, read_jsonl
from runner.errors import EnvironmentFailure
from runner.job import RunConfig, run_job
from tests.conftest import FAKE_ENGINE, REPO, make_page, run_cli

EXPECTED_EDGE = {  # document-level failures: one record with page null
    "bad1.pdf": "corrupt_pdf", "invalid.pdf": "corrupt_pdf", "issue-147.pdf": "corrupt_pdf",
    "empty.pdf": "empty_document", "empty.png": "empty_file", "bomb_60000x60000.png": "image_too_large",
    "r2-user-password.pdf": "password_required", "r6-user-password.pdf": "password_required",
}
EXPECTED_EDGE_PAGES = {"bad34.pdf": "page_load_failed", "truncated.jpg": "corrupt_image"}


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def edge_batch(eval_dir: Path, tmp_path: Path) -> Path:
    """Every edge case and good documents, in one folder (one batch)."""
    batch = tmp_path / "batch"
    shutil.copytree(eval_dir / "edge", batch / "edge")
    shutil.copytree(eval_dir / "pdfs", batch / "good", ignore=shutil.ignore_patterns("*.txt"))
    return batch


def check_edge_records(out: Path, eval_dir: Path) -> dict[str, list[dict]]:
    by_source: dict[str, list[dict]] = {}
    for record in records(out):
        by_source.setdefault(record["source"], []).append(record)
    for name, code in EXPECTED_EDGE.items():
        [record] = by_source[f"edge/{name}"]
        assert record["status"] == "failed" and record["page"] is None, name
        assert record["error"]["code"] == code, name
        assert record["error"]["message"], name
    for name, code in EXPECTED_EDGE_PAGES.items():
        [record] = by_source[f"edge/{name}"]
        assert record["status"] == "failed" and record["error"]["code"] == code, name
    for name in ("good/maint-guide.en.p5-9.pdf", "good/zhlipsum.p1-4.pdf"):
        assert by_source[name] and all(r["status"] == "ok" for r in by_source[name])
    for name in ("cardinal.pdf", "ccitt.pdf", "jbig2.pdf", "hugemono.pdf", "xref-errors.pdf",
                 "empty_protected.pdf"):
        assert all(r["status"] == "ok" for r in by_source[f"edge/{name}"]), name
    return by_source


def test_edge_cases_in_one_batch_text_layer(eval_dir, tmp_path):
    batch = edge_batch(eval_dir, tmp_path)
    out = tmp_path / "out"
    proc = run_cli("run", str(batch), "-o", str(out), "--engine", "textlayer", timeout=300)
    assert proc.returncode == 1, proc.stderr
    by_source = check_edge_records(out, eval_dir)
    assert by_source["edge/xref-errors.pdf"][0]["text"] == "Potato"
    for name, code in {**EXPECTED_EDGE, **EXPECTED_EDGE_PAGES}.items():
        assert f"edge/{name}" in proc.stderr and code in proc.stderr  # the end summary lists it


@pytest.mark.slow
def test_edge_cases_in_one_batch_ppocr(eval_dir, tmp_path):
    batch = edge_batch(eval_dir, tmp_path)
    out = tmp_path / "out"
    proc = run_cli("run", str(batch), "-o", str(out), "--dpi", "150", timeout=1500)
    assert proc.returncode == 1, proc.stderr
    by_source = check_edge_records(out, eval_dir)
    [huge] = by_source["edge/hugemono.pdf"]
    assert any("max-pixels" in w for w in huge["warnings"])
    assert "tiny amount of text" in huge["text"]
    assert "Potato" in by_source["edge/xref-errors.pdf"][0]["text"]


def test_passwords_file_never_leaks(eval_dir, tmp_path):
    secrets = tmp_path / "passwords.txt"
    secrets.write_text("wrong-one\nasdfzxcv\n")
    out = tmp_path / "out"
    proc = run_cli("run", str(eval_dir / "edge" / "r2-user-password.pdf"), str(eval_dir / "edge" / "r6-user-password.pdf"),
                   "-o", str(out), "--engine", "textlayer", "--passwords-file", str(secrets))
    assert proc.returncode == 0, proc.stderr
    assert all("pdf encryption test" in r["text"] for r in records(out))
    assert "wrong-one" not in proc.stderr
    for path in out.rglob("*"):
        if path.is_file():
            assert b"wrong-one" not in path.read_bytes(), path


def fault_corpus(tmp_path: Path, width: int) -> Path:
    root = tmp_path / "in"
    root.mkdir()
    for index in range(3):
        make_page(f"fine {index}", seed=index).save(root / f"fine{index}.png")
    make_page("bad", size=(width, 200)).save(root / "bad.png")
    return root


def test_page_timeout_fails_the_stuck_page_only(tmp_path):
    corpus = fault_corpus(tmp_path, 333)
    out = tmp_path / "out"
    started = time.monotonic()
    proc = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE, "--page-timeout", "3",
                   env={"PAGERUNNER_FAKE_HANG_WIDTH": "333"}, timeout=120)
    assert time.monotonic() - started < 60
    assert proc.returncode == 1, proc.stderr
    status = {r["source"]: r for r in records(out)}
    assert status["bad.png"]["error"]["code"] == "page_timeout"
    assert all(status[f"fine{i}.png"]["status"] == "ok" for i in range(3))


def test_worker_crash_costs_only_its_page(tmp_path):
    corpus = fault_corpus(tmp_path, 444)
    out = tmp_path / "out"
    proc = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE,
                   env={"PAGERUNNER_FAKE_CRASH_WIDTH": "444"}, timeout=120)
    assert proc.returncode == 1, proc.stderr
    status = {r["source"]: r for r in records(out)}
    assert status["bad.png"]["error"]["code"] == "engine_failed"
    assert "worker process died" in status["bad.png"]["error"]["message"]
    assert all(status[f"fine{i}.png"]["status"] == "ok" for i in range(3))


def test_engine_exception_costs_only_its_page(tmp_path):
    corpus = fault_corpus(tmp_path, 555)
    out = tmp_path / "out"
    summary = run_job(RunConfig([str(corpus)], out, engine=FAKE_ENGINE, executor="inline"))
    os.environ.pop("PAGERUNNER_FAKE_RAISE_WIDTH", None)
    assert summary.exit_code == 0  # the variable was not set: a control run
    out2 = tmp_path / "out2"
    proc = run_cli("run", str(corpus), "-o", str(out2), "--engine", FAKE_ENGINE,
                   env={"PAGERUNNER_FAKE_RAISE_WIDTH": "555"})
    assert proc.returncode == 1
    status = {r["source"]: r for r in records(out2)}
    assert status["bad.png"]["error"] == {"code": "engine_failed", "message": "RuntimeError: engine bug on this page"}


def _reference(corpus: Path, tmp_path: Path) -> list[dict]:
    out = tmp_path / "reference"
    run_job(RunConfig([str(corpus)], out, engine=FAKE_ENGINE, executor="inline"))
    return _without_timings(records(out))


def _without_timings(items: list[dict]) -> list[dict]:
    for item in items:
        item.pop("timings", None)
    return items


def test_enospc_is_a_clear_error_and_resumable(corpus, tmp_path, monkeypatch):
    import runner.export as export

    out = tmp_path / "out"
    real = export.write_atomic
    calls = {"n": 0}

    def flaky(path, chunks):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, chunks)

    monkeypatch.setattr(export, "write_atomic", flaky)
    with pytest.raises(EnvironmentFailure, match="disk full"):
        run_job(RunConfig([str(corpus)], out, engine=FAKE_ENGINE, executor="inline"))
    monkeypatch.setattr(export, "write_atomic", real)
    assert JobStore(out).db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    summary = run_job(RunConfig([str(corpus)], out, engine=FAKE_ENGINE, executor="inline"))
    assert summary.exit_code == 0
    assert _without_timings(records(out)) == _reference(corpus, tmp_path)


@pytest.fixture
def small_tmpfs(tmp_path):
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
                          capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_real_disk_full_then_resume(corpus, tmp_path, small_tmpfs):
    filler = small_tmpfs / "filler"
    out = small_tmpfs / "out"
    # Leave room for the store to be created but not for the whole job.
    with open(filler, "wb") as fh:
        fh.write(b"\0" * (2 * 1024 * 1024 - 96 * 1024))
    proc = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE)
    assert proc.returncode == 4, proc.stderr
    assert "disk" in proc.stderr.lower() or "full" in proc.stderr.lower()
    filler.unlink()  # the operator frees space
    again = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE)
    assert again.returncode == 0, again.stderr
    assert _without_timings(records(out)) == _reference(corpus, tmp_path)


def test_read_only_output_then_resume(corpus, tmp_path, small_tmpfs):
    out = small_tmpfs / "out"
    proc = run_cli("run", str(corpus / "alpha.pdf"), "-o", str(out), "--engine", FAKE_ENGINE)
    assert proc.returncode == 0
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True)
    try:
        refused = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE)
        assert refused.returncode == 4, refused.stderr
        assert "read-only" in refused.stderr.lower() or "cannot" in refused.stderr.lower()
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_tmpfs)], check=True)
    again = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE)
    assert again.returncode == 0, again.stderr
    assert _without_timings(records(out)) == _reference(corpus, tmp_path)


def test_output_folder_deleted_mid_run(corpus, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO), "PAGERUNNER_FAKE_DELAY": "0.3"}
    proc = subprocess.Popen([sys.executable, "-m", "runner", "run", str(corpus), "-o", str(out),
                             "--engine", FAKE_ENGINE, "-q"], cwd=REPO, env=env,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (out / "alpha.md").exists():
        time.sleep(0.1)
    _remove_while_written(out)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 4, stderr
    assert "disappeared" in stderr or "No such file" in stderr
    again = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE)
    assert again.returncode == 0, again.stderr
    assert _without_timings(records(out)) == _reference(corpus, tmp_path)


def _remove_while_written(folder: Path, tries: int = 20) -> None:
    """Delete a folder the run is still writing into: a file it writes between rmtree's listing
    and its rmdir leaves the folder "not empty", so try again."""
    for _ in range(tries):
        try:
            shutil.rmtree(folder)
            return
        except OSError:
            time.sleep(0.01)
    shutil.rmtree(folder)


def test_hostile_names_stay_inside_out(tmp_path):
    root = tmp_path / "in"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    make_page("one").save(root / "a" / "same.png")
    make_page("two").save(root / "b" / "same.png")
    long_name = "L" * 240 + ".png"
    make_page("long").save(root / long_name)
    odd = os.fsdecode(b"odd-\xff\xfe.png")
    make_page("odd").save(root / odd)
    outside = tmp_path / "outside"
    outside.mkdir()
    make_page("outside").save(outside / "secret.png")
    os.symlink(outside, root / "link")
    out = tmp_path / "out"
    summary = run_job(RunConfig([str(root)], out, engine=FAKE_ENGINE, executor="inline"))
    assert summary.exit_code == 0 and summary.pages_done == 5
    written = [p for p in out.rglob("*.md")]
    assert len(written) == 5
    for path in written:
        assert out.resolve() in path.resolve().parents
    assert (out / "a" / "same.md").exists() and (out / "b" / "same.md").exists()
    assert (out / "link" / "secret.md").exists()
    assert not any(p.is_symlink() for p in out.rglob("*"))


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400))
def test_fuzz_jsonl_reader(tmp_path, data):
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    try:
        list(read_jsonl(path))
    except JsonlReadError:
        pass


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=8), max_size=3), max_size=5))
def test_fuzz_jsonl_reader_round_trip(tmp_path, objects):
    path = tmp_path / "ok.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    assert list(read_jsonl(path)) == objects


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_altered_model_files_stop_the_run_before_any_page(tmp_path, corpus, damage):
    from model_cache.cache import BUNDLED_PPOCR

    models = tmp_path / "models"
    shutil.copytree(BUNDLED_PPOCR, models)
    target = models / "rec.ncnn.bin"
    data = bytearray(target.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    else:
        data = data[: len(data) // 3]
    target.write_bytes(bytes(data))
    out = tmp_path / "out"
    proc = run_cli("run", str(corpus / "gamma.png"), "-o", str(out), "--model-dir", str(models))
    assert proc.returncode == 4, proc.stderr
    assert "rec.ncnn.bin" in proc.stderr and "manifest" in proc.stderr
    assert JobStore(out).counts() == {"pending": 1}  # nothing was run on the altered model
