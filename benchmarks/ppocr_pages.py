"""The ppocr engine's own page set (besides ../shared/eval): real born-digital PDFs found on
this machine rendered at 200 dpi, and synthetic layouts drawn with PIL whose ground truth
is in reading order (two-column article, table, receipt, slide). Every page also comes in a
'scanned' variant: slight skew, blur, noise, JPEG (seeded, so runs are comparable)."""

from __future__ import annotations

import io
import re
import textwrap  # noqa: F401  (slide bullets)
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

DPI = 200
SYSTEM_PDFS = (Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
               Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"))
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")


@dataclass
class Page:
    ident: str
    reference: str
    cjk: bool
    load: Callable[[], Image.Image]


def render_pdf_page(path: Path, index: int, dpi: float = DPI) -> Image.Image:
    import pypdfium2 as pdfium
    doc = pdfium.PdfDocument(str(path))
    try:
        return doc[index].render(scale=dpi / 72).to_pil().convert("RGB")
    finally:
        doc.close()


def pdf_text(path: Path, index: int) -> str:
    import pypdfium2 as pdfium
    doc = pdfium.PdfDocument(str(path))
    try:
        return doc[index].get_textpage().get_text_bounded().replace("\r\n", "\n")
    finally:
        doc.close()


def system_pdf_pages(max_pages: int = 4) -> list[Page]:
    pages = []
    for path in SYSTEM_PDFS:
        if not path.is_file():
            continue
        import pypdfium2 as pdfium
        count = len(pdfium.PdfDocument(str(path)))
        taken = 0
        for index in range(count):
            text = pdf_text(path, index)
            if len(re.sub(r"\s", "", text)) < 400:  # covers, blank and figure pages
                continue
            pages.append(Page(f"{path.stem} p{index + 1}", text, False,
                              lambda p=path, i=index: render_pdf_page(p, i)))
            taken += 1
            if taken >= max_pages:
                break
    return pages


def _font(size_pt: float, name: str = "DejaVuSerif.ttf") -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_DIR / name), int(round(size_pt * DPI / 72)))


def _corpus() -> list[str]:
    """Paragraphs of real English prose from the system PDFs' text layers."""
    paras = []
    for path in SYSTEM_PDFS:
        if path.is_file():
            for index in range(2, 8):
                text = re.sub(r"\s+", " ", pdf_text(path, index))
                paras += [s.strip() for s in re.split(r"(?<=\.) (?=[A-Z])", text)
                          if len(s) > 60 and ". . ." not in s and "..." not in s]
    return paras or ["The quick brown fox jumps over the lazy dog. " * 4]


def _wrap(text: str, font: ImageFont.FreeTypeFont, width_px: int) -> list[str]:
    lines, current = [], ""
    for word in text.split():
        trial = f"{current} {word}" if current else word
        if current and font.getlength(trial) > width_px:
            lines.append(current)
            current = word
        else:
            current = trial
    return lines + ([current] if current else [])


def _draw_paragraphs(draw: ImageDraw.ImageDraw, x: int, y: int, width_px: int, paras: list[str],
                     font: ImageFont.FreeTypeFont, bottom: int) -> tuple[list[str], int]:
    lines_out, pitch = [], int(font.size * 1.25)
    for para in paras:
        for line in _wrap(para, font, width_px):
            if y + pitch > bottom:
                return lines_out, y
            draw.text((x, y), line, font=font, fill=0)
            lines_out.append(line)
            y += pitch
        y += pitch // 2
    return lines_out, y


def two_column_page(seed: int) -> tuple[Image.Image, str]:
    rng = np.random.default_rng(seed)
    corpus = _corpus()
    w, h = int(8.27 * DPI), int(11.69 * DPI)
    img = Image.new("L", (w, h), 255)
    draw = ImageDraw.Draw(img)
    title = "Notes on Abstract Syntax Notation and Shared Types"
    draw.text((int(1.0 * DPI), int(0.8 * DPI)), title, font=_font(15, "DejaVuSerif-Bold.ttf"), fill=0)
    picks = [corpus[i] for i in rng.choice(len(corpus), size=min(14, len(corpus)), replace=False)]
    font = _font(9.5)
    col_w = int(3.0 * DPI)
    left, y = _draw_paragraphs(draw, int(0.9 * DPI), int(1.5 * DPI), col_w, picks[:7], font, h - DPI)
    right, _ = _draw_paragraphs(draw, int(0.9 * DPI) + col_w + int(0.4 * DPI), int(1.5 * DPI), col_w,
                                picks[7:], font, h - DPI)
    footer = "Page 1 of 1"
    draw.text((w // 2 - 100, h - int(0.6 * DPI)), footer, font=_font(9), fill=0)
    return img.convert("RGB"), "\n".join([title, *left, *right, footer])


def table_page(seed: int) -> tuple[Image.Image, str]:
    rng = np.random.default_rng(seed)
    w, h = int(8.27 * DPI), int(5.0 * DPI)
    img = Image.new("L", (w, h), 255)
    draw = ImageDraw.Draw(img)
    font, bold = _font(10, "DejaVuSans.ttf"), _font(10, "DejaVuSans-Bold.ttf")
    items = ["Paper clips", "Stapler", "Printer toner", "Notebook A5", "Envelopes C4", "Markers",
             "Desk lamp", "Cable ties", "USB stick 32 GB", "Folders"]
    header = ["Item", "Quantity", "Unit price", "Total"]
    xs = [int(0.8 * DPI), int(3.6 * DPI), int(4.9 * DPI), int(6.4 * DPI)]
    y, lines = int(0.6 * DPI), []
    for x, cell in zip(xs, header):
        draw.text((x, y), cell, font=bold, fill=0)
    lines.append(" ".join(header))
    for item in rng.choice(items, size=8, replace=False):
        y += int(0.32 * DPI)
        qty, price = int(rng.integers(1, 40)), float(rng.integers(50, 5000)) / 100
        row = [str(item), str(qty), f"{price:.2f}", f"{qty * price:.2f}"]
        for x, cell in zip(xs, row):
            draw.text((x, y), cell, font=font, fill=0)
        lines.append(" ".join(row))
    return img.convert("RGB"), "\n".join(lines)


def receipt_page(seed: int) -> tuple[Image.Image, str]:
    rng = np.random.default_rng(seed)
    w, h = int(3.2 * DPI), int(6.0 * DPI)
    img = Image.new("L", (w, h), 255)
    draw = ImageDraw.Draw(img)
    font = _font(9, "DejaVuSansMono.ttf")
    goods = ["MILK 1L", "BREAD", "APPLES 1KG", "COFFEE", "BUTTER", "EGGS 10", "RICE 2KG", "TEA"]
    lines = ["CORNER SHOP", "12 Station Road", "Receipt 0042"]
    total = 0.0
    for g in rng.choice(goods, size=6, replace=False):
        price = float(rng.integers(50, 1200)) / 100
        total += price
        lines.append(f"{g:<14}{price:>7.2f}")
    lines += [f"{'TOTAL':<14}{total:>7.2f}", "Thank you!"]
    y = int(0.3 * DPI)
    for line in lines:
        draw.text((int(0.2 * DPI), y), line, font=font, fill=0)
        y += int(font.size * 1.4)
    return img.convert("RGB"), "\n".join(lines)


def slide_page(seed: int) -> tuple[Image.Image, str]:
    corpus = _corpus()
    rng = np.random.default_rng(seed)
    w, h = int(10 * DPI / 2), int(7.5 * DPI / 2)
    img = Image.new("RGB", (w, h), (235, 240, 250))
    draw = ImageDraw.Draw(img)
    title = "Building the Package"
    draw.text((int(0.3 * DPI), int(0.2 * DPI)), title, font=_font(16, "DejaVuSans-Bold.ttf"),
              fill=(20, 40, 120))
    lines, y = [title], int(0.8 * DPI)
    for para in rng.choice(corpus, size=3, replace=False):
        text = "- " + textwrap.shorten(str(para), 60, placeholder="")
        draw.text((int(0.4 * DPI), y), text, font=_font(10, "DejaVuSans.ttf"), fill=(0, 0, 0))
        lines.append(text)
        y += int(0.35 * DPI)
    return img, "\n".join(lines)


def synthetic_pages() -> list[Page]:
    makers = {"two-column": two_column_page, "table": table_page, "receipt": receipt_page,
              "slide": slide_page}
    pages = []
    for name, make in makers.items():
        def load(make=make) -> Image.Image:
            return make(7)[0]
        pages.append(Page(f"synthetic {name}", make(7)[1], False, load))
    return pages


def simulate_scan(image: Image.Image, seed: int) -> Image.Image:
    """Skew 0.3-1.2 degrees, Gaussian blur, sensor noise, JPEG quality 55-75."""
    rng = np.random.default_rng(seed)
    angle = float(rng.uniform(0.3, 1.2)) * (1 if rng.random() < 0.5 else -1)
    gray = image.convert("L").rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255)
    gray = gray.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.5, 1.0))))
    px = np.asarray(gray, dtype=np.float32) * 0.9 + 12.0
    px += rng.normal(0.0, float(rng.uniform(6.0, 12.0)), px.shape).astype(np.float32)
    buffer = io.BytesIO()
    Image.fromarray(np.clip(px, 0, 255).astype(np.uint8), "L").save(
        buffer, "JPEG", quality=int(rng.integers(55, 76)))
    buffer.seek(0)
    with Image.open(buffer) as scanned:
        return scanned.convert("RGB")


def scanned(pages: list[Page], seed: int = 20261129) -> list[Page]:
    out = []
    for k, page in enumerate(pages):
        out.append(Page(page.ident + " (scanned)", page.reference, page.cjk,
                        lambda p=page, s=seed + k: simulate_scan(p.load(), s)))
    return out
