import json
import re
import subprocess
import sys
from pathlib import Path

from PIL import Image

from runner.lock import RunLock
from tests.conftest import FAKE_ENGINE, REPO, run_cli


def test_run_writes_tree_and_exit_0(corpus, tmp_path):
    out = tmp_path / "out"
    proc = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # results go to files unless --jsonl -
    records = [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["source"], r["page"]) for r in records] == [
        ("alpha.pdf", 1), ("alpha.pdf", 2), ("alpha.pdf", 3), ("gamma.png", 1),
        ("sub/beta.pdf", 1), ("sub/beta.pdf", 2), ("sub/multi.tif", 1), ("sub/multi.tif", 2),
        ("sub/multi.tif", 3)]
    for stem in ("alpha", "gamma", "sub/beta", "sub/multi"):
        assert (out / f"{stem}.md").is_file() and (out / f"{stem}.txt").is_file()
    assert "9 of 9 pages done" in proc.stderr


def test_jsonl_to_stdout_for_pipelines(corpus, tmp_path):
    out = tmp_path / "out"
    proc = run_cli("run", str(corpus / "alpha.pdf"), "-o", str(out), "--engine", FAKE_ENGINE,
                   "--jsonl", "-", "--quiet")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert len(lines) == 3 and all(json.loads(l)["schema"] == "pagerunner.page/1" for l in lines)
    assert proc.stderr == ""


def test_paths_from_stdin(corpus, tmp_path):
    proc = run_cli("run", "-", "-o", str(tmp_path / "o"), "--engine", FAKE_ENGINE, "-q",
                   input=f"{corpus / 'gamma.png'}\n{corpus / 'sub' / 'beta.pdf'}\n")
    assert proc.returncode == 0
    assert len((tmp_path / "o" / "results.jsonl").read_text().splitlines()) == 3


def test_usage_errors_exit_2(tmp_path, corpus):
    assert run_cli("run", str(tmp_path / "missing"), "-o", str(tmp_path / "o")).returncode == 2
    assert run_cli("run", str(corpus), "-o", str(tmp_path / "o"), "--pages", "3-1").returncode == 2
    assert run_cli("run", str(corpus), "-o", str(tmp_path / "o"), "--formats", "docx").returncode == 2
    assert run_cli("run", str(corpus), "-o", str(tmp_path / "o"), "--engine", "nope").returncode == 2
    assert run_cli("status", str(tmp_path / "nothing-here")).returncode == 2
    assert run_cli("run", str(corpus), "-o", str(tmp_path / "o"), "-E", "no-equals-sign").returncode == 2
    assert not (tmp_path / "o" / "results.jsonl").exists()


def test_engine_options_reach_the_engine_and_the_document_identity(corpus, tmp_path):
    def doc_ids_and_texts(out: Path, *extra: str) -> tuple[set[str], list[str]]:
        proc = run_cli("run", str(corpus / "gamma.png"), "-o", str(out), "--engine", FAKE_ENGINE, "-q",
                       "--jsonl", "-", *extra)
        assert proc.returncode == 0, proc.stderr
        records = [json.loads(line) for line in proc.stdout.splitlines()]
        return {r["doc_id"] for r in records}, [r["text"] for r in records]

    plain_ids, plain_text = doc_ids_and_texts(tmp_path / "a")
    one_ids, one_text = doc_ids_and_texts(tmp_path / "b", "--engine-option", "label=one")
    two_ids, two_text = doc_ids_and_texts(tmp_path / "c", "-E", "label=two")
    assert "label" not in plain_text[0] and "label one" in one_text[0] and "label two" in two_text[0]
    assert len(plain_ids | one_ids | two_ids) == 3  # a setting that changes text changes identity
    assert doc_ids_and_texts(tmp_path / "d", "-E", "low_memory=1")[0] == plain_ids  # speed-only


def test_some_pages_failed_exit_1_and_status(corpus, tmp_path):
    (corpus / "zz-broken.pdf").write_bytes(b"%PDF-1.4\nnot really")
    out = tmp_path / "out"
    proc = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE)
    assert proc.returncode == 1
    assert "zz-broken.pdf: corrupt_pdf" in proc.stderr
    status = run_cli("status", str(out), "--json")
    data = json.loads(status.stdout)
    assert data["pages"]["done"] == 9 and data["documents"]["failed"] == 1
    assert data["failures"][0]["code"] == "corrupt_pdf"
    human = run_cli("status", str(out))
    assert "corrupt_pdf" in human.stderr and "pages" in human.stderr


def test_second_run_on_same_output_refuses(corpus, tmp_path):
    out = tmp_path / "out"
    lock = RunLock(out / ".pagerunner")
    lock.acquire()
    try:
        proc = run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE)
        assert proc.returncode == 3
        assert "another pagerunner run" in proc.stderr and "pid" in proc.stderr
    finally:
        lock.release()


def test_export_refuses_while_a_run_holds_the_folder(corpus, tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", str(corpus / "gamma.png"), "-o", str(out), "--engine", FAKE_ENGINE, "-q").returncode == 0
    lock = RunLock(out / ".pagerunner")
    lock.acquire()
    try:
        proc = run_cli("export", str(out))
        assert proc.returncode == 3 and "another pagerunner run" in proc.stderr
    finally:
        lock.release()
    assert run_cli("export", str(out)).returncode == 0


def test_a_killed_runs_temp_files_are_swept_by_the_next_run(corpus, tmp_path):
    """write_atomic's temp files survive a SIGKILL; the next run (holding the lock) removes them,
    so the folder ends exactly as after an uninterrupted run."""
    out = tmp_path / "out"
    assert run_cli("run", str(corpus / "gamma.png"), "-o", str(out), "--engine", FAKE_ENGINE, "-q").returncode == 0
    stale = [out / ".gamma.md.a1B2c3D4.tmp", out / "sub" / ".beta.txt.zz__zz99.tmp"]
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half a file")
    (out / ".pagerunner" / ".keep.a1B2c3D4.tmp").write_text("not ours to sweep")
    (out / "notes.tmp").write_text("a user's file")
    assert run_cli("run", str(corpus / "gamma.png"), "-o", str(out), "--engine", FAKE_ENGINE, "-q").returncode == 0
    assert not any(path.exists() for path in stale)
    assert (out / ".pagerunner" / ".keep.a1B2c3D4.tmp").exists() and (out / "notes.tmp").exists()


def test_two_runs_at_once_never_process_a_page_twice(corpus, tmp_path):
    out = tmp_path / "out"
    env = {"PYTHONPATH": str(REPO), "PAGERUNNER_FAKE_DELAY": "0.2"}
    cmd = [sys.executable, "-m", "runner", "run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE, "-q"]
    procs = [subprocess.Popen(cmd, cwd=REPO, env={**__import__("os").environ, **env},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    codes = sorted(p.wait(timeout=120) for p in procs)
    assert codes == [0, 3]
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 9


def test_export_regenerates_outputs(corpus, tmp_path):
    out = tmp_path / "out"
    run_cli("run", str(corpus), "-o", str(out), "--engine", FAKE_ENGINE, "-q")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and ".pagerunner" not in p.parts}
    for path in before:
        path.unlink()
    proc = run_cli("export", str(out))
    assert proc.returncode == 0
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and ".pagerunner" not in p.parts}
    assert after == before


def test_retry_with_password(eval_dir, tmp_path):
    out = tmp_path / "out"
    pdf = eval_dir / "edge" / "r6-user-password.pdf"
    first = run_cli("run", str(pdf), "-o", str(out), "--engine", "textlayer")
    assert first.returncode == 1 and "password_required" in first.stderr
    second = run_cli("retry", str(out), "--password", "asdfzxcv")
    assert second.returncode == 0, second.stderr
    record = json.loads((out / "results.jsonl").read_text())
    assert "pdf encryption test" in record["text"]
    store_bytes = (out / ".pagerunner" / "store.sqlite").read_bytes()
    # The document's own text says "password: asdfzxcv" (a line, and that line's words).
    own_text = re.sub(rb'password: asdfzxcv|"text": ?"asdfzxcv"', b"", store_bytes)
    assert b"asdfzxcv" not in own_text
    assert "asdfzxcv" not in second.stderr


def test_textlayer_equals_pdf_text_layers(eval_dir, tmp_path):
    sys.path.insert(0, str(eval_dir / "tools"))
    from gt_normalize import normalize

    out = tmp_path / "out"
    proc = run_cli("run", str(eval_dir / "pdfs"), "-o", str(out), "--engine", "textlayer")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 13
    for record in records:
        gt = eval_dir / "pdfs" / f"{Path(record['source']).stem}.p{record['page']:02d}.gt.txt"
        expected = normalize(gt.read_text(encoding="utf-8"), cjk=True)
        assert normalize(record["text"], cjk=True) == expected, record["source"]


def test_a_document_that_pages_selects_nothing_of_is_named_in_a_note(tmp_path):
    """--pages 3-4 on a folder holding a one-page image: the run succeeds and says the image
    had no page selected (its Markdown holds only its heading)."""
    folder = tmp_path / "in"
    folder.mkdir()
    Image.new("RGB", (400, 200), "white").save(folder / "scan.png")
    proc = run_cli("run", str(folder), "-o", str(tmp_path / "o"), "--engine", FAKE_ENGINE, "--pages", "3-4")
    assert proc.returncode == 0, proc.stderr
    assert "scan.png: --pages 3-4 selects none of its 1 page(s)" in proc.stderr
    rerun = run_cli("run", str(folder), "-o", str(tmp_path / "o"), "--engine", FAKE_ENGINE, "--pages", "3-4")
    assert "selects none" in rerun.stderr  # said again when the rerun finds it done

