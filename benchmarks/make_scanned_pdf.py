"""Make the 20-page scanned PDF of the searchable-PDF benchmark from the kit's PDFs.

Every page of the kit's three born-digital PDFs (13 pages: English, Chinese, a Chinese slide
deck) is rendered at 300 dpi and put through the accuracy benchmark's office-scanner model
(benchmarks/eval_sets.simulate_scan: skew, blur, noise, JPEG), then 7 of them are scanned a
second time with other seeds (a second sheet feed: other skew and noise) to make 20 pages.
Each page is stored as a scanner stores it: one greyscale JPEG (DCTDecode) at 300 dpi, no
text layer. Beside the PDF, `<name>.gt.json` lists each page's source page, ground-truth
file and whether it is CJK.

    python3 benchmarks/make_scanned_pdf.py [--out /tmp/pagerunner-scanned20]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pikepdf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_sets import DEFAULT_SEED, render_page, shared_eval_dir, simulate_scan  # noqa: E402

DPI = 300.0
RESCANS = [("maint-guide.en.p5-9", n) for n in (1, 2, 3, 4, 5)] + [("zhlipsum.p1-4", n) for n in (1, 2)]


def page_list(kit: Path) -> list[tuple[str, int, int]]:
    """(pdf stem, page, seed) for the 20 pages."""
    pages = []
    for pdf in sorted((kit / "pdfs").glob("*.pdf")):
        count = len(sorted((kit / "pdfs").glob(f"{pdf.stem}.p*.gt.txt")))
        pages += [(pdf.stem, n, DEFAULT_SEED + 97 * n + len(pdf.stem)) for n in range(1, count + 1)]
    pages += [(stem, n, DEFAULT_SEED + 1000 + 97 * n + len(stem)) for stem, n in RESCANS]
    return pages


def build(kit: Path, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    pdf = pikepdf.new()
    truth = []
    for stem, number, seed in page_list(kit):
        scan = simulate_scan(render_page(kit / "pdfs" / f"{stem}.pdf", number, DPI), seed).convert("L")
        jpeg = io.BytesIO()
        scan.save(jpeg, "JPEG", quality=75, dpi=(DPI, DPI))
        width, height = scan.size[0] * 72 / DPI, scan.size[1] * 72 / DPI
        page = pdf.add_blank_page(page_size=(width, height))
        image = pikepdf.Stream(pdf, jpeg.getvalue(), Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Image,
                               Width=scan.size[0], Height=scan.size[1], ColorSpace=pikepdf.Name.DeviceGray,
                               BitsPerComponent=8, Filter=pikepdf.Name.DCTDecode)
        name = page.add_resource(image, pikepdf.Name.XObject, pikepdf.Name("/Scan"))
        draw = [([], pikepdf.Operator("q")), ([width, 0, 0, height, 0, 0], pikepdf.Operator("cm")),
                ([name], pikepdf.Operator("Do")), ([], pikepdf.Operator("Q"))]
        page.contents_add(pikepdf.Stream(pdf, pikepdf.unparse_content_stream(draw)))
        truth.append({"page": len(truth) + 1, "source": f"{stem}.pdf", "source_page": number, "seed": seed,
                      "gt": str(kit / "pdfs" / f"{stem}.p{number:02d}.gt.txt"),
                      "cjk": stem.startswith(("zhlipsum", "packaging-tutorial.zh"))})
    path = out / "scanned20.pdf"
    pdf.save(path, deterministic_id=True)
    (out / "scanned20.gt.json").write_text(json.dumps(truth, indent=1), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/pagerunner-scanned20"))
    args = parser.parse_args()
    path = build(shared_eval_dir(), args.out)
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB, 20 pages)")


if __name__ == "__main__":
    main()
