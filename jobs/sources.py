"""Page sources: open a PDF or an image file and render one page at a time.

PDFium is not thread-safe: a source must be opened, rendered and closed on one thread
(the worker's render thread). Every failure is turned into a SourceError carrying a code
from the closed set in outputs/model.py.
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PIL import Image, ImageOps, UnidentifiedImageError

from outputs.model import ErrorCode

if TYPE_CHECKING:
    from model_cache.textlayer import TextLayer

DEFAULT_DPI = 200.0
DEFAULT_MAX_PIXELS = 40_000_000
# Above this an image file is refused without decoding it (a decompression bomb).
IMAGE_PIXEL_LIMIT = 178_956_970
MULTIFRAME_FORMATS = {"TIFF", "MPO"}
# A page or image whose short side would be rendered under this many pixels (to stay within
# --max-pixels) holds nothing legible: it is refused at once instead of being rendered and OCR'd.
MIN_RENDER_SIDE = 8


class SourceError(Exception):
    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class RenderedPage:
    image: Image.Image | None  # RGB; None when only the text layer was asked for
    width: int
    height: int
    dpi: float | None
    text_layer: TextLayer | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RenderOptions:
    dpi: float = DEFAULT_DPI
    max_pixels: int = DEFAULT_MAX_PIXELS
    want_image: bool = True
    want_text_layer: bool = False


class DocumentSource(Protocol):
    kind: str  # "pdf" | "image"
    page_count: int

    def render(self, page: int, options: RenderOptions) -> RenderedPage:
        """Render 1-based page number `page`."""
        ...

    def close(self) -> None: ...


def open_source(path: Path, passwords: tuple[str, ...] = (), data: bytes | None = None) -> DocumentSource:
    """Open a document from its path, or from its bytes (`data`, e.g. shipped to a remote worker)."""
    if data is None:
        try:
            size = path.stat().st_size
            with open(path, "rb") as fh:
                head = fh.read(1024)
        except OSError as exc:
            raise SourceError(ErrorCode.FILE_UNREADABLE, f"cannot read file: {exc.strerror or exc}") from None
    else:
        size, head = len(data), data[:1024]
    if size == 0:
        raise SourceError(ErrorCode.EMPTY_FILE, "empty file (0 bytes)")
    if _is_pdf_head(head):
        return PdfSource(path, passwords, data)
    if path.suffix.lower() == ".pdf":
        raise SourceError(ErrorCode.CORRUPT_PDF, "corrupt or not a PDF (no %PDF header)")
    return ImageSource(path, data)


def looks_like_pdf(path: Path) -> bool:
    """What open_source decides from the first KiB: a PDF header (False when unreadable)."""
    try:
        with open(path, "rb") as fh:
            return _is_pdf_head(fh.read(1024))
    except OSError:
        return False


def _is_pdf_head(head: bytes) -> bool:
    return b"%PDF-" in head


class PdfSource:
    kind = "pdf"

    def __init__(self, path: Path, passwords: tuple[str, ...] = (), data: bytes | None = None):
        import pypdfium2 as pdfium

        self._pdfium = pdfium
        self.path = path
        self._data = data  # PDFium reads lazily from these bytes: keep them alive
        self.doc = self._open(path, passwords)
        self.page_count = len(self.doc)
        if self.page_count == 0:
            self.close()
            raise SourceError(ErrorCode.EMPTY_DOCUMENT, "the PDF has no pages")

    def _open(self, path: Path, passwords: tuple[str, ...]):
        last_error = ""
        for password in (None, *passwords):
            try:
                return self._pdfium.PdfDocument(self._data if self._data is not None else str(path),
                                                password=password)
            except self._pdfium.PdfiumError as exc:
                last_error = str(exc)
                if not (_says_password(last_error) and self._encrypted()):
                    break  # only a real password problem is worth another password
            except (OSError, ValueError) as exc:
                raise SourceError(ErrorCode.FILE_UNREADABLE, f"cannot read file: {exc}") from None
        # PDFium's last error is global and not reset: trust "password" only for an encrypted file.
        if _says_password(last_error) and self._encrypted():
            if passwords:
                raise SourceError(ErrorCode.INCORRECT_PASSWORD,
                                  f"incorrect password ({len(passwords)} tried)")
            raise SourceError(ErrorCode.PASSWORD_REQUIRED,
                              "the PDF is encrypted: a password is required (--password / --passwords-file)")
        if "Success" in last_error or self._declares_no_pages():
            raise SourceError(ErrorCode.EMPTY_DOCUMENT, "the PDF has no pages (or none that can be read)")
        raise SourceError(ErrorCode.CORRUPT_PDF, f"corrupt PDF: {_short(last_error)}")

    def _declares_no_pages(self) -> bool:
        data = self._data if self._data is not None else _read_capped(self.path)
        return (re.search(rb"/Count\s+0\b", data) is not None
                and re.search(rb"/Type\s*/Page(?![s\w])", data) is None)

    def _encrypted(self) -> bool:
        if self._data is not None:
            return _declares_encryption(self._data)
        return _is_encrypted(self.path)

    def render(self, page: int, options: RenderOptions) -> RenderedPage:
        try:
            pdf_page = self.doc[page - 1]
        except Exception as exc:  # pypdfium2 raises PdfiumError("Failed to load page.")
            raise SourceError(ErrorCode.PAGE_LOAD_FAILED, f"cannot load page {page}: {_short(str(exc))}") from None
        try:
            width_pt, height_pt = pdf_page.get_size()
            scale, notes = _capped_scale(width_pt, height_pt, options.dpi, options.max_pixels)
            _check_page_geometry(page, width_pt, height_pt, scale, options)
            width, height = max(1, round(width_pt * scale)), max(1, round(height_pt * scale))
            if pdf_page.get_rotation() in (90, 270):
                width, height = height, width
            text_layer = None
            if options.want_text_layer:
                # numpy and the layout stage: imported with the first text layer read, not with the job
                from model_cache.textlayer import extract_text_layer

                text_layer = extract_text_layer(pdf_page, scale)
            image = None
            if options.want_image:
                bitmap = pdf_page.render(scale=scale, may_draw_forms=True)
                image = bitmap.to_pil().convert("RGB")
                width, height = image.size
                bitmap.close()
            return RenderedPage(image, width, height, scale * 72.0, text_layer, notes)
        except SourceError:
            raise
        except MemoryError:
            raise SourceError(ErrorCode.RENDER_FAILED, f"out of memory rendering page {page}") from None
        except Exception as exc:
            raise SourceError(ErrorCode.RENDER_FAILED, f"cannot render page {page}: {_short(str(exc))}") from None
        finally:
            pdf_page.close()

    def close(self) -> None:
        doc, self.doc = getattr(self, "doc", None), None
        if doc is not None:
            doc.close()


class ImageSource:
    kind = "image"

    def __init__(self, path: Path, data: bytes | None = None):
        self.path = path
        self.image = self._open(io.BytesIO(data) if data is not None else path)
        self.page_count = getattr(self.image, "n_frames", 1) if self.image.format in MULTIFRAME_FORMATS else 1

    @staticmethod
    def _open(path: Path | io.BytesIO) -> Image.Image:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                image = Image.open(path)  # reads the header only
        except Image.DecompressionBombError as exc:
            raise SourceError(ErrorCode.IMAGE_TOO_LARGE, f"image too large: {_short(str(exc))}") from None
        except UnidentifiedImageError:
            raise SourceError(ErrorCode.UNSUPPORTED_FORMAT, "not a PDF or a supported image format") from None
        except OSError as exc:
            raise SourceError(ErrorCode.CORRUPT_IMAGE, f"corrupt image: {_short(str(exc))}") from None
        width, height = image.size
        if width * height > IMAGE_PIXEL_LIMIT:
            image.close()
            raise SourceError(ErrorCode.IMAGE_TOO_LARGE,
                              f"image too large ({width}x{height} px > {IMAGE_PIXEL_LIMIT:,} px limit)")
        return image

    def render(self, page: int, options: RenderOptions) -> RenderedPage:
        if not 1 <= page <= self.page_count:
            raise SourceError(ErrorCode.PAGE_LOAD_FAILED, f"no frame {page} in this image")
        notes: list[str] = []
        try:
            self.image.seek(page - 1)
            frame = self.image
            width, height = frame.size
            if width * height > IMAGE_PIXEL_LIMIT:
                raise SourceError(ErrorCode.IMAGE_TOO_LARGE,
                                  f"frame {page} too large ({width}x{height} px)")
            _check_image_geometry(page, width, height, options.max_pixels)
            if width * height > options.max_pixels and frame.format == "JPEG":
                frame.draft("RGB", _fit(width, height, options.max_pixels))
            frame.load()
            upright = ImageOps.exif_transpose(frame)
            rgb = _to_rgb(upright)
        except SourceError:
            raise
        except MemoryError:
            raise SourceError(ErrorCode.IMAGE_TOO_LARGE, f"out of memory decoding frame {page}") from None
        except (OSError, ValueError, SyntaxError) as exc:
            raise SourceError(ErrorCode.CORRUPT_IMAGE, f"truncated or corrupt image: {_short(str(exc))}") from None
        if rgb.width * rgb.height > options.max_pixels:
            size = _fit(rgb.width, rgb.height, options.max_pixels)
            notes.append(f"downscaled from {rgb.width}x{rgb.height} to {size[0]}x{size[1]} px (--max-pixels)")
            rgb = rgb.resize(size, Image.Resampling.LANCZOS)
        dpi = _image_dpi(frame)
        return RenderedPage(rgb if options.want_image else None, rgb.width, rgb.height, dpi, None, notes)

    def close(self) -> None:
        self.image.close()


def _to_rgb(image: Image.Image) -> Image.Image:
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        image = image.point(lambda v: v / 256).convert("L")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")


def _image_dpi(image: Image.Image) -> float | None:
    dpi = image.info.get("dpi")
    try:
        value = float(dpi[0]) if dpi else None
    except (TypeError, ValueError):
        return None
    return value if value and math.isfinite(value) and value > 1 else None


def _capped_scale(width_pt: float, height_pt: float, dpi: float, max_pixels: int) -> tuple[float, list[str]]:
    scale = dpi / 72.0
    pixels = width_pt * scale * height_pt * scale
    if pixels <= max_pixels:
        return scale, []
    # PDFium rounds the bitmap size up: keep a small margin so the cap really holds.
    capped = 0.995 * math.sqrt(max_pixels / max(width_pt * height_pt, 1e-6))
    note = (f"rendered at {capped * 72:.0f} dpi instead of {dpi:.0f}: the page would be "
            f"{pixels / 1e6:.0f} MP (--max-pixels {max_pixels / 1e6:.0f} MP)")
    return capped, [note]


def _check_page_geometry(page: int, width_pt: float, height_pt: float, scale: float,
                         options: RenderOptions) -> None:
    """Refuse a page whose size is not a size, or that cannot be rendered legibly within the pixel budget.

    Runs before anything is allocated: a 595 x 2,147,483,648 pt page would otherwise become a
    4 x 12,000,000 px bitmap that no engine can read (and that once killed a worker after 30 s).
    """
    if not all(math.isfinite(v) and v > 0 for v in (width_pt, height_pt, scale)):
        raise SourceError(ErrorCode.PAGE_LOAD_FAILED,
                          f"page {page} has an invalid size ({width_pt!r} x {height_pt!r} pt)")
    short = min(width_pt, height_pt) * scale
    if short >= MIN_RENDER_SIDE:
        return
    if min(width_pt, height_pt) * options.dpi / 72.0 >= MIN_RENDER_SIDE:  # the pixel budget did it
        raise SourceError(ErrorCode.IMAGE_TOO_LARGE,
                          f"page {page} is {width_pt:.0f} x {height_pt:.0f} pt: within --max-pixels "
                          f"{options.max_pixels / 1e6:.0f} MP its short side would be {short:.1f} px, "
                          "too small to read")
    raise SourceError(ErrorCode.PAGE_LOAD_FAILED,
                      f"page {page} is {width_pt:g} x {height_pt:g} pt: under {MIN_RENDER_SIDE} px "
                      f"on one side at {options.dpi:.0f} dpi, nothing to read")


def _check_image_geometry(page: int, width: int, height: int, max_pixels: int) -> None:
    """The image-file twin of _check_page_geometry, from the header alone (before decoding)."""
    if width * height <= max_pixels:
        return
    short = min(width, height) * math.sqrt(max_pixels / (width * height))
    if short < MIN_RENDER_SIDE:
        raise SourceError(ErrorCode.IMAGE_TOO_LARGE,
                          f"frame {page} is {width}x{height} px: within --max-pixels "
                          f"{max_pixels / 1e6:.0f} MP its short side would be {short:.1f} px, too small to read")


def _fit(width: int, height: int, max_pixels: int) -> tuple[int, int]:
    factor = math.sqrt(max_pixels / (width * height))
    return max(1, int(width * factor)), max(1, int(height * factor))


def _says_password(message: str) -> bool:
    return "password" in message.lower()


def _read_capped(path: Path) -> bytes:
    """The whole file if small, else its first and last MiB (trailer, xref, catalog live there)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            return fh.read() if size <= 64 << 20 else fh.read(1 << 20) + _tail(fh, size)
    except OSError:
        return b""


def _is_encrypted(path: Path) -> bool:
    """True when the file declares an /Encrypt dictionary that points at an object."""
    return _declares_encryption(_read_capped(path))


def _declares_encryption(data: bytes) -> bool:
    return b"/Encrypt" in data and b"obj" in data and b"%PDF-" in data[:1024]


def _tail(fh, size: int) -> bytes:
    fh.seek(max(0, size - (1 << 20)))
    return fh.read()


def _short(message: str, limit: int = 200) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"
