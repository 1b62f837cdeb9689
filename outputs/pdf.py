"""Searchable PDFs: the input's own pages or images with an invisible text layer on OCR'd pages.

pikepdf (qpdf) does the PDF work: it copies a PDF input's objects as they are (content
streams, images and fonts are never decoded or re-encoded: stream_decode_level none), adds
one content stream per OCR'd page wrapped around the original ones with q/Q, and writes
valid cross-reference tables; pages read from their own text layer, failed pages and pages
not asked for are left as they were, and the document's Info and XMP metadata are kept.
Image inputs become one page per frame at their true size (their dpi; `assumed_dpi` when
they declare none): JPEG files are embedded as they are (DCTDecode), other images as their
exact pixels (Flate), placed so the page shows them as the OCR read them (EXIF orientation
applied, a sideways or upside-down scan turned upright).
"""

from __future__ import annotations

import io
import zlib
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO, Iterable

import pikepdf
from pikepdf import Array, Dictionary, Name
from PIL import Image

from outputs.model import PageResult
from outputs.pdf_font import GlyphlessFont
from outputs.pdfium_pages import each_page
from outputs.pdf_text import PageFrame, page_transform, text_operators

FONT_PREFIX = "PrOCR"


def needs_text(result: PageResult) -> bool:
    return result.status == "ok" and result.mode == "ocr" and bool(result.text.strip())


Source = bytes | Path  # the input file, as its bytes or its path (read lazily: a PDF may be huge)


def _opened(source: Source):
    return io.BytesIO(source) if isinstance(source, bytes) else source


def pdf_password(source: Source, passwords: tuple[str, ...]) -> str | None:
    """The first of no password and `passwords` that PDFium (which rendered the pages) opens
    the PDF with; None when none does (the writer then fails with a password error)."""
    import pypdfium2 as pdfium

    for password in (None, *passwords):
        try:
            pdfium.PdfDocument(source if isinstance(source, bytes) else str(source), password=password).close()
            return password
        except pdfium.PdfiumError:
            continue
    return None


def write_pdf_input(source: Source, pages: Iterable[PageResult], out: BinaryIO,
                    password: str | None = None, has_text: frozenset[int] = frozenset()) -> None:
    """The PDF `source` with a text layer added on each page of `pages` that was OCR'd, except
    the pages in `has_text` (numbers of pages that carry a real text layer of their own, OCR'd
    because the run ignored it: a second layer would double their text). `pages` is read twice,
    one page at a time (a stored document's pages stream from the store)."""
    numbers = sorted({r.page for r in pages if needs_text(r) and r.page not in has_text})
    with pikepdf.open(_opened(source), password=password or "") as pdf:
        frames = _pdf_frames(source, numbers, password)
        font = GlyphlessFont(pdf) if numbers else None
        for result in pages:
            if result.page in frames and needs_text(result) and result.page <= len(pdf.pages):
                _add_text_layer(pdf, pdf.pages[result.page - 1], result, frames[result.page], font)
        if font is not None:
            font.finish()
        # A PDF that needed a password stays behind it (AES-256; the owner password is not
        # known, so the same one); an owner-password-only PDF is written unencrypted.
        locked = pikepdf.Encryption(user=password, owner=password, R=6, allow=pdf.allow) \
            if password and pdf.is_encrypted else None
        _save(pdf, out, locked)


def write_image_input(source: Source, pages: list[PageResult], out: BinaryIO,
                      assumed_dpi: float) -> None:
    """One page per frame of the image file `source`, each with its text layer."""
    results = {r.page: r for r in pages}
    pdf = pikepdf.new()
    font = GlyphlessFont(pdf) if any(needs_text(r) for r in pages) else None
    with Image.open(_opened(source)) as image:
        frames = getattr(image, "n_frames", 1) if image.format in ("TIFF", "MPO") else 1
        jpeg = _bytes(source) if image.format == "JPEG" else None
        for index in range(frames):
            image.seek(index)
            result = results.get(index + 1)
            turn = result.rotation if result is not None and result.status == "ok" else 0
            page = _image_page(pdf, image, jpeg, assumed_dpi, turn)
            if result is not None and needs_text(result) and font is not None:
                box = page.mediabox
                frame = PageFrame(float(box[0]), float(box[1]), float(box[2]), float(box[3]))
                # The page already shows the upright image the OCR read: no turn left to undo.
                _add_text_layer(pdf, page, replace(result, rotation=0), frame, font)
    if font is not None:
        font.finish()
    pdf.docinfo[Name.Producer] = "pagerunner"
    _save(pdf, out)


def _save(pdf: pikepdf.Pdf, out: BinaryIO, encryption: pikepdf.Encryption | None = None) -> None:
    if encryption is not None:  # encrypting rewrites every stream anyway; qpdf then decides the decoding
        pdf.save(out, fix_metadata_version=False, encryption=encryption)
        return
    pdf.save(out, stream_decode_level=pikepdf.StreamDecodeLevel.none, recompress_flate=False,
             fix_metadata_version=False, deterministic_id=True, encryption=False)


def _bytes(source: Source) -> bytes:
    return source if isinstance(source, bytes) else source.read_bytes()


def _pdf_frames(source: Source, numbers: list[int], password: str | None) -> dict[int, PageFrame]:
    """Each page's box and /Rotate as PDFium renders it (the pixels the OCR saw)."""
    return {number: PageFrame(*page.get_bbox(), rotate=page.get_rotation() % 360)
            for number, page in each_page(source, numbers, password)}


def _add_text_layer(pdf: pikepdf.Pdf, page: pikepdf.Page, result: PageResult, frame: PageFrame,
                    font: GlyphlessFont) -> None:
    name = page.add_resource(font.obj, Name.Font, _free_name(page, Name.Font, FONT_PREFIX))
    ops = text_operators(result, page_transform(result, frame), name, font.cids)
    page.contents_add(pikepdf.Stream(pdf, b"q\n"), prepend=True)
    layer = b"Q\n" + pikepdf.unparse_content_stream(ops)
    page.contents_add(pikepdf.Stream(pdf, zlib.compress(layer), Filter=Name.FlateDecode))


def _free_name(page: pikepdf.Page, kind: Name, prefix: str) -> Name:
    """A resource name the page does not use yet (the same on every run: pikepdf's own prefix
    names are random, and an export must give the same bytes as the run)."""
    used = set(page.resources.get(kind, Dictionary()).keys()) if Name.Resources in page.obj else set()
    n = 1
    while f"/{prefix}{n}" in used:
        n += 1
    return Name(f"/{prefix}{n}")


# --- image inputs -----------------------------------------------------------------------

_EXIF_TURNS = {  # EXIF orientation -> (a, b, c, d) with upright = (a*x + b*y, c*x + d*y) + shift
    2: (-1, 0, 0, 1), 3: (-1, 0, 0, -1), 4: (1, 0, 0, -1), 5: (0, 1, 1, 0),
    6: (0, -1, 1, 0), 7: (0, -1, -1, 0), 8: (0, 1, -1, 0),
}


def _image_page(pdf: pikepdf.Pdf, frame: Image.Image, jpeg: bytes | None, assumed_dpi: float,
                turn: int = 0) -> pikepdf.Page:
    """A page showing the frame as the OCR read it: EXIF orientation applied, then turned
    clockwise by `turn` (the engine's rotation: a scan fed sideways or upside down comes out
    upright, and its text runs left to right in the page's own coordinates, as readers expect)."""
    xobject = _image_xobject(pdf, frame, jpeg if frame.format == "JPEG" else None)
    orientation = frame.getexif().get(0x0112, 1)
    w, h = frame.size
    upright_w, upright_h = (h, w) if orientation in (5, 6, 7, 8) else (w, h)
    dpi_x, dpi_y = _dpi(frame, assumed_dpi)
    k = (turn // 90) % 4
    shown_w, shown_h = (upright_h, upright_w) if k % 2 else (upright_w, upright_h)
    page_w, page_h = shown_w * 72.0 / (dpi_y if k % 2 else dpi_x), shown_h * 72.0 / (dpi_x if k % 2 else dpi_y)
    page = pdf.add_blank_page(page_size=(page_w, page_h))
    name = page.add_resource(xobject, Name.XObject, Name("/Im0"))
    matrix = _placement(orientation, k, w, h, page_w / shown_w, page_h / shown_h)
    draw = [([], pikepdf.Operator("q")), (matrix, pikepdf.Operator("cm")),
            ([name], pikepdf.Operator("Do")), ([], pikepdf.Operator("Q"))]
    page.contents_add(pikepdf.Stream(pdf, pikepdf.unparse_content_stream(draw)))
    return page


def _dpi(frame: Image.Image, assumed: float) -> tuple[float, float]:
    dpi = frame.info.get("dpi")
    try:
        x, y = float(dpi[0]), float(dpi[1])
    except (TypeError, ValueError, IndexError):
        return assumed, assumed
    if not (1 < x < 1e5 and 1 < y < 1e5):
        return assumed, assumed
    return x, y


def _placement(orientation: int, k: int, w: int, h: int, sx: float, sy: float) -> list[float]:
    """The `cm` matrix drawing the image's unit square so it shows as the upright image the
    OCR read (ImageOps.exif_transpose, then turned clockwise k*90 degrees), `sx`/`sy` points
    per shown pixel."""
    a, b, c, d = _EXIF_TURNS.get(orientation, (1, 0, 0, 1))
    upright_w, upright_h = (h, w) if orientation in (5, 6, 7, 8) else (w, h)
    shown_h = upright_w if k % 2 else upright_h

    def shown(x: float, y: float) -> tuple[float, float]:  # raw pixel -> shown pixel
        u = a * x + b * y + (upright_w if (a < 0 or b < 0) else 0)
        v = c * x + d * y + (upright_h if (c < 0 or d < 0) else 0)
        if k == 1:
            return upright_h - v, u
        if k == 2:
            return upright_w - u, upright_h - v
        if k == 3:
            return v, upright_w - u
        return u, v

    def point(s: float, t: float) -> tuple[float, float]:  # unit square -> page points
        u, v = shown(s * w, (1 - t) * h)
        return u * sx, (shown_h - v) * sy

    origin, ex, ey = point(0, 0), point(1, 0), point(0, 1)
    return [ex[0] - origin[0], ex[1] - origin[1], ey[0] - origin[0], ey[1] - origin[1], *origin]


def _image_xobject(pdf: pikepdf.Pdf, frame: Image.Image, jpeg: bytes | None) -> pikepdf.Stream:
    w, h = frame.size
    common = dict(Type=Name.XObject, Subtype=Name.Image, Width=w, Height=h)
    if jpeg is not None and frame.mode in ("L", "RGB", "CMYK"):
        stream = pikepdf.Stream(pdf, jpeg, Filter=Name.DCTDecode, BitsPerComponent=8,
                                ColorSpace=_colour_space(pdf, frame, frame.mode), **common)
        if frame.mode == "CMYK" and "adobe" in frame.info:  # Adobe CMYK JPEGs are stored inverted
            stream.Decode = Array([1, 0] * 4)
        return stream
    pixels, mode, bits, alpha = _raw_pixels(frame)
    stream = pikepdf.Stream(pdf, zlib.compress(pixels), Filter=Name.FlateDecode, BitsPerComponent=bits,
                            ColorSpace=_colour_space(pdf, frame, mode), **common)
    if alpha is not None:
        stream.SMask = pikepdf.Stream(pdf, zlib.compress(alpha), Filter=Name.FlateDecode,
                                      BitsPerComponent=8, ColorSpace=Name.DeviceGray, **common)
    return stream


def _raw_pixels(frame: Image.Image) -> tuple[bytes, str, int, bytes | None]:
    """The frame's samples as PDF wants them: (bytes, colour mode, bits, alpha or None)."""
    mode = frame.mode
    if mode == "1":
        return frame.tobytes(), "1", 1, None
    if mode in ("I;16", "I;16B", "I;16L"):
        return frame.tobytes("raw", "I;16B"), "L", 16, None
    if mode == "P":
        frame = frame.convert("RGBA" if "transparency" in frame.info else "RGB")
        mode = frame.mode
    if mode in ("LA", "RGBA", "PA"):
        base = frame.convert("L" if mode == "LA" else "RGB")
        return base.tobytes(), base.mode, 8, frame.getchannel("A").tobytes()
    if mode not in ("L", "RGB", "CMYK"):
        frame = frame.convert("RGB")  # other modes (I, F, YCbCr, LAB) have no lossless PDF form
        mode = "RGB"
    return frame.tobytes(), mode, 8, None


def _colour_space(pdf: pikepdf.Pdf, frame: Image.Image, mode: str):
    components = {"1": 1, "L": 1, "RGB": 3, "CMYK": 4}[mode]
    icc = frame.info.get("icc_profile")
    if icc and mode != "1":
        profile = pikepdf.Stream(pdf, zlib.compress(icc), Filter=Name.FlateDecode, N=components)
        return Array([Name.ICCBased, profile])
    return {1: Name.DeviceGray, 3: Name.DeviceRGB, 4: Name.DeviceCMYK}[components]
