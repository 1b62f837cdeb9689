"""GPU vs CPU throughput of `pagerunner run`, end to end through the CLI (startup included).

For each configuration: pages/min (median of --repeats runs), pages in flight per worker
(--batch), engine submissions and bytes downloaded per page (from the JSONL timings the
ppocr engine records: submissions counts one per net call plus one per host-fallback layer),
and the time from process start to the first JSONL record on stdout.

    python benchmarks/gpu_throughput.py --job dense40 --job mixed200 --repeats 3 --startup \
        --config "cpu 8x2=--workers 8 --threads 2" --config "gpu owner=--device gpu" \
        --config "gpu one worker b16=--device gpu --feeders 0 --batch 16"

The first configuration is the reference of the "lines = first config" column (put the CPU first
to read CPU/GPU line identity). Round trips and kB between processes: a feeder's requests to its
device owner (runner/device_owner.py) per page.

Jobs: dense40 = maint-guide.en.p5-9.pdf (the kit) cycled to 40 pages; mixed200 = the kit's
three PDFs (English, Chinese, Chinese lipsum) cycled to 200 pages; mixed600 the same to 600 pages
(the steady rate of a long job). 200 dpi.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import pypdfium2 as pdfium

REPO = Path(__file__).resolve().parents[1]
KIT = REPO.parent / "shared" / "eval" / "pdfs"
KIT_MIXED = ["maint-guide.en.p5-9.pdf", "packaging-tutorial.zh_CN.p7-10-18-21.pdf", "zhlipsum.p1-4.pdf"]
JOBS = {"dense40": (["maint-guide.en.p5-9.pdf"], 40), "dense4": (["maint-guide.en.p5-9.pdf"], 4),
        "mixed200": (KIT_MIXED, 200),
        "mixed600": (KIT_MIXED, 600)}  # the ~4 s start a small share: the steady rate of a big job


STAGES = ("render", "detect", "orient", "recognize", "rec_net", "annotate", "layout", "recognise")


def cycled_pdf(kit: Path, names: list[str], pages: int, out: Path) -> Path:
    """A PDF of `pages` pages taken in turn from the given PDFs."""
    sources = [pdfium.PdfDocument(str(kit / name)) for name in names]
    order = [(s, p) for s in range(len(sources)) for p in range(len(sources[s]))]
    doc = pdfium.PdfDocument.new()
    for i in range(pages):
        s, p = order[i % len(order)]
        doc.import_pages(sources[s], [p])
    doc.save(str(out))
    return out


def console_script(env: dict[str, str]) -> Path:
    """A script like the one pip writes for the `pagerunner` entry point of the tree that provides
    `runner` on env's PYTHONPATH (else this repository). Unlike `python -m runner`, its processes
    re-import it when multiprocessing spawns them, as an installed command's do."""
    trees = [Path(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p] + [REPO]
    return _script_for(next(t.resolve() for t in trees
                            if (t / "runner" / "__init__.py").exists() and (t / "pyproject.toml").exists()))


@functools.lru_cache(maxsize=None)
def _script_for(tree: Path) -> Path:
    """Written once per tree and run: the entry point as that tree's pyproject.toml names it."""
    entry = tomllib.loads((tree / "pyproject.toml").read_text())["project"]["scripts"]["pagerunner"]
    module, _, function = entry.partition(":")
    script = Path(tempfile.mkdtemp(prefix="pagerunner-entry-")) / "pagerunner.py"
    script.write_text(f"import re\nimport sys\nfrom {module} import {function}\nif __name__ == '__main__':\n"
                      f"    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                      f"    sys.exit({function}())\n")
    return script


def run_once(pdf: Path, args: list[str], console: bool = False) -> dict:
    env = dict(os.environ)
    while args and re.fullmatch(r"[A-Z][A-Z0-9_]*=.*", args[0]):  # leading NAME=VALUE: environment
        name, _, value = args[0].partition("=")
        env[name], args = value, args[1:]
    with tempfile.TemporaryDirectory() as out:
        launcher = [sys.executable, str(console_script(env))] if console else [sys.executable, "-m", "runner"]
        cmd = [*launcher, "run", str(pdf), "-o", out, "--jsonl", "-", "-q",
               "--text-layer", "ignore", *args]  # OCR every page: the job's pages are born-digital
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        first, records = None, []
        assert proc.stdout is not None
        for line in proc.stdout:
            if first is None:
                first = time.perf_counter() - start
            records.append(json.loads(line))
        err = proc.stderr.read() if proc.stderr else ""
        proc.wait()
        seconds = time.perf_counter() - start
    ok = [r for r in records if r.get("status", "ok") != "failed"]
    if proc.returncode != 0 or not ok:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err[-2000:]}")
    timings = [r.get("timings", {}) for r in ok]
    stages = {k: statistics.mean(t.get(k, 0.0) for t in timings) for k in STAGES}
    return {"pages": len(ok), "seconds": seconds, "first_record": first, "stages": stages,
            "submissions": statistics.mean(t.get("submissions", 0.0) for t in timings),
            "downloaded": statistics.mean(t.get("downloaded_bytes", 0.0) for t in timings),
            "net_calls": statistics.mean(t.get("net_calls", 0.0) for t in timings),
            "ipc": statistics.mean(t.get("ipc_bytes", 0.0) for t in timings),
            "text": {r["page"]: r.get("text", "") for r in ok},
            "page_seconds": statistics.mean(t.get("render", 0.0) + t.get("recognise", 0.0) for t in timings)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--job", action="append", choices=sorted(JOBS))
    parser.add_argument("--config", action="append", required=True,
                        help="LABEL=CLI ARGS, optionally led by NAME=VALUE environment settings")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kit", type=Path, default=KIT)
    parser.add_argument("--budget", type=float, default=0, help="stop starting runs after this many s")
    parser.add_argument("--json", type=Path, help="write every run here")
    parser.add_argument("--console-script", action="store_true",
                        help="run pagerunner through a script like pip's console script, not python -m runner")
    parser.add_argument("--startup", action="store_true",
                        help="also run each configuration on 1 page: startup = its wall time less the page's")
    opts = parser.parse_args()
    began, rows, raw, stage_rows = time.perf_counter(), [], {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for job in opts.job or ["dense40"]:
            names, pages = JOBS[job]
            pdf = cycled_pdf(opts.kit, names, pages, Path(tmp) / f"{job}.pdf")
            reference = None
            for spec in opts.config:
                label, _, args = spec.partition("=")
                runs = []
                for _ in range(opts.repeats):
                    if opts.budget and time.perf_counter() - began > opts.budget:
                        break
                    runs.append(run_once(pdf, shlex.split(args), opts.console_script))
                if not runs:
                    rows.append(f"| {job} | {label} | (not run: budget) | | | | | | | | |")
                    continue
                raw[f"{job}/{label}"] = [{k: v for k, v in r.items() if k != "text"} for r in runs]
                startup = None
                if opts.startup:
                    one_page = cycled_pdf(opts.kit, names, 1, Path(tmp) / "one.pdf")
                    one = run_once(one_page, shlex.split(args), opts.console_script)
                    startup = one["seconds"] - one["page_seconds"]
                first = statistics.median(r["first_record"] for r in runs)
                after_load = f"{first - startup:.2f}" if startup is not None else "-"
                startup_text = f"{startup:.1f}" if startup is not None else "-"
                texts = runs[0]["text"]
                reference = reference or texts
                same = _same_lines(reference, texts)
                rate = statistics.median(r["pages"] / r["seconds"] * 60 for r in runs)
                rows.append(f"| {job} | {label} | {rate:.1f} | {len(runs)} | {_in_flight(args)} | "
                            f"{statistics.median(r['submissions'] for r in runs):.1f} | "
                            f"{statistics.median(r['downloaded'] for r in runs) / 1e3:.1f} | "
                            f"{statistics.median(r['net_calls'] for r in runs):.1f} | "
                            f"{statistics.median(r['ipc'] for r in runs) / 1e3:.0f} | "
                            f"{first:.2f} | {startup_text} | {after_load} | {same} |")
                print(rows[-1], file=sys.stderr, flush=True)
                stage_rows.append(f"| {job} | {label} | " + " | ".join(
                    f"{statistics.median(r['stages'][k] for r in runs) * 1e3:.0f}" for k in STAGES) + " |")
    print("| job | configuration | pages/min (median) | runs | pages in flight | submissions/page |"
          " kB downloaded/page | net round trips/page | kB between processes/page | s to first record |"
          " startup s | first record after load s | lines = first config |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))
    print("\nPer page, ms (means over the pages of a run; medians over runs). recognise = the"
          " worker's whole engine call, which for a batch covers all its pages:\n")
    print("| job | configuration | " + " | ".join(STAGES) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in STAGES) + " |")
    print("\n".join(stage_rows))
    if opts.json:
        opts.json.write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return 0


def _in_flight(args: str) -> str:
    """Pages in flight: feeders x pages per call with a GPU owner, else workers x pages per call
    (each worker also holds a second group ready: executors.py's depth)."""
    from runner.device_owner import default_feeders
    from runner.devices import DEFAULT_FEEDER_BATCH, DEFAULT_GPU_BATCH

    gpu = "gpu" in (_flag(args, "--device") or "cpu")
    feeders = _flag(args, "--feeders")
    owner = gpu and feeders != "0" and "rec_batch=off" not in args
    batch = _flag(args, "--batch") or str(DEFAULT_FEEDER_BATCH if owner else DEFAULT_GPU_BATCH if gpu else 1)
    processes = (feeders or str(default_feeders(1))) if owner else (_flag(args, "--workers") or "1")
    return f"{processes} x {batch}" + (" (owner)" if owner else "")


def _flag(args: str, name: str) -> str | None:
    parts = shlex.split(args)
    return parts[parts.index(name) + 1] if name in parts else None


def _same_lines(reference: dict[int, str], texts: dict[int, str]) -> str:
    """Lines identical to the first configuration's (page by page, aligned by difflib), and
    how many of the others are within 2 characters (edit distance)."""
    from difflib import SequenceMatcher

    from runner.evaluation.metrics import levenshtein
    same = close = total = 0
    for page, ref_text in reference.items():
        ref, got = ref_text.splitlines(), texts.get(page, "").splitlines()
        total += max(len(ref), len(got))
        for op, a0, a1, b0, b1 in SequenceMatcher(None, ref, got, autojunk=False).get_opcodes():
            if op == "equal":
                same += a1 - a0
            elif op == "replace" and a1 - a0 == b1 - b0:
                close += sum(levenshtein(x, y) <= 2 for x, y in zip(ref[a0:a1], got[b0:b1]))
    return f"{same}/{total} (+{close} within 2 chars)"


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
