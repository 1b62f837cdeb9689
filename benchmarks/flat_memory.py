#!/usr/bin/env python3
"""Is pagerunner's memory flat over a long job? OCRs a PDF of full kit pages cycled to --pages
pages (maint-guide's five dense English pages and packaging-tutorial's four Chinese ones, in
turn) and samples the resident memory of its whole process tree every --interval seconds.

    python benchmarks/flat_memory.py --pages 500 --model ppocr-v6-tiny [--threads 2] [--csv F]

Prints the tree's RSS at page marks (the highest sample up to the time the mark was reached)
and the peak; with --csv, every sample (seconds, MiB, pages done).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_sets import shared_eval_dir  # noqa: E402
from gpu_throughput import cycled_pdf  # noqa: E402
from procmem import measure  # noqa: E402
from throughput import count_jsonl_ok, count_lines, memory_table, pagerunner_command  # noqa: E402

SOURCES = ("maint-guide.en.p5-9.pdf", "packaging-tutorial.zh_CN.p7-10-18-21.pdf")


def kit_cycled_pdf(path: Path, pages: int) -> Path:
    return cycled_pdf(shared_eval_dir() / "pdfs", list(SOURCES), pages, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dpi", type=float, default=200)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--csv", type=Path)
    parser.add_argument("--timeout", type=float, default=6 * 3600, help="stop the job after this many seconds")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="flatmem-"))
    try:
        pdf = kit_cycled_pdf(work / f"cycled{args.pages}.pdf", args.pages)
        out = work / "out"
        argv, env = pagerunner_command(pdf, args.threads, args.dpi, args.model)(out)
        result = measure(argv, env, interval=args.interval,
                         progress=lambda: count_lines(out / "results.jsonl"), timeout=args.timeout)
        done = count_jsonl_ok(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.csv:
        args.csv.write_text("seconds,tree_mib,pages_done\n" + "".join(
            f"{t:.1f},{rss:.1f},{n}\n" for t, rss, n in result.samples), encoding="utf-8")
    print(f"{done}/{args.pages} pages in {result.seconds:.0f} s ({done / result.seconds * 60:.1f} pages/min), "
          f"exit {result.returncode}; tree peak {result.tree_peak_mib:.0f} MiB, largest process "
          f"{result.process_peak_mib:.0f} MiB")
    print(memory_table(result, args.pages))
    if result.returncode != 0:
        print(result.stderr_tail, file=sys.stderr)


if __name__ == "__main__":
    main()
