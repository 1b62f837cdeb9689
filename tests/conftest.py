from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

REPO = Path(__file__).resolve().parents[1]
FAKE_ENGINE = "tests.fake_engine:create_engine"


def shared_dir() -> Path | None:
    for candidate in (os.environ.get("PAGERUNNER_SHARED"), REPO.parent / "shared", REPO / "shared"):
        if candidate and (Path(candidate) / "eval").is_dir():
            return Path(candidate)
    return None


@pytest.fixture
def eval_dir() -> Path:
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared/eval is not present")
    return shared / "eval"


def make_page(text: str, size: tuple[int, int] = (400, 300), seed: int = 0) -> Image.Image:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.text((20, 20 + seed % 50), text, fill="black")
    draw.rectangle([10 + seed % 30, 200, 60 + seed % 40, 240], fill="black")
    return image


def make_pdf(path: Path, pages: int, tag: str) -> Path:
    images = [make_page(f"{tag} page {i + 1}", seed=i + len(tag)) for i in range(pages)]
    images[0].save(path, save_all=True, append_images=images[1:], resolution=72)
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A small mixed input tree: multi-page PDFs, PNGs, a 3-frame TIFF, a nested folder."""
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    make_pdf(root / "alpha.pdf", 3, "alpha")
    make_pdf(root / "sub" / "beta.pdf", 2, "beta")
    make_page("gamma").save(root / "gamma.png")
    frames = [make_page(f"tiff {i}", seed=i) for i in range(3)]
    frames[0].save(root / "sub" / "multi.tif", save_all=True, append_images=frames[1:])
    return root


def run_cli(*args: str, cwd: Path = REPO, env: dict | None = None, input: str | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, env=full_env, input=input,
                          capture_output=True, text=True, timeout=timeout)
