#!/usr/bin/env python3
"""Vertical CJK pages, which the layout corpus (benchmarks/corpus.py) has none of.

    python benchmarks/corpus_vertical.py --out /tmp/vertical            # fetch, find, render, score
    PAGERUNNER_LAYOUT_LINES=/tmp/vertical/lines python benchmarks/corpus_vertical.py --out /tmp/vertical

Source: Debian's texlive-lang-japanese (pinned version and .deb sha256 below, `apt-get download`).
Rule, not choice: every page among the first 40 of each of its PDFs whose text layer has at least
150 CJK characters and in which most CJK characters (> 50 %) are followed by the next one directly
below (same x within 0.3 of a character's width, at least half a character lower): vertical
writing. With 2022.20230122-1 that is two pages (pxrubrica's test-jlreq p2 and test-sf p1).
Each page is rendered at 200 dpi by pagerunner's renderer and scored against its text layer as
the corpus is (NFKC, whitespace removed, CER and bag-of-characters F1), pagerunner next to
RapidOCR (PP-OCRv5, the same weights). Tesseract is left out: Debian's tessdata here has no
Japanese (neither `jpn` nor `jpn_vert`).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

PACKAGE, VERSION = "texlive-lang-japanese", "2022.20230122-1"
SHA256 = "15e022f10db2a0682546d55875af91846a2f26f3811ac4e690d89bf617b9d928"
MIN_CJK, VERTICAL_SHARE, FIRST_PAGES = 150, 0.5, 40


def fetch(out: Path) -> Path:
    deb = out / f"{PACKAGE}_{VERSION}_all.deb"
    if not deb.exists():
        subprocess.run(["apt-get", "download", f"{PACKAGE}={VERSION}"], cwd=out, check=True)
    digest = hashlib.sha256(deb.read_bytes()).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{deb.name}: sha256 {digest}, expected {SHA256}")
    tree = out / "x"
    if not tree.exists():
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tree)], check=True)
    return tree


def vertical_share(textpage) -> tuple[int, float]:
    """(CJK characters, share of them followed by the next one directly below)."""
    boxes = [textpage.get_charbox(i) for i in range(textpage.count_chars())
             if "\u3040" <= textpage.get_text_range(i, 1) <= "\u9fff"]
    if len(boxes) < 2:
        return len(boxes), 0.0
    down = sum(1 for a, b in zip(boxes, boxes[1:])
               if abs(a[0] - b[0]) < 0.3 * max(a[2] - a[0], 1e-6) and a[1] - b[1] > 0.5 * (a[3] - a[1]))
    return len(boxes), down / (len(boxes) - 1)


def vertical_pages(tree: Path) -> list[tuple[Path, int]]:
    import pypdfium2 as pdfium
    found = []
    for path in sorted(Path(p) for p in glob.glob(str(tree / "usr/share/doc/**/*.pdf"), recursive=True)):
        try:
            pdf = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError:
            continue
        try:
            for n in range(min(len(pdf), FIRST_PAGES)):
                count, share = vertical_share(pdf[n].get_textpage())
                if count >= MIN_CJK and share > VERTICAL_SHARE:
                    found.append((path, n + 1))
        finally:
            pdf.close()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tools", nargs="+", default=["pagerunner", "rapidocr-v5"])
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    from jobs.sources import RenderOptions, open_source
    from layout_replay import score
    from peers import make_tool
    from runner.evaluation.evaluate import _layer_text

    pages = vertical_pages(fetch(args.out))
    tools = [make_tool(name, 1) for name in args.tools]
    print(f"{len(pages)} vertical pages in {PACKAGE} {VERSION}\n")
    print("| page | CJK chars | " + " | ".join(f"{t.name} CER / bag-F1" for t in tools) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in tools) + " |")
    for path, number in pages:
        source = open_source(path)
        try:
            rendered = source.render(number, RenderOptions(dpi=200.0, want_image=True, want_text_layer=True))
        finally:
            source.close()
        reference = _layer_text(rendered.text_layer)
        name = f"{path.parent.name}/{path.stem} p{number}"
        rendered.image.save(args.out / f"{path.stem}.p{number:03d}.png")
        cells = []
        for tool in tools:
            text = tool.ocr(rendered.image, "page", True, 200.0)
            (args.out / f"{path.stem}.p{number:03d}.{tool.name.replace(' ', '_')}.txt").write_text(text, encoding="utf-8")
            page_cer, f1 = score(reference, text)
            cells.append(f"{page_cer:.3f} / {f1:.3f}")
        cjk = sum(1 for c in reference if "\u3040" <= c <= "\u9fff")
        print(f"| {name} | {cjk} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
