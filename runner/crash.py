"""Unexpected internal errors: one line on stderr, the traceback in a log file, exit code 70.

Exit 1 means "some pages failed" and scripts rely on it; a bug in pagerunner must not look like
that. The traceback goes to OUT/.pagerunner/logs/ (beside the job store it concerns), or to the
system temp folder when OUT cannot be written.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, TypeVar

from runner.errors import ExitCode

LOG_DIR = Path(".pagerunner") / "logs"
F = TypeVar("F", bound=Callable[..., Any])


def write_crash_log(out_dir: Path | None, exc: BaseException, argv: list[str]) -> Path:
    """Write the traceback and the command line; return where it went."""
    name = f"internal-error-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    text = (f"pagerunner internal error at {time.strftime('%Y-%m-%d %H:%M:%S %z')}\n"
            f"command: {' '.join(argv)}\npython: {sys.version.split()[0]}\n\n"
            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    folders = ([out_dir / LOG_DIR] if out_dir is not None else []) + [Path(tempfile.gettempdir())]
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(text, encoding="utf-8")
            return path
        except OSError:
            continue
    raise OSError("no folder to write the crash log to")


def guard_internal_errors(command: F) -> F:
    """Wrap a CLI command: anything not handled on purpose exits with ExitCode.INTERNAL."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (SystemExit, KeyboardInterrupt, GeneratorExit):
            raise
        except Exception as exc:  # click's Exit/Abort are not Exceptions' business here
            if type(exc).__module__.startswith("click") or type(exc).__module__.startswith("typer"):
                raise
            out = kwargs.get("out")
            try:
                where = f"traceback in {write_crash_log(Path(out) if out else None, exc, sys.argv)}"
            except OSError:
                where = "no log could be written"
            summary = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            print(f"pagerunner: internal error ({summary}); {where}; please report it", file=sys.stderr)
            sys.exit(int(ExitCode.INTERNAL))

    return wrapper  # type: ignore[return-value]
