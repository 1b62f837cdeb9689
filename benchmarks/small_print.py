#!/usr/bin/env python3
"""How small a print each shipped model still reads at each detector input size: CER on
synthetic A4 pages at 200 dpi filled with DejaVu Serif text of a given point size (the page of
tests/test_ppocr_engine.py::test_small_print_survives, at several sizes).

    python benchmarks/small_print.py [--models ppocr-v5-mobile,ppocr-v6-tiny]
                                     [--limits 960,1024,1280,1600] [--points 5,6,7,8]
                                     [--extra det_thresh=0.2 ...]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from model_cache.engine import EngineOptions  # noqa: E402
from model_cache.ppocr.engine import PPOCREngine  # noqa: E402
from runner.evaluation.metrics import cer  # noqa: E402

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
WORDS = "the quick brown fox jumps over lazy dog invoice total amount date payment account".split()


def small_print_page(points: float, dpi: float = 200, seed: int = 1) -> tuple[Image.Image, str]:
    font = ImageFont.truetype(FONT, round(points / 72 * dpi))
    rng = random.Random(seed)
    width, height = round(8.27 * dpi), round(11.69 * dpi)
    page = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(page)
    lines = []
    step = round(points / 72 * dpi * 1.45)
    for y in range(150, height - 150, step):
        line = " ".join(rng.choice(WORDS) for _ in range(14))
        while font.getlength(line) > width - 300:
            line = line.rsplit(" ", 1)[0]
        draw.text((150, y), line, font=font, fill="black")
        lines.append(line)
    return page, "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="ppocr-v5-mobile,ppocr-v6-tiny")
    parser.add_argument("--limits", default="960,1024,1280,1600")
    parser.add_argument("--points", default="5,6,7,8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--extra", action="append", default=[], help="engine option key=value")
    args = parser.parse_args()
    pages = {float(p): small_print_page(float(p)) for p in args.points.split(",")}
    extra = tuple(tuple(kv.split("=", 1)) for kv in args.extra)
    print("| model | det_limit_side | " + " | ".join(f"CER {p:g} pt" for p in pages) + " | s/page |")
    print("|---|---|" + "---|" * (len(pages) + 1))
    for model in args.models.split(","):
        for limit in args.limits.split(","):
            options = EngineOptions(threads=args.threads, model=model,
                                    extra=(("det_limit_side", limit), *extra))
            engine = PPOCREngine(options)
            cers, start = [], time.perf_counter()
            for image, truth in pages.values():
                cers.append(cer(truth, engine.ocr(image).text))
            seconds = (time.perf_counter() - start) / len(pages)
            print(f"| {model} | {limit} | " + " | ".join(f"{c:.4f}" for c in cers) + f" | {seconds:.1f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
