"""ncnn (shipped files) vs onnxruntime (the source ONNX files) on the same line crops: share
of lines whose recognised text is identical, of time steps whose arg-max class is identical, and
det probability-map agreement.

    python benchmarks/ppocr_parity.py [--pages 6] [--model ppocr-v5-mobile|ppocr-v6-tiny]

Crops come from the engine's own detection on the kit's pages (scans + rendered PDFs at
200 dpi) plus the 60 kit line images, so the comparison covers real line shapes."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
KIT = REPO.parent / "shared" / "eval"

from PIL import Image  # noqa: E402

from model_cache.engine import EngineOptions  # noqa: E402
from model_cache.ppocr.detection import detect, probability_map  # noqa: E402
from model_cache.ppocr.engine import PPOCREngine, to_rgb  # noqa: E402
from model_cache.ppocr.crops import rectify  # noqa: E402
from model_cache.ppocr.recognition import RecParams, crop_to_mat, ctc_decode  # noqa: E402


@dataclass
class ParityReport:
    lines: int
    same: int
    mismatches: list[tuple[str, str]]
    steps: int = 0
    steps_same: int = 0

    @property
    def share(self) -> float:
        return self.same / max(1, self.lines)

    @property
    def step_share(self) -> float:
        return self.steps_same / max(1, self.steps)


def source_onnx(model: str, role: str) -> Path:
    """The ONNX file a shipped model's `role` net was converted from (its pinned source package)."""
    from model_cache.ppocr.convert import RECIPES, source_dir
    recipe = RECIPES[model]
    return source_dir(recipe) / next(n.source for n in recipe.nets if n.role == role)


def onnx_session(model: str, role: str):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    return ort.InferenceSession(str(source_onnx(model, role)), options, providers=["CPUExecutionProvider"])


def onnx_rec_input(crop: np.ndarray, params: RecParams) -> np.ndarray:
    h, w = crop.shape[:2]
    if w < params.min_width:
        pad = np.full((h, params.min_width, 3), 127, dtype=np.uint8)
        pad[:, :w] = crop
        crop = pad
    bgr = crop[..., ::-1].astype(np.float32) / 127.5 - 1.0
    return np.ascontiguousarray(bgr.transpose(2, 0, 1)[None])


def line_crops(engine: PPOCREngine, images: list[Image.Image]) -> list[np.ndarray]:
    crops = []
    for image in images:
        rgb = to_rgb(image)
        for box in detect(engine.det, rgb, engine.params.det):
            crops.append(rectify(rgb, box.quad, engine.params.rec))
    return crops


def rec_parity(engine: PPOCREngine, crops: list[np.ndarray]) -> ParityReport:
    session = onnx_session(engine.name, "rec")
    report = ParityReport(len(crops), 0, [])
    for crop in crops:
        scores = engine.rec.run(crop_to_mat(crop, engine.params.rec))
        probs = session.run(None, {"x": onnx_rec_input(crop, engine.params.rec)})[0][0]
        scores = scores.reshape(probs.shape)
        ours = ctc_decode(scores, engine.dictionary).text
        theirs = ctc_decode(probs, engine.dictionary).text
        report.steps += len(probs)
        report.steps_same += int((scores.argmax(axis=1) == probs.argmax(axis=1)).sum())
        if ours == theirs:
            report.same += 1
        else:
            report.mismatches.append((ours, theirs))
    return report


def det_parity(engine: PPOCREngine, image: Image.Image) -> float:
    """Share of probability-map pixels on the same side of the binarisation threshold."""
    import cv2
    from model_cache.ppocr.detection import input_size
    rgb = to_rgb(image)
    ours = probability_map(engine.det, rgb, engine.params.det)
    th, tw = ours.shape
    assert (tw, th) == input_size(rgb.shape[1], rgb.shape[0], engine.params.det)
    resized = cv2.resize(rgb, (tw, th), interpolation=cv2.INTER_LINEAR)[..., ::-1]
    x = (resized.astype(np.float32) / 255 - [0.406, 0.456, 0.485]) / [0.225, 0.224, 0.229]
    theirs = onnx_session(engine.name, "det").run(
        None, {"x": np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32)})[0][0, 0]
    t = engine.params.det.thresh
    return float(((ours > t) == (theirs > t)).mean())


def kit_images(pages: int) -> list[Image.Image]:
    import pypdfium2 as pdfium
    images = [Image.open(p) for p in sorted((KIT / "scans").glob("*.tif"))]
    for pdf in sorted((KIT / "pdfs").glob("*.pdf")):
        doc = pdfium.PdfDocument(str(pdf))
        for i in range(min(len(doc), max(1, pages // 3))):
            images.append(doc[i].render(scale=200 / 72).to_pil())
        doc.close()
    return images


def kit_line_crops(engine: PPOCREngine) -> list[np.ndarray]:
    crops = []
    for path in sorted((KIT / "lines").glob("*.png")):
        rgb = to_rgb(Image.open(path))
        h, w = rgb.shape[:2]
        quad = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)
        crops.append(rectify(rgb, quad, engine.params.rec))
    return crops


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--model", default=None, help="a shipped model (default: the default model)")
    args = parser.parse_args()
    # The per-crop net against onnxruntime (strips are checked against it in tests/test_ppocr_batch.py).
    engine = PPOCREngine(EngineOptions(threads=2, model=args.model,
                                       extra=(("rec_batch", "off"), ("rec_head", "ncnn"))))  # the whole net
    images = kit_images(args.pages)
    crops = kit_line_crops(engine) + line_crops(engine, images)
    report = rec_parity(engine, crops)
    print("| check | n | identical | share |")
    print("|---|---|---|---|")
    print(f"| {engine.name}: rec text, ncnn vs onnxruntime | {report.lines} | {report.same} | {report.share:.4f} |")
    print(f"| {engine.name}: rec arg-max per time step | {report.steps} | {report.steps_same} | "
          f"{report.step_share:.5f} |")
    det = [det_parity(engine, im) for im in images]
    print(f"| {engine.name}: det map pixels on the same side of {engine.params.det.thresh} (mean over pages) | {len(det)} | | "
          f"{sum(det) / len(det):.5f} |")
    for ours, theirs in report.mismatches:
        print(f"  ncnn: {ours!r}\n  onnx: {theirs!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
