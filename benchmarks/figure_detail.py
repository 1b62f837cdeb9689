"""What detecting figures again at full size costs (model_cache/ppocr/figure_detail.py).

    python benchmarks/figure_detail.py --corpus /work/corpus --half tune --copy born --pages 6

For each page of the half: does the detector read it shrunk and does its ink hold a figure
region (the pages the second pass runs on)? Then, for the first --pages pages of each kind, the
engine's detection time and whole-page time with the second pass on and off (one ncnn thread,
alternating, median of --repeats), and the lines each finds. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image  # noqa: E402

from model_cache.engine import EngineOptions  # noqa: E402
from model_cache.ppocr import figure_detail  # noqa: E402
from model_cache.ppocr.engine import create_engine, to_rgb  # noqa: E402
from model_cache.ppocr.detection import detect  # noqa: E402


def has_regions(engine, rgb) -> bool:
    boxes = detect(engine.det, rgb, engine.params.det)
    return bool(figure_detail.regions_to_redetect(rgb, boxes, engine.params.det))


def timed(engine, image: Image.Image) -> tuple[float, float, int]:
    start = time.perf_counter()
    result = engine.ocr(image)
    wall = time.perf_counter() - start
    return result.timings["detect"], wall, sum(len(b.lines) for b in result.blocks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--half", choices=("tune", "check"), default="tune")
    parser.add_argument("--copy", choices=("born", "scan"), default="born")
    parser.add_argument("--pages", type=int, default=6, help="pages of each kind to time")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    records = [json.loads(line) for line in (args.corpus / "pages.jsonl").read_text().splitlines()]
    records = [r for r in records if r["half"] == args.half]
    on = create_engine(EngineOptions(threads=1))
    off = create_engine(EngineOptions(threads=1, extra=(("det_figure_detail", "off"),)))
    kinds: dict[bool, list[dict]] = {True: [], False: []}
    for record in records:
        with Image.open(args.corpus / record[args.copy]) as image:
            kinds[has_regions(off, to_rgb(image))].append(record)
    print(f"{args.half} {args.copy}: {len(records)} pages, {len(kinds[True])} with a figure detected again "
          f"({100 * len(kinds[True]) / max(1, len(records)):.1f} %)\n")
    print("| page | figure | detect s, off | detect s, on | page s, off | page s, on | lines off / on |")
    print("| --- | :---: | ---: | ---: | ---: | ---: | --- |")
    extra = {True: [], False: []}
    for kind in (True, False):
        for record in kinds[kind][:args.pages]:
            with Image.open(args.corpus / record[args.copy]) as image:
                image.load()
                runs = {"off": [], "on": []}
                for _ in range(args.repeats):
                    for name, engine in (("off", off), ("on", on)):
                        runs[name].append(timed(engine, image))
            med = {name: [statistics.median(run[i] for run in runs[name]) for i in range(2)] for name in runs}
            extra[kind].append(med["on"][1] - med["off"][1])
            print(f"| {record['id']} | {'yes' if kind else 'no'} | {med['off'][0]:.3f} | {med['on'][0]:.3f} | "
                  f"{med['off'][1]:.3f} | {med['on'][1]:.3f} | {runs['off'][0][2]} / {runs['on'][0][2]} |")
    for kind in (True, False):
        if extra[kind]:
            print(f"\nmedian extra s a page, {'with' if kind else 'without'} a figure: "
                  f"{statistics.median(extra[kind]):+.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
