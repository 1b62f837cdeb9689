"""Engine-level speed of ppocr on dense A4 pages rendered at 200 dpi: pages/min, per-stage
seconds and peak RSS, for a few detector input limits (run in a child process each, so
peak RSS is per configuration).

    python benchmarks/ppocr_speed.py [--threads 2] [--limits 1280,1600,1920] [--repeat 1]
                                     [--device cpu|gpu] [--pdf PATH --pages 3,4,5]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
KIT = REPO.parent / "shared" / "eval"
DENSE_PDF = KIT / "pdfs" / "maint-guide.en.p5-9.pdf"


def child(threads: int, limit: int, repeat: int, device: str, pdf: Path, numbers: list[int]) -> dict:
    from benchmarks.ppocr_pages import render_pdf_page
    from model_cache.engine import EngineOptions
    from model_cache.ppocr.engine import create_engine
    engine = create_engine(EngineOptions(threads=threads, device=device,
                                         extra=(("det_limit_side", str(limit)),)))
    pages = [render_pdf_page(pdf, n - 1) for n in numbers]
    engine.ocr(pages[0])  # warm-up: first-run allocations
    stages: dict[str, float] = {}
    start = time.perf_counter()
    for _ in range(repeat):
        for page in pages:
            for key, value in engine.ocr(page).timings.items():
                stages[key] = stages.get(key, 0.0) + value
    wall = time.perf_counter() - start
    n = repeat * len(pages)
    return {"limit": limit, "threads": threads, "device": device, "pages": n, "pages_per_min": 60 * n / wall,
            "stages": {k: v / n for k, v in stages.items()},
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limits", default="1280,1600,1920")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument("--pdf", type=Path, default=DENSE_PDF)
    parser.add_argument("--pages", default="3,4,5", help="1-based pages of --pdf")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=1920, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        numbers = [int(v) for v in args.pages.split(",")]
        print(json.dumps(child(args.threads, args.limit, args.repeat, args.device, args.pdf, numbers)))
        return 0
    print("| det limit | device | threads | pages | pages/min | detect s | orient s | recognize s | layout s |"
          " peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for limit in (int(v) for v in args.limits.split(",")):
        out = subprocess.run([sys.executable, __file__, "--child", "--limit", str(limit),
                              "--threads", str(args.threads), "--repeat", str(args.repeat),
                              "--device", args.device, "--pdf", str(args.pdf), "--pages", args.pages],
                             capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        s = r["stages"]
        print(f"| {limit} | {r['device']} | {r['threads']} | {r['pages']} | {r['pages_per_min']:.1f} | "
              f"{s.get('detect', 0):.3f} | {s.get('orient', 0):.3f} | {s.get('recognize', 0):.3f} | "
              f"{s.get('layout', 0):.3f} | {r['peak_rss_mb']:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
