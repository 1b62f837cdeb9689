#!/usr/bin/env python3
"""How far off the page skew is on the layout corpus's simulated scans (benchmarks/corpus.py).

    PAGERUNNER_LAYOUT_LINES=/work/corpus/lines python benchmarks/skew_accuracy.py --half tune
    python benchmarks/skew_accuracy.py --corpus /tmp/s36 --half check --verbose

The truth is the simulated scan's own angle (benchmarks/eval_sets.simulate_scan, drawn from the
page's seed); born copies are level. For each page the ppocr engine's lines (replayed from
PAGERUNNER_LAYOUT_LINES where recorded) give three angles: the ink's (model_cache/ppocr/skew.
ink_skew), the boxes' (layout.geometry.page_skew) and the one the stage is handed (text_skew,
the boxes' where it says None). Prints the error's median, p90 and max in degrees, and how many
pages are off by more than 0.3 degrees (a tight index's gutter drifts ~6 px down a page at that).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def simulated_angle(manifest: dict, page_id: str) -> float:
    """The skew the simulated scan was given, in the stage's convention (radians of the
    baselines' slope, y down): simulate_scan turns the page counterclockwise by its angle."""
    from eval_sets import _page_seed, scan_settings

    settings = scan_settings(np.random.default_rng(_page_seed(manifest["scan_seed"], page_id)))
    return -math.radians(settings.angle)


class SkewProbe:
    """Wraps the engine's text_skew to keep the three angles of the page just read."""

    def __init__(self) -> None:
        import model_cache.ppocr.engine as engine_module
        import model_cache.ppocr.skew as skew

        self.seen: dict[str, float | None] = {}
        self._skew = skew
        self._wrapped = skew.text_skew
        engine_module.text_skew = self

    def __call__(self, rgb, lines, params=None):
        params = params or self._skew.SkewParams()
        chosen = self._wrapped(rgb, lines, params)
        boxes = self._skew.page_skew(lines)
        self.seen = {"ink": self._skew.ink_skew(rgb, lines, params), "boxes": boxes,
                     "stage": boxes if chosen is None else chosen}
        return chosen


def summary(errors: list[float]) -> str:
    e = np.degrees(np.asarray(errors))
    return (f"{np.median(e):.3f} / {np.percentile(e, 90):.3f} / {e.max():.3f} / "
            f"{int((e > 0.3).sum())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--manifest", type=Path, help="the corpus's manifest (default: <corpus>/manifest.json "
                                                      "if there, else benchmarks/corpus_manifest.json)")
    parser.add_argument("--half", choices=("tune", "check"), required=True)
    parser.add_argument("--copy", choices=("born", "scan"), default="scan")
    parser.add_argument("--verbose", action="store_true", help="print every page's angles")
    args = parser.parse_args()
    from PIL import Image

    from model_cache.engine import EngineOptions
    from model_cache.ppocr.engine import create_engine

    manifest_path = args.manifest or next(p for p in (args.corpus / "manifest.json",
                                                      REPO / "benchmarks" / "corpus_manifest.json") if p.is_file())
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    probe = SkewProbe()
    engine = create_engine(EngineOptions(threads=1))
    errors: dict[str, list[float]] = {"ink": [], "boxes": [], "stage": []}
    for line in (args.corpus / "pages.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["half"] != args.half:
            continue
        truth = simulated_angle(manifest, record["id"]) if args.copy == "scan" else 0.0
        probe.seen = {}
        with Image.open(args.corpus / record[args.copy]) as image:
            engine.ocr(image)
        for name, angle in probe.seen.items():
            if angle is not None:
                errors[name].append(abs(angle - truth))
        if args.verbose:
            shown = {k: None if v is None else round(math.degrees(v), 3) for k, v in probe.seen.items()}
            print(f"{record['id']}\ttruth {math.degrees(truth):.3f}\t{shown}", file=sys.stderr)
    print(f"{args.half} {args.copy}: skew error, degrees (median / p90 / max / pages over 0.3)\n")
    print("| angle | pages | error |")
    print("| --- | ---: | --- |")
    for name, found in errors.items():
        print(f"| {name} | {len(found)} | {summary(found) if found else '-'} |")


if __name__ == "__main__":
    main()
