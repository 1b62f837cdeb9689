#!/usr/bin/env python3
"""faster-paddle over a list of image files, one process, one text file per image: the peer side
of benchmarks/throughput.py (run as its own process so its time and memory can be measured).
Pages go through its multi-image `ocr_batch` (its fastest path for many pages).

    python benchmarks/faster_paddle_batch.py --size tiny --threads 2 [--det-max-side 1280] --out DIR page1.png ...
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    from faster_paddle import OcrEngine

    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=("tiny", "small"), default="tiny")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--det-max-side", type=int, help="cap the detector input's long side (default: its own)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("images", nargs="+", type=Path)
    args = parser.parse_args()
    sizing = {"det_max_side": args.det_max_side} if args.det_max_side else {}
    engine = OcrEngine(model_size=args.size, threads=args.threads, **sizing)
    args.out.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(args.images), args.batch_size):  # a bounded window of encoded pages
        paths = args.images[start:start + args.batch_size]
        results = engine.ocr_batch([p.read_bytes() for p in paths], batch_size=args.batch_size)
        for path, result in zip(paths, results):
            (args.out / f"{path.stem}.txt").write_text(str(result["text"]), encoding="utf-8")


if __name__ == "__main__":
    main()
