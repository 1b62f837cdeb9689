"""Build test PDFs with pypdfium2's raw API: a scan (one page-sized image) with optional text on top."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image


def add_text(doc, page, text: str, x: float, y: float, size: float = 12.0, invisible: bool = False,
             font: str = "Helvetica", scale: float = 1.0) -> None:
    """`text` at (x, y) in `font` at `size` points; `scale` > 1 draws it larger by its matrix
    instead (a PDF that sets every font at 1 pt does so)."""
    obj = pdfium_c.FPDFPageObj_NewTextObj(doc.raw, font.encode(), ctypes.c_float(size))
    encoded = (text + "\0").encode("utf-16-le")
    buffer = ctypes.create_string_buffer(encoded, len(encoded))
    pdfium_c.FPDFText_SetText(obj, ctypes.cast(buffer, ctypes.POINTER(pdfium_c.FPDF_WCHAR)))
    if invisible:
        pdfium_c.FPDFTextObj_SetTextRenderMode(obj, pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE)
    pdfium_c.FPDFPageObj_Transform(obj, scale, 0, 0, scale, x, y)
    pdfium_c.FPDFPage_InsertObject(page.raw, obj)


def scanned_pdf(path: Path, image: Image.Image, lines: list[str] = (), invisible: bool = True,
                width_pt: float = 595.0, height_pt: float = 842.0) -> Path:
    """One page covered by `image`, with `lines` of text drawn over it (invisibly, like an OCR layer)."""
    doc = pdfium.PdfDocument.new()
    page = doc.new_page(width_pt, height_pt)
    picture = pdfium.PdfImage.new(doc)
    bitmap = pdfium.PdfBitmap.from_pil(image.convert("RGB"))
    picture.set_bitmap(bitmap)
    picture.set_matrix(pdfium.PdfMatrix().scale(width_pt, height_pt))
    page.insert_obj(picture)
    for number, line in enumerate(lines):
        add_text(doc, page, line, 40, height_pt - 60 - 16 * number, invisible=invisible)
    page.gen_content()
    page.close()
    doc.save(str(path))
    doc.close()
    return path
