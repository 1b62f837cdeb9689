"""An unexpected internal error exits 70 with one line on stderr and the traceback in OUT/.pagerunner/logs/."""

import os
import subprocess
import sys
from pathlib import Path

from runner.errors import ExitCode
from tests.conftest import FAKE_ENGINE, REPO

# Runs the real CLI in a subprocess with one driver function replaced by a bug.
_BUGGY_CLI = """
import sys, runner.job
def _bug(store, summary):
    raise ZeroDivisionError("injected bug in the driver")
runner.job._fill_summary = _bug
from runner.cli import main
sys.argv = ["pagerunner", *sys.argv[1:]]
main()
"""


def _run_buggy(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", _BUGGY_CLI, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def test_internal_error_exits_70_with_a_one_line_message_and_a_log(corpus, tmp_path):
    out = tmp_path / "out"
    proc = _run_buggy("run", str(corpus / "gamma.png"), "-o", str(out), "--engine", FAKE_ENGINE, "-q")
    assert proc.returncode == ExitCode.INTERNAL == 70
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "internal error (ZeroDivisionError: injected bug in the driver)" in lines[0]
    assert "Traceback" not in proc.stderr
    logs = list((out / ".pagerunner" / "logs").glob("internal-error-*.log"))
    assert len(logs) == 1 and str(logs[0]) in lines[0]
    text = logs[0].read_text()
    assert "Traceback (most recent call last)" in text and "_bug" in text and "ZeroDivisionError" in text
    # The page work was committed before the bug: a normal rerun finishes cleanly.
    from tests.conftest import run_cli
    again = run_cli("run", str(corpus / "gamma.png"), "-o", str(out), "--engine", FAKE_ENGINE, "-q")
    assert again.returncode == 0, again.stderr


def test_failed_pages_still_exit_1_and_usage_errors_2(corpus, tmp_path):
    from tests.conftest import run_cli
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really")
    proc = run_cli("run", str(corpus), "-o", str(tmp_path / "o"), "--engine", FAKE_ENGINE, "-q")
    assert proc.returncode == 1
    assert run_cli("run", str(corpus), "-o", str(tmp_path / "o"), "--dpi", "5").returncode == 2


def test_crash_log_falls_back_to_the_temp_folder(tmp_path, monkeypatch):
    from runner import crash
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    monkeypatch.setattr(crash.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    try:
        raise ValueError("boom")
    except ValueError as exc:
        path = crash.write_crash_log(blocked, exc, ["pagerunner", "run"])
    assert path.parent == tmp_path / "tmp" and "ValueError: boom" in path.read_text()
