#!/usr/bin/env python3
"""The page orientation vote (0 or 180) on a corpus half: each page image as it is and turned 180,
through the engine's detector and `orientation.upside_down`, with the vote on line pieces (the
engine's) and on whole lines squeezed into the classifier (before stop 37). Prints the pages each
gets wrong and a table of wrong decisions. The corpus's pages are upright (landscape pages, which
the engine turns by 90 first, are left out).

    python benchmarks/orientation_check.py --corpus /work/corpus --half tune [--pages 60]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model_cache.engine import EngineOptions  # noqa: E402
from model_cache.ppocr import orientation  # noqa: E402
from model_cache.ppocr.detection import detect  # noqa: E402
from model_cache.ppocr.engine import create_engine, to_rgb  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--half", choices=("tune", "check"), required=True)
    parser.add_argument("--pages", type=int, default=0, help="a seeded sample of this many pages (0: all)")
    args = parser.parse_args()
    records = [json.loads(line) for line in (args.corpus / "pages.jsonl").read_text(encoding="utf-8").splitlines()]
    records = [r for r in records if r["half"] == args.half]
    random.Random(5).shuffle(records)
    records = records[: args.pages or None]
    engine = create_engine(EngineOptions(threads=2))
    votes = {"pieces": engine.params.orient,
             "whole lines": dataclasses.replace(engine.params.orient, piece_aspect=float("inf"))}
    wrong = {name: [0, 0] for name in votes}  # upright turned, turned kept
    images = 0
    for record in records:
        for copy in ("born", "scan"):
            with Image.open(args.corpus / record[copy]) as image:
                rgb = to_rgb(image)
            boxes = detect(engine.det, rgb, engine.params.det)
            if not boxes or orientation.vertical_share(boxes, engine.params.orient) > engine.params.orient.vertical_share:
                continue
            images += 1
            turned = orientation.rotate_image(rgb, 180)
            turned_boxes = orientation.rotate_boxes(boxes, 180, rgb.shape[1], rgb.shape[0])
            for name, params in votes.items():
                flipped = orientation.upside_down(engine.cls, rgb, boxes, params)
                kept = not orientation.upside_down(engine.cls, turned, turned_boxes, params)
                wrong[name][0] += flipped
                wrong[name][1] += kept
                if flipped or kept:
                    print(f"{name}\t{record['id']}\t{copy}\t{'upright turned' if flipped else ''}"
                          f"\t{'turned kept' if kept else ''}", flush=True)
    print(f"\n| vote | upright images turned (of {images}) | turned images kept (of {images}) |")
    print("| --- | ---: | ---: |")
    for name, (flipped, kept) in wrong.items():
        print(f"| {name} | {flipped} | {kept} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
