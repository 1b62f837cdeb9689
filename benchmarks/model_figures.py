#!/usr/bin/env python3
"""Write model_cache/ppocr/figures.json, the measured speed and accuracy `pagerunner models list`
shows, from the JSON files of benchmark runs (nothing here is typed in by hand):

    python benchmarks/throughput.py --model ppocr-v5-mobile --model ppocr-v6-tiny ... --json T.json
    python benchmarks/ppocr_accuracy.py --model ppocr-v6-tiny --sets scans,pdfs,... --json A.json
    python benchmarks/model_figures.py --throughput T.json --accuracy A1.json A2.json ...

Pages/min comes from the throughput contender `pagerunner <model>` (or `pagerunner` for the
default model); CER per set from the accuracy run of each model with its manifest defaults
(runs with --extra settings are tuning runs and are left out).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from model_cache.ppocr.assets import BUNDLED_MODELS, DEFAULT_MODEL  # noqa: E402

OUT = REPO / "model_cache" / "ppocr" / "figures.json"


def speed(throughput: dict, model: str) -> dict:
    contenders = throughput["contenders"]
    found = contenders.get(f"pagerunner {model}") or (contenders.get("pagerunner") if model == DEFAULT_MODEL else None)
    return {"pages_per_min": found["pages_per_min"], "peak_rss_mib": found["peak_rss_mib"]} if found else {}


def accuracy(runs: list[dict], model: str) -> dict:
    sets: dict[str, dict] = {}
    for run in runs:
        if run["model"] == model and not run["extra"]:
            sets.update(run["sets"])
    if not sets:
        return {}
    found = {"mean_cer": {name: s["mean_cer"] for name, s in sets.items()}}
    if "pdfs" in sets:
        found["kit_pdfs_cer"] = sets["pdfs"]["mean_cer"]
    corpus = [s for name, s in sets.items() if name.startswith("corpus-check-")]
    if corpus:  # both copies (born-digital, simulated scan), weighted by pages
        pages = sum(s["n"] for s in corpus)
        found["corpus_check_cer"] = round(sum(s["mean_cer"] * s["n"] for s in corpus) / pages, 4)
        found["corpus_check_pages"] = pages
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--throughput", type=Path, help="throughput.py --json output (omit: no speed figures)")
    parser.add_argument("--accuracy", type=Path, nargs="+", required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    throughput = json.loads(args.throughput.read_text(encoding="utf-8")) if args.throughput else {"contenders": {}}
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in args.accuracy]
    models = {name: {**speed(throughput, name), **accuracy(runs, name)} for name in BUNDLED_MODELS}
    figures = {
        "about": ("Measured on one machine, side by side; written by benchmarks/model_figures.py from the "
                  "benchmark runs listed in figures.json. docs/benchmarks.md (section 'PP-OCRv6 tiny and the model choice') has the "
                  "full tables. CER: mean page CER after NFKC, whitespace removed."),
        "throughput": {k: throughput[k] for k in ("benchmark", "measured", "command", "machine",
                                                   "load_average", "pages", "dpi") if k in throughput},
        "accuracy": [{k: r[k] for k in ("benchmark", "measured", "command", "model")}
                     for r in runs if not r["extra"]],
        "models": models,
    }
    args.out.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
