"""Counts of the corpus (per half, language and category) as text and Markdown, and its READY note."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from corpus_layout import LAYOUT_TAGS
from report_md import markdown_table

HALVES = ("tune", "check")


def labels_of(page: dict) -> list[str]:
    """Every group a page is reported in: all, its language, each of its layout tags."""
    return ["all", page["lang"], *page["tags"]]


def group_names() -> list[str]:
    return ["all", "en", "zh", *LAYOUT_TAGS]


def count_table(pages: list[dict], documents: list[dict]) -> str:
    docs_per_half = Counter(d["half"] for d in documents)
    rows = [["documents", *[str(docs_per_half[h]) for h in HALVES], str(len(documents))]]
    for group in group_names():
        per_half = Counter(p["half"] for p in pages if group in labels_of(p))
        docs = Counter(h for h, d in {(p["half"], p["doc"]) for p in pages if group in labels_of(p)})
        if not sum(per_half.values()):
            continue
        rows.append([f"pages: {group}",
                     *[f"{per_half[h]} ({docs[h]} docs)" for h in HALVES],
                     str(sum(per_half.values()))])
    return markdown_table(["", *HALVES, "total"], rows)


def package_table(packages: list[dict], documents: list[dict], pages: list[dict]) -> str:
    docs = Counter(d["package"] for d in documents)
    doc_package = {d["id"]: d["package"] for d in documents}
    page_count = Counter(doc_package[p["doc"]] for p in pages)
    rows = [[p["name"], p["version"], p["sha256"][:16] + "…", str(p["pdfs_in_package"]),
             str(p["pdfs_pooled"]), str(docs[p["name"]]), str(page_count[p["name"]])] for p in packages]
    return markdown_table(["package", "version", ".deb sha256", "PDFs", "pooled", "in corpus", "pages"],
                          rows, "lllrrrr")


def ready_text(manifest, records: list[dict], out: Path) -> str:
    halves = Counter(r["half"] for r in records)
    return f"""pagerunner corpus (issue 12): {len(records)} pages of {len(manifest.documents)} born-digital PDFs
from {len(manifest.packages)} Debian documentation packages, chosen by benchmarks/corpus.py (seed {manifest.seed}),
split by document into tune ({halves['tune']} pages) and check ({halves['check']} pages).
Tune only on `tune`; report both.

Layout of {out}:
  pages/<half>/born/<page>.png       page rendered by pagerunner's renderer at {manifest.dpi:.0f} dpi (PNG carries the dpi)
  pages/<half>/scan/<page>.png       same page through eval_sets.simulate_scan (skew, blur, noise, JPEG; seeded per page)
  pages/<half>/<copy>/<page>.gt.txt  ground truth: the page's text layer, exactly as
                                     `pagerunner eval --against-text-layer` reads it
  pages.jsonl                        one record per page: id, doc, page, half, lang (en|zh), tags, category,
                                     package, pdf (path inside pdfs/<package>/), born, scan, gt; in seeded-subset
                                     order (corpus.subset_rank), halves interleaved: the first N of a half are
                                     the pages accuracy.py --subset N scores
  pdfs/<package>/...                 the PDFs (from debs/, checked against the manifest's sha256)
  results/                           cached OCR results of benchmarks/accuracy.py --corpus (one JSONL per tool)
  lines/                             cached pre-layout lines of pagerunner (for benchmarks/corpus_relayout.py)

Score a set:
  python benchmarks/accuracy.py --corpus {out} --halves tune --copies born --tools pagerunner tesseract rapidocr-v5 --no-docs
      (per-category tables; peers come from the cache; metric: page CER after NFKC with whitespace removed,
       mean and median over pages, mean bag-of-characters F1, and the order check mean CER <= 1.5 x (1 - bag-F1))
  pagerunner eval {out}/pages/tune/born            (GT files lie beside the images; eval's own metric:
                                                    whitespace collapsed, not removed, on English pages)
Fast loop for layout work (re-runs only the layout on cached recognised lines, seconds per half):
  python benchmarks/corpus_relayout.py --corpus {out} --halves tune --copies born

Counts (a page counts in every category it has; categories are assigned by the rules in
benchmarks/corpus_layout.py from the text layer and page objects, never by hand):
{count_table(manifest.pages, manifest.documents)}
"""


def corpus_section(root: Path, tables: str, command: str | None = None, note: str = "") -> str:
    """The docs/benchmarks.md section: what the corpus is, how it was made, and the tables."""
    import json

    from report_md import command_line, machine_facts, utc_now

    manifest = json.loads((Path(__file__).resolve().parent / "corpus_manifest.json").read_text(encoding="utf-8"))
    pages, documents = manifest["pages"], manifest["documents"]
    return "\n".join([
        "## Layout corpus: Debian documentation pages, tune and check halves (issue 12)",
        "",
        f"{len(pages)} pages of {len(documents)} born-digital PDFs from {len(manifest['packages'])} Debian "
        "documentation packages, chosen and built by `benchmarks/corpus.py` from "
        "`benchmarks/corpus_manifest.json` (package versions, .deb sha256, every document and page with "
        "its half and categories). Rebuild: `python benchmarks/corpus.py build --out /work/corpus` "
        "(downloads the named .debs with `apt-get download`, refuses any whose sha256 differs); "
        "choose again: `python benchmarks/corpus.py select` (same seed and versions give the same manifest). "
        "Held back to check the layout work, never in the corpus: " + ", ".join(manifest["held_back"]) + ".",
        "",
        "Rule (seeded, seed " + str(manifest["seed"]) + "): a seeded sample of each package's PDFs (all of "
        "the small ones), 10 seeded pages of each, kept when the text layer is real text (>= 20 non-space "
        "characters, <= 10 % unmapped glyphs, `pagerunner eval`'s rules); each layout category (and Chinese) "
        "first gets up to 40 pages (Chinese 100), rarest first, then round-robin over documents up to 520, "
        "at most 8 pages per document. Categories come from the text layer's character boxes, fonts and the "
        "page's objects (rules in `benchmarks/corpus_layout.py`); a page counts in every category it has. "
        "Halves: a seeded hash of the document's name, fixed before any OCR ran. Pages are rendered at "
        f"{manifest['dpi']:.0f} dpi by pagerunner's renderer; the `scan` copy goes through "
        "`eval_sets.simulate_scan` (0.3-1.2 deg skew, blur, noise, JPEG q55-75). Ground truth: the page's "
        "text layer as `pagerunner eval --against-text-layer` reads it, in content-stream order.",
        "",
        "Pages per category and half:",
        "",
        count_table(pages, documents),
        "",
        "Packages:",
        "",
        package_table(manifest["packages"], documents, pages),
        "",
        f"Measured {utc_now()} with {command or '`' + command_line() + '`'} (from the per-tool result "
        f"caches in `{root}/results/`). Machine: {machine_facts()}; shared with six other jobs, so no "
        "timings are given here." + (" " + note if note else ""),
        "",
        "Metric (issue 12's): text after NFKC with all whitespace removed; page CER mean / median over "
        "the pages of a category, bag-of-characters F1 mean over pages; `1.5(1-F1)` is the order bound "
        "mean CER must stay under. `issue 12` lists the conditions pagerunner misses in that row: "
        "`> tess` (mean CER above Tesseract's, English categories), `> tess/2` (Chinese: above half of "
        "Tesseract's), `> rapid` (above RapidOCR PP-OCRv5's), `order` (mean CER > 1.5(1-F1)). Tesseract: "
        "`--psm 3`, `eng`, `chi_sim+eng` on Chinese pages (tessdata_fast from Debian). RapidOCR: default "
        "settings with the PP-OCRv5 mobile ONNX weights pagerunner also uses.",
        "",
        tables,
    ])
