#!/usr/bin/env python3
"""What a GPU device owner's start is made of, step by step, each in a fresh process.

A child process does what `runner/device_owner.py` does before it serves, timing each step from
the moment the parent launched it: the interpreter, `import ncnn`, the Vulkan instance, the
owner's imports, the model files' verification, the detector (its pipelines and weights), the
strip recogniser (its shape probe, graph and pipelines), then each net's first and second run.
It then loads both nets a second time in the same process: ncnn keeps a pipeline cache per
net, so the second load shows what a load costs without it being shared (and what the driver's
own caches save). With --spy the child runs under py-spy (native frames), and the samples taken
while the nets load are summed by the shared library at the top of each stack: the ncnn module
(ncnn and its glslang, which compiles each shader from GLSL at run time) against the Vulkan
driver and the rest.

    python benchmarks/gpu_startup.py [--model ppocr-v6-tiny] [--repeats 3] [--spy PATH/py-spy] [-E KEY=VALUE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STEPS = ("interpreter", "import ncnn", "vulkan instance", "owner imports", "verify models", "detector load",
         "recogniser load", "detector run 1", "detector run 2", "strips run 1", "strips run 2",
         "detector load again", "recogniser load again")


def child(launched: float, model: str | None, extra: list[str]) -> None:
    marks: dict[str, float] = {"interpreter": time.time() - launched}
    last = time.perf_counter()

    def mark(step: str) -> None:
        nonlocal last
        now = time.perf_counter()
        marks[step] = now - last
        last = now

    import ncnn
    mark("import ncnn")
    ncnn.create_gpu_instance()
    ncnn.get_gpu_count()
    mark("vulkan instance")
    sys.path.insert(0, str(REPO))
    import numpy as np
    from model_cache.engine import EngineOptions
    from model_cache.ppocr.assets import load_model_set
    from model_cache.ppocr.engine import PPOCREngine
    mark("owner imports")
    options = EngineOptions(threads=2, device="gpu", model=model,
                            extra=tuple(tuple(kv.split("=", 1)) for kv in ["rec_batch=on", *extra]))
    models = load_model_set(options.model_dir, options.model)
    mark("verify models")
    engine = PPOCREngine(options, models=models, recognizer=False, classifier=False)
    mark("detector load")
    engine.load_recognizer()
    mark("recogniser load")
    page = np.random.default_rng(0).uniform(-1, 1, (3, 1600, 1152)).astype(np.float32)
    for n in (1, 2):
        engine.det.run(page)
        mark(f"detector run {n}")
    crop = np.full((48, 900, 3), 255, np.uint8)
    crop[20:28, 10:890] = 0
    for n in (1, 2):
        engine.batch.run([crop] * 8, engine.params.rec)
        mark(f"strips run {n}")
    PPOCREngine(options, models=models, recognizer=False, classifier=False)
    mark("detector load again")
    engine.load_recognizer()
    mark("recogniser load again")
    layers = {"det": len(engine.det.net.layers()), "strips": len(engine.batch.net.net.layers())}
    print(json.dumps({"marks": marks, "layers": layers, "pid": os.getpid()}))


def leaf_library(stack: str) -> str:
    """Where a py-spy raw stack (outermost frame first) is: glslang (ncnn compiling GLSL to
    SPIR-V) if any frame is in it, else the shared library (or Python) of its innermost frame."""
    if "glslang::" in stack:
        return "glslang"
    leaf = stack.rsplit(";", 1)[-1]
    if "(" in leaf and ".so" in leaf:
        name = leaf[leaf.rfind("(") + 1:].rstrip(")")
        return name.split(".so")[0].rsplit("/", 1)[-1] + ".so"
    return "python" if ".py:" in leaf else leaf[:40]


def loading(stack: str) -> str | None:
    """Which load a stack is inside of, from its Python frames ("Class.function (file:line)")."""
    frames = stack.split(";")
    if any("load_recognizer (" in f for f in frames):
        return "recogniser load"
    if any("__init__ (" in f and "ppocr/engine.py" in f for f in frames):
        return "detector load"
    return None


def spy_summary(raw: Path) -> dict[str, Counter]:
    by_load: dict[str, Counter] = {}
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        which = loading(stack)
        if which and count.isdigit():
            by_load.setdefault(which, Counter())[leaf_library(stack)] += int(count)
    return by_load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--spy", default=None, help="py-spy executable: one more run under it, by library")
    parser.add_argument("--spy-raw", type=Path, default=None, help="keep py-spy's raw stacks here")
    parser.add_argument("-E", dest="extra", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--child", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.model, args.extra)
        return 0
    base = [sys.executable, "-P", __file__, *(["--model", args.model] if args.model else []),
            *[f"-E{kv}" for kv in args.extra]]
    runs = []
    for _ in range(args.repeats):
        out = subprocess.run([*base, "--child", repr(time.time())], capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"model {args.model or 'default'}; layers {runs[0]['layers']}; {args.repeats} fresh processes\n")
    print("| step | s (each run) | median s |")
    print("| --- | --- | ---: |")
    for step in STEPS:
        each = ", ".join(f"{r['marks'][step]:.3f}" for r in runs)
        print(f"| {step} | {each} | {statistics.median(r['marks'][step] for r in runs):.3f} |")
    if args.spy:
        raw = args.spy_raw or Path(os.environ.get("TMPDIR", "/tmp")) / f"gpu_startup_spy_{os.getpid()}.txt"
        subprocess.run([args.spy, "record", "--native", "-r", "250", "-f", "raw", "-o", str(raw), "--",
                        *base, "--child", repr(time.time())], capture_output=True, text=True, check=True)
        print("\npy-spy samples while loading, by the library at the top of the stack:\n")
        for which, counts in spy_summary(raw).items():
            total = sum(counts.values())
            print(f"- {which} ({total} samples): " +
                  ", ".join(f"{lib} {n / total:.0%}" for lib, n in counts.most_common(6)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
