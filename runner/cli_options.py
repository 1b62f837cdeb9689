"""Option parsing shared by `run`, `retry` and `eval`."""

from __future__ import annotations

from pathlib import Path

from model_cache.ppocr.assets import BUNDLED_MODELS, DEFAULT_MODEL
from runner.errors import UsageError

MODEL_HELP = (f"ppocr model: {' | '.join(BUNDLED_MODELS)} (default {DEFAULT_MODEL}); "
              "`pagerunner models list` shows their speed and accuracy.")


def read_passwords(password: str | None, passwords_file: Path | None) -> tuple[str, ...]:
    """--password first, then --passwords-file's lines (one per line), in the order to try them."""
    found = [password] if password else []
    if passwords_file is not None:
        try:
            lines = passwords_file.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise UsageError(f"cannot read --passwords-file: {exc.strerror or exc}") from None
        found.extend(line.rstrip("\r") for line in lines if line.strip())
    return tuple(found)


def engine_extra(max_new_tokens: int | None, low_memory: bool,
                 options: list[str] | None = None, batch_pages: int | None = None) -> tuple[tuple[str, str], ...]:
    """The engine's extra settings: --engine-option KEY=VALUE pairs, then the dedicated flags."""
    extra: list[tuple[str, str]] = []
    for option in options or []:
        key, sep, value = option.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--engine-option expects KEY=VALUE, got {option!r}")
        extra.append((key.strip(), value.strip()))
    if max_new_tokens is not None:
        extra.append(("max_new_tokens", str(max_new_tokens)))
    if low_memory:
        extra.append(("low_memory", "1"))
    if batch_pages is not None:
        extra.append(("batch_pages", str(batch_pages)))
    return tuple(extra)
