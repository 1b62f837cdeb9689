"""A small page set from named PDF pages, laid out like the corpus (benchmarks/corpus.py) so that
`layout_replay.py --corpus DIR --half tune` scores it: for tuning on a family of documents that
no seeded set holds (a documentation class's manuals), never on a set's checking half.

    python benchmarks/probe_set.py /tmp/probe chemmacros-manual.pdf:6,9,12 chemgreek_en.pdf:3,5
    PAGERUNNER_LAYOUT_LINES=/tmp/probe/lines python benchmarks/layout_replay.py --corpus /tmp/probe \\
        --half tune --copy born --verbose --ordered

Each page is built as `corpus.py build` builds the corpus's (`corpus._build_page`: 200 dpi, its
text layer as ground truth, a simulated scan seeded by its id); a page whose text layer is no
real text by the corpus's rule (`corpus._real_text`) is skipped. Its category is `probe`.
Running the script again adds pages; those already there are kept.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from corpus import DPI, Manifest, _build_page, _real_text
from eval_sets import _page_seed, simulate_scan

from jobs.sources import RenderOptions, open_source
from runner.evaluation.evaluate import _layer_text

SCAN_SEED = 7


def page_spec(text: str) -> tuple[Path, list[int]]:
    """'path/to.pdf:1,2,5' -> (the PDF, its 1-based page numbers)."""
    path, _, pages = text.rpartition(":")
    return Path(path), [int(p) for p in pages.split(",")]


def document_id(pdf: Path) -> str:
    return f"{pdf.stem}-{hashlib.sha256(str(pdf).encode()).hexdigest()[:6]}"


def add_pages(out: Path, pdf: Path, numbers: list[int], records: dict[str, dict]) -> None:
    doc = {"id": document_id(pdf), "package": "probe", "path": str(pdf)}
    manifest = Manifest(seed=0, dpi=DPI, scan_seed=SCAN_SEED)
    source = open_source(pdf)
    try:
        for number in numbers:
            ident = f"{doc['id']}.p{number:03d}"
            if ident in records or not _real_text(source.render(number, RenderOptions(
                    dpi=DPI, want_image=False, want_text_layer=True)).text_layer):
                continue
            page = {"id": ident, "doc": doc["id"], "page": number, "half": "tune", "lang": "en",
                    "category": "probe", "tags": ["probe"]}
            records[ident] = _build_page(source, page, doc, out, manifest, _layer_text, simulate_scan,
                                         _page_seed, RenderOptions)
    finally:
        source.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("pages", nargs="+", help="PDF:PAGE,PAGE,...")
    args = parser.parse_args()
    index = args.out / "pages.jsonl"
    records = {}
    if index.exists():
        records = {r["id"]: r for r in map(json.loads, index.read_text(encoding="utf-8").splitlines())}
    for spec in args.pages:
        add_pages(args.out, *page_spec(spec), records)
    args.out.mkdir(parents=True, exist_ok=True)
    index.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records.values()), encoding="utf-8")
    print(f"{len(records)} pages in {index}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
