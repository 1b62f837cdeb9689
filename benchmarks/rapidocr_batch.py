#!/usr/bin/env python3
"""RapidOCR over a list of image files, one process, one text file per image: the peer side of
benchmarks/throughput.py (run as its own process so its time and memory can be measured).

    python benchmarks/rapidocr_batch.py --models v4 --threads 2 --out DIR page1.png page2.png ...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from PIL import Image  # noqa: E402

from peers import RapidOCRTool, bundled_v4, ppocr_v5_models  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", choices=("v4", "v5"), required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("images", nargs="+", type=Path)
    args = parser.parse_args()
    tool = RapidOCRTool(bundled_v4() if args.models == "v4" else ppocr_v5_models(), args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    for path in args.images:
        with Image.open(path) as image:
            text = tool.ocr(image.convert("RGB"), "page", False, None)
        (args.out / f"{path.stem}.txt").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
