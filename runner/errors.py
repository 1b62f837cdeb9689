"""Exit codes, and the errors that end a run, each carrying its exit code (documented in the README)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # every page done
    PAGES_FAILED = 1  # some pages or documents failed, the others are done
    USAGE = 2  # bad command line or input arguments
    BUSY = 3  # another run holds the output folder
    ENVIRONMENT = 4  # the run could not go on: output not writable, disk full, model files refused
    INTERNAL = 70  # a bug: unexpected internal error (EX_SOFTWARE); traceback in OUT/.pagerunner/logs/
    INTERRUPTED = 130  # SIGINT (Ctrl-C): stopped cleanly, rerun to resume
    BROKEN_PIPE = 141  # stdout reader went away (e.g. `| head`)
    TERMINATED = 143  # SIGTERM: stopped cleanly, rerun to resume


class RunnerError(Exception):
    exit_code: ExitCode = ExitCode.ENVIRONMENT


class UsageError(RunnerError):
    exit_code = ExitCode.USAGE


class OutputBusyError(RunnerError):
    exit_code = ExitCode.BUSY


class EnvironmentFailure(RunnerError):
    """Disk full, read-only or vanished output folder, store write failure."""
    exit_code = ExitCode.ENVIRONMENT


class EngineUnavailable(RunnerError):
    """The engine cannot be created (unknown, missing dependency, model files failed verification)."""
    exit_code = ExitCode.ENVIRONMENT
