"""Where the shared evaluation kit lives for the eval tests (../shared beside the repo in CI,
or $PAGERUNNER_SHARED); tests that need it skip cleanly when it is absent."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest


def shared_dir() -> Path | None:
    env = os.environ.get("PAGERUNNER_SHARED")
    candidate = Path(env) if env else Path(__file__).resolve().parents[2] / "shared"
    return candidate if (candidate / "eval").is_dir() else None


def eval_kit() -> Path:
    root = shared_dir()
    if root is None:
        pytest.skip("the shared evaluation kit (../shared/eval or $PAGERUNNER_SHARED) is absent")
    return root / "eval"


def reference_normalizer() -> ModuleType:
    """The kit's own gt_normalize.py, loaded from its file (never imported by the product)."""
    path = eval_kit() / "tools" / "gt_normalize.py"
    spec = importlib.util.spec_from_file_location("kit_gt_normalize", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
