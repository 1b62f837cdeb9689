#!/usr/bin/env python3
"""The most pages a minute ppocr could reach on a CPU if everything but its nets were free, against
faster-paddle's whole pipeline on the same pages, warm, in one run.

For each model: the kit's dense maint-guide pages at 200 dpi through the engine on one thread (one
warm-up page first), with the time inside ncnn (every net call) and the numpy class head summed
apart from the rest. The bound is `--processes` workers each spending only that net time on a
page: 60 x processes / net seconds. faster-paddle reads the same images warm (a warm-up batch first)
in one process on `--processes` threads through `ocr_batch`, its fastest path. If the bound is
below faster-paddle's measured rate, no work outside the nets can close the gap.

    python benchmarks/net_bound.py [--model ppocr-v6-tiny] [--pages 5] [--processes 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.ppocr_pages import render_pdf_page  # noqa: E402

KIT_PDF = REPO.parent / "shared" / "eval" / "pdfs" / "maint-guide.en.p5-9.pdf"


class NetClock:
    """Seconds spent inside ncnn net calls and the numpy class head, while installed."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def install(self) -> None:
        from model_cache.ppocr import class_head, runtime

        for owner, name in ((runtime.NcnnNet, "run_inputs"), (class_head.ClassHead, "__call__")):
            setattr(owner, name, self._timed(getattr(owner, name)))

    def _timed(self, method):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return timed


def ppocr_seconds(model: str, pages: list, repeats: int) -> tuple[float, float]:
    """Median over repeats of (net seconds, whole seconds) per page, one thread."""
    from model_cache.engine import EngineOptions
    from model_cache.ppocr.engine import create_engine

    clock = NetClock()
    clock.install()
    engine = create_engine(EngineOptions(threads=1, model=model))
    engine.ocr(pages[0])
    nets, whole = [], []
    for _ in range(repeats):
        clock.seconds, start = 0.0, time.perf_counter()
        for page in pages:
            engine.ocr(page)
        whole.append((time.perf_counter() - start) / len(pages))
        nets.append(clock.seconds / len(pages))
    return statistics.median(nets), statistics.median(whole)


def faster_paddle_seconds(pages: list, threads: int, repeats: int) -> float:
    """Median over repeats of faster-paddle tiny's seconds a page, warm, one process."""
    from faster_paddle import OcrEngine

    engine = OcrEngine(model_size="tiny", threads=threads)
    encoded = []
    for page in pages:
        buffer = io.BytesIO()
        page.save(buffer, format="PNG")
        encoded.append(buffer.getvalue())
    engine.ocr_batch(encoded[:1], batch_size=1)
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        engine.ocr_batch(encoded, batch_size=len(encoded))
        runs.append((time.perf_counter() - start) / len(pages))
    return statistics.median(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append")
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pdf", type=Path, default=KIT_PDF)
    args = parser.parse_args()
    pages = [render_pdf_page(args.pdf, n % 5) for n in range(args.pages)]
    n = args.processes
    print(f"| tool | s a page, 1 thread: whole / nets alone | pages/min with {n} processes: measured-equivalent"
          f" / nets-alone bound |")
    print("| --- | --- | --- |")
    for model in args.model or ["ppocr-v6-tiny"]:
        nets, whole = ppocr_seconds(model, pages, args.repeats)
        print(f"| pagerunner {model} (engine, no rendering or writing) | {whole:.3f} / {nets:.3f} | "
              f"{60 * n / whole:.1f} / **{60 * n / nets:.1f}** |", flush=True)
    peer = faster_paddle_seconds(pages, n, args.repeats)
    print(f"| faster-paddle tiny, 1 process x {n} threads, warm | {peer:.3f} (wall, {n} threads) | "
          f"**{60 / peer:.1f}** / |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
