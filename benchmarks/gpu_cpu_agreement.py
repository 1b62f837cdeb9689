#!/usr/bin/env python3
"""Where a GPU run's lines part from the CPU's: each net compared on the same input, page by page.

For every page: the detector's probability maps (largest difference, pixels on the other side of
the binarisation threshold), the boxes found (how many are the same to a pixel), the recogniser on
the CPU's crops (GPU strips against the CPU's one crop at a time: lines identical), and the whole
engine (lines identical). A difference in the last column but not the third comes from detection.

    python benchmarks/gpu_cpu_agreement.py --model ppocr-v6-tiny [--pdf PDF] [--pages 1-5] [-E KEY=VALUE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.ppocr_pages import render_pdf_page  # noqa: E402
from jobs.pageranges import PageRanges  # noqa: E402
from model_cache.engine import EngineOptions  # noqa: E402
from model_cache.ppocr.detection import TextBox, detect, probability_map  # noqa: E402
from model_cache.ppocr.engine import PPOCREngine, to_rgb  # noqa: E402
from model_cache.ppocr.crops import rectify  # noqa: E402

KIT_PDF = REPO.parent / "shared" / "eval" / "pdfs" / "maint-guide.en.p5-9.pdf"


def same_boxes(a: list[TextBox], b: list[TextBox]) -> int:
    """Boxes of `a` with a box of `b` whose corners are all within a pixel."""
    return sum(any(np.abs(x.quad - y.quad).max() <= 1.0 for y in b) for x in a)


def same_lines(a: list[str], b: list[str]) -> int:
    return sum(x == y for x, y in zip(a, b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None)
    parser.add_argument("--pdf", type=Path, default=KIT_PDF)
    parser.add_argument("--pages", default="1-5", help="pages of --pdf, as `pagerunner run --pages` (1-3,5)")
    parser.add_argument("-E", dest="extra", action="append", default=[], metavar="KEY=VALUE",
                        help="an engine option for both engines (repeatable), as `pagerunner run -E`")
    args = parser.parse_args()
    extra = tuple(tuple(kv.split("=", 1)) for kv in args.extra)
    cpu = PPOCREngine(EngineOptions(threads=2, device="cpu", model=args.model, extra=extra))
    gpu = PPOCREngine(EngineOptions(threads=2, device="gpu", model=args.model, extra=extra))
    print(f"model {cpu.name}; GPU recogniser: {'strips' if gpu.batch else 'one crop at a time'}\n")
    print("| page | map max diff | map pixels across threshold | boxes same / CPU / GPU |"
          " rec on CPU crops: lines same | engine: lines same / CPU |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    totals = np.zeros(4, int)
    for number in PageRanges.parse(args.pages).select(len(pdfium.PdfDocument(str(args.pdf)))):
        image = render_pdf_page(args.pdf, number - 1)
        rgb = to_rgb(image)
        maps = [probability_map(e.det, rgb, e.params.det) for e in (cpu, gpu)]
        threshold = cpu.params.det.thresh
        across = int(np.count_nonzero((maps[0] > threshold) != (maps[1] > threshold)))
        boxes = [detect(e.det, rgb, e.params.det) for e in (cpu, gpu)]
        crops = [rectify(rgb, box.quad, cpu.params.rec) for box in boxes[0]]
        texts = [[r.text for r in e._rec_many(crops)] for e in (cpu, gpu)]
        lines = [e.ocr(image).text.splitlines() for e in (cpu, gpu)]
        row = (same_lines(*texts), len(crops), same_lines(*lines), len(lines[0]))
        totals += row
        print(f"| {number} | {float(np.abs(maps[0] - maps[1]).max()):.2e} | {across} | "
              f"{same_boxes(*boxes)} / {len(boxes[0])} / {len(boxes[1])} | {row[0]}/{row[1]} | "
              f"{row[2]}/{row[3]} |", flush=True)
        for want, got in zip(*texts):
            if want != got:
                print(f"  rec: {want!r} -> {got!r}")
    print(f"\nall: recogniser {totals[0]}/{totals[1]} lines the CPU's on the same crops, "
          f"engine {totals[2]}/{totals[3]}")


if __name__ == "__main__":
    main()
