#!/usr/bin/env python3
"""Can a GPU device owner's two nets load side by side, and what would that cost its serving?

ncnn's Python binding holds the GIL while it makes a net's pipelines, so in one process the
detector and the strip recogniser load one after the other (~1 s each on an H200; "The GPU run's
start, piece by piece" in docs/benchmarks.md). This compares two layouts in fresh processes,
started at the same moment, taking turns repeat by repeat:

  one  one process imports what an owner imports, then loads the detector and the recogniser
       (today's owner);
  two  one process loads the detector while another loads the recogniser.

For each: the seconds from launch to both nets loaded; then, all processes told to go at once,
the same GPU work: --reps detector calls on a dense page and --reps rounds of that page's
strips, each net on two threads as the owner's streams. In `one` the four threads share one
Vulkan context; in `two` each process has its own, and the GPU time-slices the two contexts.
With --feeders N, N more processes import a feeder's modules at the launch, as a run's feeders
do (they compete for the CPU and the disk cache while the owner starts).

    python benchmarks/gpu_split_load.py [--model M] [--repeats 3] [--reps 40] [--feeders 12]
        [--pdf PDF --page 3] [--owner-imports engine] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KIT_PDF = REPO.parent / "shared" / "eval" / "pdfs" / "maint-guide.en.p5-9.pdf"
FEEDER_IMPORTS = "import runner.worker, model_cache.ppocr.engine, model_cache.ppocr.remote"


def child(role: str, launched: float, data: Path, model: str | None, reps: int, owner_imports: str,
          device: str) -> None:
    """role: both | det | rec. Prints `loaded {...}`, waits for a line on stdin, prints `work {...}`."""
    marks = {"interpreter": time.time() - launched}
    sys.path.insert(0, str(REPO))
    import runner.device_owner  # noqa: F401  (what owner_main imports before the nets)
    from model_cache.engine import EngineOptions
    from model_cache.ppocr import nets
    from model_cache.ppocr.assets import load_model_set
    if owner_imports == "engine":  # what the owner imported before nets.py
        import model_cache.ppocr.engine  # noqa: F401
    marks["imports"] = time.time() - launched
    options = EngineOptions(threads=2, device=device, model=model, extra=(("rec_batch", "on"),))
    models = load_model_set(options.model_dir, options.model)
    det = strips = None
    if role in ("both", "det"):
        det = nets.detector(models, options)
        marks["det loaded"] = time.time() - launched
    if role in ("both", "rec"):
        strips = nets.strip_recognizer(models, options)
        marks["rec loaded"] = time.time() - launched
    print("loaded " + json.dumps(marks), flush=True)

    import numpy as np
    from model_cache.ppocr.detection import DetParams, probability_map
    inputs = np.load(data)
    rgb = inputs["rgb"]
    prepared = [inputs[k] for k in sorted((k for k in inputs.files if k.startswith("crop")), key=lambda k: int(k[4:]))]
    if det is not None:
        probability_map(det, rgb, DetParams())  # first call of this shape
    if strips is not None:
        list(strips.iter_prepared(prepared))
    sys.stdin.readline()
    streams = 2 if device != "cpu" else 1  # a CPU net's pools are not thread-safe (service.py)
    work = []
    if det is not None:
        work += [lambda: probability_map(det, rgb, DetParams())] * streams
    if strips is not None:
        work += [lambda: list(strips.iter_prepared(prepared))] * streams
    start = time.perf_counter()
    threads = [threading.Thread(target=lambda w=w: [w() for _ in range(reps // streams)]) for w in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("work " + json.dumps({"seconds": time.perf_counter() - start}), flush=True)


def prepare_inputs(pdf: Path, page: int, model: str | None, out: Path) -> int:
    """A dense page and its prepared line crops, found by the CPU engine."""
    import numpy as np

    sys.path.insert(0, str(REPO))
    from benchmarks.ppocr_pages import render_pdf_page
    from model_cache.engine import EngineOptions
    from model_cache.ppocr.batch_rec import prepare
    from model_cache.ppocr.crops import rectify
    from model_cache.ppocr.detection import detect
    from model_cache.ppocr.engine import PPOCREngine, to_rgb

    engine = PPOCREngine(EngineOptions(threads=4, model=model))
    rgb = to_rgb(render_pdf_page(pdf, page - 1))
    boxes = detect(engine.det, rgb, engine.params.det)
    crops = {f"crop{i}": prepare(rectify(rgb, b.quad, engine.params.rec), engine.params.rec)
             for i, b in enumerate(boxes)}
    np.savez(out, rgb=rgb, **crops)
    return len(boxes)


def one_repeat(layout: str, args: argparse.Namespace, data: Path) -> dict[str, float]:
    roles = ["both"] if layout == "one" else ["det", "rec"]
    launched = time.time()
    procs = [subprocess.Popen([sys.executable, __file__, "--child", role, "--launched", repr(launched),
                               "--data", str(data), "--reps", str(args.reps), "--owner-imports", args.owner_imports,
                               "--device", args.device,
                               *(["--model", args.model] if args.model else [])],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
             for role in roles]
    feeders = [subprocess.Popen([sys.executable, "-c", FEEDER_IMPORTS], cwd=REPO) for _ in range(args.feeders)]
    marks = [json.loads(_line(p, "loaded ")) for p in procs]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    work = [json.loads(_line(p, "work "))["seconds"] for p in procs]
    for p in [*procs, *feeders]:
        p.wait()
    loaded = max(m.get("rec loaded", 0.0) for m in marks), max(m.get("det loaded", 0.0) for m in marks)
    return {"imports": max(m["imports"] for m in marks), "det loaded": loaded[1], "rec loaded": loaded[0],
            "both loaded": max(loaded), "work": max(work)}


def _line(proc: subprocess.Popen, prefix: str) -> str:
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"child exited (code {proc.wait()}) before '{prefix.strip()}'")
        if line.startswith(prefix):
            return line[len(prefix):]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reps", type=int, default=40, help="detector calls and strip rounds of the page, each")
    parser.add_argument("--feeders", type=int, default=12)
    parser.add_argument("--pdf", type=Path, default=KIT_PDF)
    parser.add_argument("--page", type=int, default=3)
    parser.add_argument("--owner-imports", choices=("nets", "engine"), default="nets")
    parser.add_argument("--device", default="gpu", help="cpu: a quick check of the script itself")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--launched", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.launched, args.data, args.model, args.reps, args.owner_imports, args.device)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "page.npz"
        crops = prepare_inputs(args.pdf, args.page, args.model, data)
        print(f"{args.pdf.name} page {args.page}: {crops} crops; {args.reps} detector calls and strip rounds "
              f"each; {args.feeders} feeder imports alongside; owner imports: {args.owner_imports}\n")
        results: dict[str, list[dict[str, float]]] = {"one": [], "two": []}
        for _ in range(args.repeats):
            for layout in results:
                results[layout].append(one_repeat(layout, args, data))
                print(f"  {layout}: " + ", ".join(f"{k} {v:.2f}" for k, v in results[layout][-1].items()),
                      file=sys.stderr, flush=True)
    keys = ("imports", "det loaded", "rec loaded", "both loaded", "work")
    print("| layout | " + " | ".join(f"{k} s" for k in keys) + " |")
    print("| --- |" + " ---: |" * len(keys))
    for layout, runs in results.items():
        cells = [f"{statistics.median(r[k] for r in runs):.2f} ({', '.join(f'{r[k]:.2f}' for r in runs)})"
                 for k in keys]
        print(f"| {layout} | " + " | ".join(cells) + " |")
    print("\n(seconds from launch, medians with each repeat; `work`: the GPU work after the go, the slower side)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
