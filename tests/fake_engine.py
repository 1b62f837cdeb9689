"""A deterministic image engine for runner tests: its text is a digest of the page's pixels.

Used through the plugin form `--engine tests.fake_engine:create_engine`; the delay (env
PAGERUNNER_FAKE_DELAY, seconds) gives SIGKILL tests time to strike mid-run, and the
PAGERUNNER_FAKE_{HANG,CRASH,RAISE}_WIDTH variables make pages of one width hang, crash or raise.
With PAGERUNNER_FAKE_MANY=1 the engine also offers ocr_many (each page then warns how many
pages its call had), for the executors' batching tests.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time

from PIL import Image

from model_cache.engine import EngineOptions
from outputs.model import Block, Line, PageResult


class DigestEngine:
    name = "fake-digest"

    def __init__(self, delay: float, label: str | None = None):
        self.delay = delay
        self.label = label  # --engine-option label=X adds a line "label X" to every page

    def ocr(self, image: Image.Image) -> PageResult:
        time.sleep(self.delay)
        # Fault injection for reliability tests: a page of a chosen width hangs or kills the process.
        if image.width == int(os.environ.get("PAGERUNNER_FAKE_HANG_WIDTH", "-1")):
            time.sleep(3600)
        if image.width == int(os.environ.get("PAGERUNNER_FAKE_CRASH_WIDTH", "-1")):
            os.kill(os.getpid(), signal.SIGSEGV)
        if image.width == int(os.environ.get("PAGERUNNER_FAKE_RAISE_WIDTH", "-1")):
            raise RuntimeError("engine bug on this page")
        digest = hashlib.sha256(image.convert("L").tobytes()).hexdigest()
        w, h = image.size
        lines = [Line(f"digest {digest[:16]}", 0.9, [[0, 0], [w, 0], [w, h // 2], [0, h // 2]]),
                 Line(f"size {w}x{h}", 0.8, [[0, h // 2], [w, h // 2], [w, h], [0, h]])]
        if self.label is not None:
            lines.append(Line(f"label {self.label}", 0.7, [[0, 0], [w, 0], [w, h], [0, h]]))
        return PageResult.from_blocks([Block(lines)], width=w, height=h, engine=self.name)


class BatchDigestEngine(DigestEngine):
    def ocr_many(self, images: list[Image.Image]) -> list[PageResult]:
        results = [self.ocr(image) for image in images]
        for result in results:
            result.warnings.append(f"batch of {len(images)}")
        return results


def create_engine(options: EngineOptions) -> DigestEngine:
    kind = BatchDigestEngine if os.environ.get("PAGERUNNER_FAKE_MANY") == "1" else DigestEngine
    return kind(float(os.environ.get("PAGERUNNER_FAKE_DELAY", "0")), options.get("label"))
