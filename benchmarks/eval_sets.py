"""The accuracy benchmark's sets, built from the shared evaluation kit (../shared/eval).

- scans:    5 page images with human transcriptions (3 of them rotated copies of one page)
- lines:    60 UW-III text-line images
- pdfs:     13 born-digital PDF pages rendered at 200 dpi; the text layer is the ground truth
- degraded: the same 13 pages "scanned": slight skew, blur, sensor noise, JPEG; seeded, so every
            run (and every tool) sees the same pixels
"""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
from PIL import Image, ImageFilter

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from jobs.sources import RenderOptions, open_source  # noqa: E402
from runner.evaluation.groundtruth import read_ground_truth  # noqa: E402
from runner.evaluation.metrics import is_cjk_text  # noqa: E402

SET_NAMES = ("scans", "lines", "pdfs", "degraded")
DEFAULT_DPI = 200.0
DEFAULT_SEED = 20261129


@dataclass
class Sample:
    set_name: str
    ident: str  # e.g. "maint-guide.en.p5-9 p3"
    kind: str  # "page" | "line"
    reference: str
    cjk: bool  # the document is CJK (drives Tesseract's language choice)
    load: Callable[[], Image.Image]
    dpi: float | None


def shared_eval_dir() -> Path:
    env = os.environ.get("PAGERUNNER_SHARED")
    root = Path(env) if env else REPO.parent / "shared"
    kit = root / "eval"
    if not kit.is_dir():
        raise SystemExit(f"evaluation kit not found at {kit} (set PAGERUNNER_SHARED)")
    return kit


def build_sets(names: tuple[str, ...], kit: Path, dpi: float = DEFAULT_DPI,
               seed: int = DEFAULT_SEED) -> dict[str, list[Sample]]:
    builders = {"scans": lambda: list(_image_samples(kit / "scans", "scans", "page")),
                "lines": lambda: list(_image_samples(kit / "lines", "lines", "line")),
                "pdfs": lambda: list(_pdf_samples(kit / "pdfs", dpi, None)),
                "degraded": lambda: list(_pdf_samples(kit / "pdfs", dpi, seed))}
    return {name: builders[name]() for name in names}


def _image_samples(folder: Path, set_name: str, kind: str) -> Iterator[Sample]:
    for image_path in sorted(folder.iterdir()):
        if image_path.suffix.lower() not in (".png", ".tif", ".tiff"):
            continue
        gt = image_path.with_name(image_path.stem + ".gt.txt")
        reference = read_ground_truth(gt)
        yield Sample(set_name, image_path.stem, kind, reference, is_cjk_text(reference),
                     _loader(image_path), _file_dpi(image_path))


def _loader(path: Path) -> Callable[[], Image.Image]:
    def load() -> Image.Image:
        with Image.open(path) as image:
            return _flatten(image)
    return load


def _flatten(image: Image.Image) -> Image.Image:
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    return image.convert("RGB")


def _file_dpi(path: Path) -> float | None:
    with Image.open(path) as image:
        dpi = image.info.get("dpi")
    return float(dpi[0]) if dpi and float(dpi[0]) > 1 else None


def _pdf_samples(folder: Path, dpi: float, seed: int | None) -> Iterator[Sample]:
    set_name = "pdfs" if seed is None else "degraded"
    for pdf in sorted(folder.glob("*.pdf")):
        gts = sorted(folder.glob(f"{pdf.stem}.p[0-9][0-9].gt.txt"))
        doc_cjk = is_cjk_text("".join(read_ground_truth(p) for p in gts))
        for gt in gts:
            number = int(gt.name[len(pdf.stem) + 2:len(pdf.stem) + 4])
            ident = f"{pdf.stem} p{number}"
            page_seed = None if seed is None else _page_seed(seed, ident)
            yield Sample(set_name, ident, "page", read_ground_truth(gt), doc_cjk,
                         _page_loader(pdf, number, dpi, page_seed), dpi)


def _page_seed(seed: int, ident: str) -> int:
    return seed + sum((i + 1) * ord(c) for i, c in enumerate(ident))  # stable across runs


def _page_loader(pdf: Path, number: int, dpi: float, seed: int | None) -> Callable[[], Image.Image]:
    def load() -> Image.Image:
        return render_page(pdf, number, dpi, seed)
    return load


def render_page(pdf: Path, number: int, dpi: float, seed: int | None = None) -> Image.Image:
    """Page `number` as pagerunner renders it; with a seed, also put through simulated scanning."""
    source = open_source(pdf)
    try:
        image = source.render(number, RenderOptions(dpi=dpi)).image
    finally:
        source.close()
    assert image is not None
    return image if seed is None else simulate_scan(image, seed)


@dataclass(frozen=True)
class ScanSettings:
    angle: float  # degrees, counterclockwise (PIL's rotate)
    blur: float
    noise_sigma: float
    quality: int


def scan_settings(rng: np.random.Generator) -> ScanSettings:
    """The simulated scanner's settings, the first draws from the page's generator."""
    angle = float(rng.uniform(0.3, 1.2)) * (1 if rng.random() < 0.5 else -1)
    return ScanSettings(angle, float(rng.uniform(0.5, 1.0)), float(rng.uniform(6.0, 12.0)),
                        int(rng.integers(55, 76)))


def simulate_scan(image: Image.Image, seed: int) -> Image.Image:
    """A cheap office-scanner model: the sheet is a little skewed, the optics blur, the sensor
    adds noise and the result is stored as a mid-quality JPEG. Parameters are drawn from `seed`."""
    rng = np.random.default_rng(seed)
    settings = scan_settings(rng)
    gray = image.convert("L").rotate(settings.angle, resample=Image.Resampling.BICUBIC, expand=False,
                                     fillcolor=255)
    gray = gray.filter(ImageFilter.GaussianBlur(settings.blur))
    pixels = np.asarray(gray, dtype=np.float32)
    pixels = pixels * 0.9 + 12.0  # paper is not pure white, ink not pure black
    pixels += rng.normal(0.0, settings.noise_sigma, pixels.shape).astype(np.float32)
    noisy = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L")
    buffer = io.BytesIO()
    noisy.save(buffer, "JPEG", quality=settings.quality)
    buffer.seek(0)
    with Image.open(buffer) as scanned:
        return scanned.convert("RGB")
