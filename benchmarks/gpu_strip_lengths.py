#!/usr/bin/env python3
"""What the GPU alone does with the strip recogniser: ms per strip and per page for strips of
1024 .. 8192 time steps, with 2 and 4 threads submitting at once (a device owner runs 2 streams),
on a light and a dense page of the kit; and the detector's probability map per page. No feeders,
no IPC: a ceiling for the owner path (`benchmarks/gpu_throughput.py` measures the whole run).

    python benchmarks/gpu_strip_lengths.py [--model ppocr-v5-mobile] [--steps 1024,2048,4096,8192] \
        [-E conv=gemm ...]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.ppocr_pages import render_pdf_page  # noqa: E402
from model_cache.engine import EngineOptions  # noqa: E402
from model_cache.ppocr.batch_rec import prepare  # noqa: E402
from model_cache.ppocr.detection import detect, probability_map  # noqa: E402
from model_cache.ppocr.engine import PPOCREngine, to_rgb  # noqa: E402
from model_cache.ppocr.crops import rectify  # noqa: E402

KIT_PDF = REPO.parent / "shared" / "eval" / "pdfs" / "maint-guide.en.p5-9.pdf"


def timed(threads: int, reps: int, work) -> float:
    """Wall seconds for `threads` threads each calling work() `reps` times."""
    def loop() -> None:
        for _ in range(reps):
            work()
    pool = [threading.Thread(target=loop) for _ in range(threads)]
    start = time.perf_counter()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None)
    parser.add_argument("--pdf", type=Path, default=KIT_PDF)
    parser.add_argument("--pages", default="1,3", help="1-based pages of --pdf")
    parser.add_argument("--steps", default="1024,2048,4096,8192")
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("-E", dest="extra", action="append", default=[], metavar="KEY=VALUE",
                        help="an engine option (repeatable), as `pagerunner run -E`")
    args = parser.parse_args()
    extra = (("rec_batch", "on"), *(tuple(kv.split("=", 1)) for kv in args.extra))
    start = time.perf_counter()
    engine = PPOCREngine(EngineOptions(threads=2, device="gpu", model=args.model, extra=extra))
    print(f"engine {engine.name} loaded in {time.perf_counter() - start:.2f} s")
    pages = {}
    for number in map(int, args.pages.split(",")):
        rgb = to_rgb(render_pdf_page(args.pdf, number - 1))
        boxes = detect(engine.det, rgb, engine.params.det)
        pages[number] = [prepare(rectify(rgb, b.quad, engine.params.rec), engine.params.rec) for b in boxes]
        print(f"page {number}: {len(boxes)} crops, {sum(p.shape[2] for p in pages[number])} px of crop width")
        for threads in (1, 2):
            wall = timed(threads, args.reps, lambda: probability_map(engine.det, rgb, engine.params.det))
            print(f"  detector, {threads} threads: {wall / (threads * args.reps) * 1000:.1f} ms/page")
    print("\n| strip steps | page | strips | threads | ms per page | ms per strip |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    base = engine.batch.params
    for steps in map(int, args.steps.split(",")):
        engine.batch.params = replace(base, max_steps=steps)
        for number, prepared in pages.items():
            def one_page() -> int:
                return sum(1 for _ in engine.batch.iter_prepared(prepared))
            strips = one_page()  # also the first call of this strip shape
            for threads in (2, 4):
                wall = timed(threads, args.reps, one_page)
                per_page = wall / (threads * args.reps)
                print(f"| {steps} | {number} | {strips} | {threads} | {per_page * 1000:.1f} | "
                      f"{per_page / strips * 1000:.1f} |", flush=True)


if __name__ == "__main__":
    main()
