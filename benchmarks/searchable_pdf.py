"""Searchable PDFs side by side: pagerunner (`run --formats pdf`) and OCRmyPDF.

Two sets: the kit's 5 scans (images; each tool makes one PDF per image) and the 20-page scanned
PDF of benchmarks/make_scanned_pdf.py. For each tool: wall time of its commands (pages/min),
the size of the PDFs it writes, and the CER of the text a PDF reader extracts from them
(pypdfium2, per page, against the kit's ground truth, normalised with the kit's gt_normalize:
NFKC, whitespace removed for CJK and collapsed for Latin). Every tool gets 2 cores: pagerunner
one worker of 2 threads, OCRmyPDF --jobs 2 (one single-threaded Tesseract per page). OCRmyPDF
lowers its own priority (os.nice(5) in its __main__); pagerunner is run under `nice -n 5` too,
so that on a shared machine both compete alike. Run it under the shared timing lock:

    python3 benchmarks/make_scanned_pdf.py
    flock /tmp/pagerunner-timing.lock python3 benchmarks/searchable_pdf.py
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from eval_sets import shared_eval_dir  # noqa: E402

SCANS = ["eurotext.tif", "phototest.tif", "phototest-rotated-180.png", "phototest-rotated-L.png",
         "phototest-rotated-R.png"]


@dataclass
class Outcome:
    tool: str
    set_name: str
    pages: int
    seconds: float
    output_bytes: int
    input_bytes: int
    cers: list[float] = field(default_factory=list)
    note: str = ""


def _normalizer(kit: Path):
    sys.path.insert(0, str(kit / "tools"))
    from gt_normalize import cer, normalize
    return normalize, cer


def _page_texts(pdf: Path) -> list[str]:
    doc = pdfium.PdfDocument(pdf)
    try:
        return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    finally:
        doc.close()


def _timed(commands: list[list[str]], env: dict[str, str]) -> float:
    start = time.perf_counter()
    for command in commands:
        proc = subprocess.run(command, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({proc.returncode}): {proc.stderr[-800:]}")
    return time.perf_counter() - start


def pagerunner_commands(inputs: list[Path], out: Path) -> list[list[str]]:
    folder = out / "in"
    folder.mkdir(parents=True)
    for path in inputs:
        os.symlink(path, folder / path.name)
    return [["nice", "-n", "5", sys.executable, "-m", "runner", "run", str(folder), "-o", str(out / "out"),
             "--formats", "pdf", "--threads", "2", "--quiet"]]


def ocrmypdf_commands(inputs: list[Path], out: Path, languages: str, output_type: str) -> list[list[str]]:
    (out / "out").mkdir(parents=True)
    commands = []
    for path in inputs:
        command = ["ocrmypdf", "-l", languages, "--jobs", "2", "--rotate-pages", "--output-type", output_type,
                   "--quiet"]
        if path.suffix.lower() != ".pdf":
            command += ["--image-dpi", "200"]  # used only where the image declares no resolution
        commands.append(command + [str(path), str(out / "out" / (path.stem + ".pdf"))])
    return commands


def measure(tool: str, set_name: str, inputs: list[Path], truth: list[tuple[Path, int, Path, bool]],
            commands, work: Path, kit: Path) -> Outcome:
    """`truth`: (input, page, ground-truth file, cjk) for every page of the set."""
    normalize, cer = _normalizer(kit)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    seconds = _timed(commands, env)
    outcome = Outcome(tool, set_name, len(truth), seconds, 0, sum(p.stat().st_size for p in inputs))
    texts: dict[Path, list[str]] = {}
    for path in inputs:
        pdf = work / "out" / (path.stem + ".pdf")
        outcome.output_bytes += pdf.stat().st_size
        texts[path] = _page_texts(pdf)
    for path, page, gt, cjk in truth:
        reference = normalize(gt.read_text(encoding="utf-8"), cjk=cjk)
        outcome.cers.append(cer(reference, normalize(texts[path][page - 1], cjk=cjk)))
    return outcome


def _sets(kit: Path, scanned: Path) -> dict[str, tuple[list[Path], list[tuple[Path, int, Path, bool]], str]]:
    scans = [kit / "scans" / name for name in SCANS]
    scan_truth = [(p, 1, kit / "scans" / (p.name.split("-rotated")[0].rsplit(".", 1)[0] + ".gt.txt"), False)
                  for p in scans]
    pages = json.loads(scanned.with_name("scanned20.gt.json").read_text(encoding="utf-8"))
    pdf_truth = [(scanned, p["page"], Path(p["gt"]), p["cjk"]) for p in pages]
    return {"kit scans (5 images)": (scans, scan_truth, "eng"),
            "scanned PDF (20 pages)": ([scanned], pdf_truth, "eng+chi_sim")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scanned", type=Path, default=Path("/tmp/pagerunner-scanned20/scanned20.pdf"))
    parser.add_argument("--tools", default="pagerunner,ocrmypdf,ocrmypdf-pdf")
    parser.add_argument("--sets", default="scans,pdf", help="scans (the kit's 5 scans), pdf (the 20-page PDF)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    kit = shared_eval_dir()
    if not args.scanned.exists():
        raise SystemExit(f"{args.scanned} is missing: run benchmarks/make_scanned_pdf.py first")
    if "ocrmypdf" in args.tools and not shutil.which("ocrmypdf"):
        raise SystemExit("ocrmypdf is not installed (pip install ocrmypdf==17.13.0; apt tesseract-ocr ghostscript)")
    outcomes = []
    chosen = {"scans": "kit scans (5 images)", "pdf": "scanned PDF (20 pages)"}
    wanted = {chosen[name] for name in args.sets.split(",")}
    for set_name, (inputs, truth, languages) in _sets(kit, args.scanned).items():
        if set_name not in wanted:
            continue
        for tool in args.tools.split(","):
            with tempfile.TemporaryDirectory(prefix="searchable-") as tmp:
                work = Path(tmp)
                if tool == "pagerunner":
                    commands = pagerunner_commands(inputs, work)
                else:
                    output_type = "pdf" if tool == "ocrmypdf-pdf" else "pdfa"
                    commands = ocrmypdf_commands(inputs, work, languages, output_type)
                outcomes.append(measure(tool, set_name, inputs, truth, commands, work, kit))
                print(f"  {tool} on {set_name}: {outcomes[-1].seconds:.1f} s", file=sys.stderr)
    print_table(outcomes)
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1), encoding="utf-8")


def print_table(outcomes: list[Outcome]) -> None:
    print("| set | tool | pages | seconds | pages/min | output MB (input MB) | CER mean | CER median |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for o in outcomes:
        print(f"| {o.set_name} | {o.tool} | {o.pages} | {o.seconds:.1f} | {60 * o.pages / o.seconds:.1f} | "
              f"{o.output_bytes / 1e6:.2f} ({o.input_bytes / 1e6:.2f}) | {statistics.mean(o.cers):.4f} | "
              f"{statistics.median(o.cers):.4f} |")
    print()
    print("Per page CER (pypdfium2 text of each searchable PDF vs the kit's ground truth):")
    for o in outcomes:
        print(f"  {o.tool:13s} {o.set_name:24s} " + " ".join(f"{c:.3f}" for c in o.cers))


if __name__ == "__main__":
    main()
