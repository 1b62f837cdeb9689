"""Shared bits of the ppocr tests: one engine per test session, kit-normalised CER."""

import sys
from pathlib import Path

import pytest

from model_cache.engine import EngineOptions


@pytest.fixture(scope="session")
def ppocr_engine():
    from model_cache.ppocr.engine import create_engine
    return create_engine(EngineOptions(threads=2))


def kit_cer(gt_path: Path, text: str, cjk: bool = False) -> float:
    tools = gt_path.parents[1] / "tools"
    if str(tools) not in sys.path:
        sys.path.insert(0, str(tools))
    from gt_normalize import normalize
    from runner.evaluation.metrics import cer
    ref = normalize(gt_path.read_text(encoding="utf-8"), cjk=cjk)
    return cer(ref, normalize(text, cjk=cjk))
