"""Identical bytes under several names: OCR'd once, every name gets its own records and files."""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from jobs.store import SCHEMA_VERSION, JobStore, StoreError
from tests.conftest import FAKE_ENGINE, make_pdf, run_cli


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def run(inputs: Path, out: Path, *extra: str, code: int = 0):
    proc = run_cli("run", str(inputs), "-o", str(out), "--engine", FAKE_ENGINE, *extra)
    assert proc.returncode == code, proc.stderr
    return proc


def pages_in_store(out: Path) -> int:
    db = sqlite3.connect(out / ".pagerunner" / "store.sqlite")
    try:
        return db.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
    finally:
        db.close()


@pytest.fixture
def copies(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    make_pdf(root / "scan.pdf", 2, "scan")
    shutil.copyfile(root / "scan.pdf", root / "scan (1).pdf")
    make_pdf(root / "a" / "report.pdf", 3, "report")
    shutil.copyfile(root / "a" / "report.pdf", root / "b" / "report.pdf")
    make_pdf(root / "single.pdf", 1, "single")
    return root


def test_every_name_gets_its_records_and_files_and_the_work_is_done_once(copies, tmp_path):
    out = tmp_path / "out"
    proc = run(copies, out)
    got = records(out)
    assert [(r["source"], r["page"]) for r in got] == [
        ("a/report.pdf", 1), ("a/report.pdf", 2), ("a/report.pdf", 3),
        ("b/report.pdf", 1), ("b/report.pdf", 2), ("b/report.pdf", 3),
        ("scan.pdf", 1), ("scan.pdf", 2), ("scan (1).pdf", 1), ("scan (1).pdf", 2), ("single.pdf", 1)]
    by_name = {(r["source"], r["page"]): r for r in got}
    assert by_name[("scan.pdf", 1)]["text"] == by_name[("scan (1).pdf", 1)]["text"]
    assert by_name[("scan.pdf", 1)]["doc_id"] == by_name[("scan (1).pdf", 1)]["doc_id"]
    for stem in ("scan", "scan (1)", "a/report", "b/report", "single"):
        assert (out / f"{stem}.md").is_file() and (out / f"{stem}.txt").is_file(), stem
    assert (out / "scan (1).md").read_text().startswith("# scan (1).pdf\n")
    assert pages_in_store(out) == 6  # 2 + 3 + 1 pages of work for 11 pages of records
    assert "6 processed" in proc.stderr
    assert "4 of 5 inputs are identical to another input" in proc.stderr
    status = json.loads(run_cli("status", str(out), "--json").stdout)
    assert (status["inputs"], status["shared_inputs"]) == (5, 4)
    assert "4 are identical to another" in run_cli("status", str(out)).stderr


def test_rerun_and_export_give_the_same_files(copies, tmp_path):
    out = tmp_path / "out"
    run(copies, out)
    first = records(out)
    again = run(copies, out)
    assert "0 processed" in again.stderr and records(out) == first
    (out / "b" / "report.md").unlink()
    (out / "results.jsonl").unlink()
    assert run_cli("export", str(out)).returncode == 0
    assert records(out) == first and (out / "b" / "report.md").is_file()


def test_jsonl_stdout_has_a_line_per_name(copies, tmp_path):
    proc = run_cli("run", str(copies), "-o", str(tmp_path / "out"), "--engine", FAKE_ENGINE, "-q",
                   "--jsonl", "-")
    assert proc.returncode == 0
    sources = sorted(json.loads(line)["source"] for line in proc.stdout.splitlines())
    assert sources.count("scan (1).pdf") == 2 and sources.count("b/report.pdf") == 3 and len(sources) == 11


def test_a_moved_copy_keeps_the_shared_work_and_loses_its_old_name(copies, tmp_path):
    out = tmp_path / "out"
    run(copies, out)
    shutil.move(copies / "b" / "report.pdf", copies / "b" / "report-moved.pdf")
    proc = run(copies, out)
    assert "0 processed" in proc.stderr
    sources = {r["source"] for r in records(out)}
    assert "b/report-moved.pdf" in sources and "b/report.pdf" not in sources and "a/report.pdf" in sources


def test_a_moved_original_is_not_ocrd_again(copies, tmp_path):
    out = tmp_path / "out"
    run(copies, out)
    shutil.move(copies / "single.pdf", copies / "a" / "single-moved.pdf")
    proc = run(copies, out)
    assert "0 processed" in proc.stderr
    sources = {r["source"] for r in records(out)}
    assert "a/single-moved.pdf" in sources and "single.pdf" not in sources


def test_when_one_copy_changes_the_other_keeps_its_results(copies, tmp_path):
    out = tmp_path / "out"
    run(copies, out)
    before = {(r["source"], r["page"]): r["text"] for r in records(out)}
    make_pdf(copies / "scan.pdf", 1, "changed")  # scan.pdf gets other bytes; scan (1).pdf keeps the old
    proc = run(copies, out)
    assert "1 processed" in proc.stderr  # only the changed file's one page
    after = {(r["source"], r["page"]): r["text"] for r in records(out)}
    assert after[("scan (1).pdf", 1)] == before[("scan (1).pdf", 1)]
    assert after[("scan (1).pdf", 2)] == before[("scan (1).pdf", 2)]
    assert ("scan.pdf", 2) not in after and after[("scan.pdf", 1)] != before[("scan.pdf", 1)]
    assert "identical to another input" in proc.stderr and "2 of 5" in proc.stderr  # the report pair only


def test_a_failed_document_fails_under_every_name(tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really")
    shutil.copyfile(root / "broken.pdf", root / "broken copy.pdf")
    out = tmp_path / "out"
    proc = run(root, out, code=1)
    assert [(r["source"], r["error"]["code"]) for r in records(out)] == [
        ("broken.pdf", "corrupt_pdf"), ("broken copy.pdf", "corrupt_pdf")]
    assert "broken copy.pdf: corrupt_pdf" in proc.stderr and "broken.pdf: corrupt_pdf" in proc.stderr


def _downgrade_to_version_1(out: Path) -> None:
    """What a store written before aliases existed looks like."""
    db = sqlite3.connect(out / ".pagerunner" / "store.sqlite")
    db.execute("DROP TABLE aliases")
    db.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    db.commit()
    db.close()


def test_an_old_store_is_upgraded_and_its_missing_copies_filled_in(copies, tmp_path):
    out = tmp_path / "out"
    single = tmp_path / "single-in"
    single.mkdir()
    shutil.copyfile(copies / "scan.pdf", single / "scan.pdf")
    run(single, out)
    _downgrade_to_version_1(out)
    shutil.copyfile(copies / "scan.pdf", single / "scan (1).pdf")  # the copy the old version dropped
    proc = run(single, out)
    assert "0 processed" in proc.stderr
    assert [r["source"] for r in records(out)] == ["scan.pdf", "scan.pdf", "scan (1).pdf", "scan (1).pdf"]
    store = JobStore(out, create=False)
    version = store.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    store.close()
    assert int(version) == SCHEMA_VERSION == 2


def test_a_store_from_a_newer_version_is_refused_clearly(copies, tmp_path):
    out = tmp_path / "out"
    run(copies / "a", out)
    db = sqlite3.connect(out / ".pagerunner" / "store.sqlite")
    db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer pagerunner"):
        JobStore(out)
    proc = run(copies / "a", out, code=4)
    assert "newer pagerunner" in proc.stderr and "Traceback" not in proc.stderr
    status = run_cli("status", str(out))
    assert status.returncode == 2 and "newer pagerunner" in status.stderr
