#!/usr/bin/env python3
"""The regions DB's box score drops, and whether they hold text: for each page of a corpus half,
every region of the detector's probability map whose rectangle score is in [--low, det_box_thresh)
is listed with its contour score ("slow" score), and marked "text" when the centre of a text-layer
segment (benchmarks/layout_replay.segment_lines) that no kept box covers lies inside it. Ends with
a table: for contour-score thresholds, how many such regions hold text and how many do not (what
`det_fill_thresh` would add).

    python benchmarks/detector_drops.py --corpus /work/corpus --half tune [--copy born] [--low 0.4]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_replay import segment_lines  # noqa: E402
from model_cache.engine import EngineOptions  # noqa: E402
from model_cache.ppocr import detection as det  # noqa: E402
from model_cache.ppocr.engine import create_engine, to_rgb  # noqa: E402

THRESHOLDS = (0.8, 0.85, 0.9, 0.95)


def dropped_regions(engine, rgb: np.ndarray, low: float) -> tuple[list[tuple[float, float, np.ndarray]], np.ndarray]:
    """(rectangle score, contour score, unclipped quad in page pixels) of each region under the box
    threshold but at least `low`, and the mask of the boxes the detector keeps without the fill rule."""
    params = dataclasses.replace(engine.params.det, fill_thresh=float("inf"))
    h, w = rgb.shape[:2]
    pad = det.detection_margin(w, h)
    padded = cv2.copyMakeBorder(rgb, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=det.paper_colour(rgb))
    tw, th = det.input_size(w + 2 * pad, h + 2 * pad, params)
    prob = det.probability_map(engine.det, padded, params)
    scale = np.array([(w + 2 * pad) / tw, (h + 2 * pad) / th], dtype=np.float32)
    kept = np.zeros((h, w), dtype=np.uint8)
    for box in det.boxes_from_map(prob, params, w + 2 * pad, h + 2 * pad):
        cv2.fillPoly(kept, [np.round(box.quad - pad).astype(np.int32)], 1)
    contours, _ = cv2.findContours((prob > params.thresh).astype(np.uint8), cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    out = []
    for contour in contours:
        rect = cv2.minAreaRect(contour)
        if min(rect[1]) < params.min_size:
            continue
        score = det.box_score(prob, cv2.boxPoints(rect))
        if low <= score < params.box_thresh:
            quad = det.order_quad(cv2.boxPoints(det.unclip_rect(rect, params.unclip_ratio))) * scale - pad
            out.append((score, det.box_score(prob, contour.reshape(-1, 2)), quad))
    return out, kept


def missed_text(quad: np.ndarray, segments, kept: np.ndarray) -> list[str]:
    (x0, y0), (x1, y1) = quad.min(0), quad.max(0)
    found = []
    for segment in segments:
        xs, ys = [p[0] for p in segment.box], [p[1] for p in segment.box]
        cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
        inside = 0 <= int(cy) < kept.shape[0] and 0 <= int(cx) < kept.shape[1]
        if x0 <= cx <= x1 and y0 <= cy <= y1 and inside and not kept[int(cy), int(cx)]:
            found.append(segment.text)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--half", choices=("tune", "check"), required=True)
    parser.add_argument("--copy", choices=("born", "scan"), default="born",
                        help="the image read; the text layer's boxes fit the born copy only")
    parser.add_argument("--low", type=float, default=0.4, help="least rectangle score listed")
    args = parser.parse_args()
    engine = create_engine(EngineOptions(threads=2))
    rows: list[tuple[float, bool]] = []
    for line in (args.corpus / "pages.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["half"] != args.half:
            continue
        with Image.open(args.corpus / record[args.copy]) as image:
            regions, kept = dropped_regions(engine, to_rgb(image), args.low)
        if not regions:
            continue
        _, segments, _, _ = segment_lines(args.corpus, record)
        for score, filled, quad in regions:
            text = missed_text(quad, segments, kept)
            rows.append((filled, bool(text)))
            box = ",".join(str(int(v)) for v in (*quad.min(0), *quad.max(0)))
            print(f"{record['id']}\t{score:.3f}\t{filled:.3f}\t{box}\t{'text' if text else 'none'}\t"
                  f"{' | '.join(text)[:80]}", flush=True)
    print("\n| contour score at least | regions over text no kept box covers | regions over no text-layer text |")
    print("| ---: | ---: | ---: |")
    for threshold in THRESHOLDS:
        over = [text for filled, text in rows if filled >= threshold]
        print(f"| {threshold:.2f} | {sum(over)} | {len(over) - sum(over)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
