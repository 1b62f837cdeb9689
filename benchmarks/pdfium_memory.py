#!/usr/bin/env python3
"""How much PDFium keeps per page while a document stays open: renders every page of a PDF at
200 dpi (closing each page and bitmap, trimming the heap) and prints this process's RSS every
50 pages, with the document kept open or reopened every N pages.

    python benchmarks/pdfium_memory.py PDF [--reopen-every N]
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

import pypdfium2 as pdfium

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model_cache.heap import release_free_memory  # noqa: E402


def rss_mib() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS")) // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdf", type=Path)
    parser.add_argument("--reopen-every", type=int, default=0, help="0: keep the document open")
    parser.add_argument("--dpi", type=float, default=200)
    args = parser.parse_args()
    doc = pdfium.PdfDocument(str(args.pdf))
    for index in range(len(doc)):
        if args.reopen_every and index and index % args.reopen_every == 0:
            doc.close()
            doc = pdfium.PdfDocument(str(args.pdf))
        page = doc[index]
        bitmap = page.render(scale=args.dpi / 72)
        bitmap.to_pil().convert("RGB")
        bitmap.close()
        page.close()
        gc.collect()
        release_free_memory()
        if index % 50 == 49:
            print(f"{index + 1} pages: {rss_mib()} MiB", flush=True)


if __name__ == "__main__":
    main()
