"""Accuracy of the ppocr engine on every set of ../shared/eval and on its own page set,
optionally side by side with Tesseract on the same pixels.

    python benchmarks/ppocr_accuracy.py [--sets scans,lines,pdfs,pdfs-scanned,own,own-scanned]
                                        [--tesseract] [--threads 2] [--verbose]
                                        [--model ppocr-v6-tiny] [--extra det_limit_side=1280]
                                        [--json OUT.json]
    python benchmarks/ppocr_accuracy.py --sets corpus-tune-born,corpus-check-scan [--corpus /work/corpus]

corpus-<half>-<copy> sets are the pages of the corpus that benchmarks/corpus.py builds (halves
tune/check, copies born/scan), scored against their text layer.

CER after ../shared/eval/tools/gt_normalize.py, whitespace-free (as the kit's Tesseract
baseline table), plus CER with spaces kept (collapsed) for Latin text, and the order-free
bag-of-characters F1. Per set: mean CER, mean (1 - F1) and their ratio (the share of the
error that is reading order rather than misreads shows as ratio >> 1).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
KIT = REPO.parent / "shared" / "eval"
sys.path.insert(0, str(KIT / "tools"))

from PIL import Image  # noqa: E402

from benchmarks.ppocr_pages import (Page, render_pdf_page, scanned, synthetic_pages,  # noqa: E402
                                    system_pdf_pages)
from gt_normalize import normalize  # noqa: E402
from model_cache.engine import EngineOptions  # noqa: E402
from model_cache.ppocr.engine import create_engine  # noqa: E402
from runner.evaluation.metrics import bag_f1, cer  # noqa: E402

CJK_DOCS = ("zhlipsum", "packaging-tutorial")
ALL_SETS = ("scans", "lines", "pdfs", "pdfs-scanned", "own", "own-scanned")


@dataclass
class Score:
    set_name: str
    ident: str
    cer: float
    cer_spaces: float | None
    f1: float
    seconds: float
    tess_cer: float | None = None
    tess_f1: float | None = None


def image_pages(folder: Path) -> list[Page]:
    pages = []
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in (".png", ".tif"):
            gt = path.with_name(path.stem + ".gt.txt").read_text(encoding="utf-8")
            pages.append(Page(path.stem, gt, False, lambda p=path: Image.open(p)))
    return pages


def kit_pdf_pages() -> list[Page]:
    pages = []
    for pdf in sorted((KIT / "pdfs").glob("*.pdf")):
        for gt in sorted((KIT / "pdfs").glob(f"{pdf.stem}.p[0-9][0-9].gt.txt")):
            number = int(gt.name[len(pdf.stem) + 2:len(pdf.stem) + 4])
            cjk = any(pdf.stem.startswith(d) for d in CJK_DOCS)
            pages.append(Page(f"{pdf.stem} p{number:02d}", gt.read_text(encoding="utf-8"), cjk,
                              lambda p=pdf, n=number: render_pdf_page(p, n - 1)))
    return pages


def corpus_pages(root: Path, half: str, copy: str, limit: int) -> list[Page]:
    """A corpus half's pages (benchmarks/corpus.py's pages.jsonl: id, half, lang, gt, born, scan)."""
    import json
    index = root / "pages.jsonl"
    if not index.exists():
        raise SystemExit(f"{index} not found: the corpus is not built")
    records = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines() if line]
    records = [r for r in records if r["half"] == half]  # in the file's seeded-subset order
    if limit:  # the first `limit`: the same pages as accuracy.py --corpus --subset `limit`
        records = records[:limit]
    return [Page(r["id"], (root / r["gt"]).read_text(encoding="utf-8"), r.get("lang", "").startswith("zh"),
                 lambda p=root / r[copy]: Image.open(p).convert("RGB")) for r in records]


CORPUS = {"root": Path("/work/corpus"), "limit": 0}


def build(name: str) -> list[Page]:
    if name.startswith("corpus-"):
        _, half, copy = name.split("-")
        return corpus_pages(CORPUS["root"], half, copy, CORPUS["limit"])
    if name == "scans":
        return image_pages(KIT / "scans")
    if name == "lines":
        return image_pages(KIT / "lines")
    if name == "pdfs":
        return kit_pdf_pages()
    if name == "pdfs-scanned":
        return scanned(kit_pdf_pages())
    if name == "own":
        return system_pdf_pages() + synthetic_pages()
    if name == "own-scanned":
        return scanned(system_pdf_pages() + synthetic_pages())
    raise SystemExit(f"unknown set {name}")


def tesseract(image: Image.Image, cjk: bool, line: bool, threads: int) -> str:
    with tempfile.NamedTemporaryFile(suffix=".png") as tmp:
        image.convert("RGB").save(tmp.name)
        cmd = ["tesseract", tmp.name, "-", "--psm", "7" if line else "3",
               "-l", "chi_sim+eng" if cjk else "eng"]
        env = {"OMP_THREAD_LIMIT": str(threads), "PATH": "/usr/bin:/bin"}
        return subprocess.run(cmd, capture_output=True, text=True, env=env).stdout


def score_page(engine, set_name: str, page: Page, with_tess: bool, threads: int) -> tuple[Score, str]:
    image = page.load()
    start = time.perf_counter()
    text = engine.ocr(image).text
    seconds = time.perf_counter() - start
    ref = normalize(page.reference, cjk=True)
    hyp = normalize(text, cjk=True)
    spaces = None if page.cjk else cer(normalize(page.reference), normalize(text))
    score = Score(set_name, page.ident, cer(ref, hyp), spaces, bag_f1(ref, hyp), seconds)
    if with_tess:
        tess = normalize(tesseract(image, page.cjk, set_name == "lines", threads), cjk=True)
        score.tess_cer, score.tess_f1 = cer(ref, tess), bag_f1(ref, tess)
    return score, text


def fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def set_means(scores: list[Score]) -> dict[str, dict[str, float]]:
    means = {}
    for name in dict.fromkeys(s.set_name for s in scores):
        rows = [s for s in scores if s.set_name == name]
        means[name] = {"n": len(rows), "mean_cer": round(sum(s.cer for s in rows) / len(rows), 5),
                       "mean_1_f1": round(sum(1 - s.f1 for s in rows) / len(rows), 5),
                       "seconds_per_page": round(sum(s.seconds for s in rows) / len(rows), 3)}
        tess = [s.tess_cer for s in rows if s.tess_cer is not None]
        if tess:
            means[name]["tesseract_mean_cer"] = round(sum(tess) / len(tess), 5)
    return means


def write_json(path: Path, engine, extra: tuple, scores: list[Score]) -> None:
    import json
    sys.path.insert(0, str(REPO / "benchmarks"))
    from report_md import command_line, utc_now
    path.write_text(json.dumps({"benchmark": "benchmarks/ppocr_accuracy.py", "measured": utc_now(),
                                "command": command_line(), "model": engine.name,
                                "extra": [list(kv) for kv in extra], "sets": set_means(scores)},
                               indent=2) + "\n", encoding="utf-8")


def summary(scores: list[Score]) -> None:
    print("\n| set | n | mean CER | median CER | mean CER (spaces) | mean 1-F1 | CER/(1-F1) |"
          " tess mean CER | tess mean 1-F1 | s/page |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in dict.fromkeys(s.set_name for s in scores):
        rows = [s for s in scores if s.set_name == name]
        mean = sum(s.cer for s in rows) / len(rows)
        median = sorted(s.cer for s in rows)[len(rows) // 2]
        sp = [s.cer_spaces for s in rows if s.cer_spaces is not None]
        miss = sum(1 - s.f1 for s in rows) / len(rows)
        tess = [s.tess_cer for s in rows if s.tess_cer is not None]
        tess_f = [1 - s.tess_f1 for s in rows if s.tess_f1 is not None]
        ratio = mean / miss if miss > 0 else float("inf") if mean > 0 else 1.0
        print(f"| {name} | {len(rows)} | {mean:.4f} | {median:.4f} | "
              f"{fmt(sum(sp) / len(sp) if sp else None)} | {miss:.4f} | {ratio:.2f} | "
              f"{fmt(sum(tess) / len(tess) if tess else None)} | "
              f"{fmt(sum(tess_f) / len(tess_f) if tess_f else None)} | "
              f"{sum(s.seconds for s in rows) / len(rows):.3f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(ALL_SETS))
    parser.add_argument("--tesseract", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--extra", action="append", default=[], help="engine option key=value")
    parser.add_argument("--verbose", action="store_true", help="print each page's text")
    parser.add_argument("--model", default=None, help="a shipped ppocr model (default: the default)")
    parser.add_argument("--corpus", type=Path, default=CORPUS["root"], help="root of the built corpus")
    parser.add_argument("--corpus-limit", type=int, default=0, help="at most this many pages per corpus set")
    parser.add_argument("--json", type=Path, help="also write per-set means here")
    args = parser.parse_args()
    CORPUS.update(root=args.corpus, limit=args.corpus_limit)
    extra = tuple(tuple(kv.split("=", 1)) for kv in args.extra)
    engine = create_engine(EngineOptions(threads=args.threads, extra=extra, model=args.model))
    scores = []
    print("| set | sample | CER | CER (spaces) | bag-F1 | s | tess CER | tess F1 |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        for page in build(name):
            score, text = score_page(engine, name, page, args.tesseract, args.threads)
            scores.append(score)
            print(f"| {name} | {page.ident} | {score.cer:.4f} | {fmt(score.cer_spaces)} | "
                  f"{score.f1:.4f} | {score.seconds:.2f} | {fmt(score.tess_cer)} | "
                  f"{fmt(score.tess_f1)} |", flush=True)
            if args.verbose:
                print(text, "\n----", flush=True)
    summary(scores)
    if args.json:
        write_json(args.json, engine, extra, scores)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
