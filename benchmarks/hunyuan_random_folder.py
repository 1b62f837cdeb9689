"""A random-weight HunyuanOCR ncnn model folder written straight from the graph texts of a
converted one, without torch or pnnx: for speed measurements on a machine where converting a
full-size checkpoint would take too long (the GPU machine's session time), given only the
.param files, tokenizer.json and manifest.json of a converted folder (~3 MB to carry).

Every weight has the size and layout the converted .bin files have (model_cache/ncnn_graph.py
weight_plan; checked against a conversion in tests/test_hunyuan_batch.py); the values are
random (matrices N(0, 1/fan_in), norm scales 1, biases 0), so the folder is for timing only.

    python benchmarks/hunyuan_random_folder.py TEMPLATE_DIR OUT_DIR [--dtype fp16] [--seed 0]
"""

from __future__ import annotations

import argparse
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model_cache.hunyuan.model_config import MANIFEST_ENGINE, ModelConfig  # noqa: E402
from model_cache.manifest import MANIFEST_NAME, Manifest, build_manifest  # noqa: E402
from model_cache.ncnn_graph import Layer, read_layers, weight_plan  # noqa: E402

CHUNK = 1 << 24  # floats generated at a time


def write_bin(param: Path, out: Path, rng: np.random.Generator) -> None:
    with open(out, "wb") as fh:
        for layer in read_layers(param):
            for index, (tagged, count) in enumerate(weight_plan(layer)):
                if tagged:
                    fh.write(struct.pack("<I", 0))
                _write_values(fh, layer, index, tagged, count, rng)


def _write_values(fh, layer: Layer, index: int, tagged: bool, count: int, rng: np.random.Generator) -> None:
    if not tagged:  # norm scales (the first vector of a norm layer) and biases
        scale = layer.type in ("RMSNorm", "LayerNorm") and index == 0
        fh.write((np.ones if scale else np.zeros)(count, dtype="<f4").tobytes())
        return
    fan_in = max(layer.geti("9"), 1) if layer.type == "Gemm" else max(count // max(layer.geti("0"), 1), 1)
    std = np.float32(1.0 / np.sqrt(fan_in))
    for start in range(0, count, CHUNK):
        size = min(CHUNK, count - start)
        fh.write((rng.standard_normal(size, dtype=np.float32) * std).astype("<f4").tobytes())


def write_folder(template: Path, out: Path, dtype: str = "fp16", seed: int = 0) -> Path:
    manifest = Manifest.load(template)
    cfg = ModelConfig.from_meta(manifest.meta)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for param in sorted(template.glob("*.param")):
        shutil.copyfile(param, out / param.name)
        write_bin(param, out / f"{param.stem}.bin", rng)
    shutil.copyfile(template / cfg.tokenizer, out / cfg.tokenizer)
    store = np.float16 if dtype in ("fp16", "bf16") else np.float32
    embed = rng.standard_normal((cfg.vocab, cfg.hidden), dtype=np.float32) * np.float32(0.3)
    np.save(out / "embed_tokens.npy", embed.astype(store))
    c, d = cfg.vision_hidden, cfg.hidden
    np.savez(out / "vision_arrays.npz",
             pos_embed=rng.standard_normal((cfg.pos_edge ** 2, c), dtype=np.float32) * np.float32(0.02),
             before_rms=np.ones(c, np.float32), after_rms=np.ones(d, np.float32),
             newline=rng.standard_normal(d, dtype=np.float32), begin=rng.standard_normal(d, dtype=np.float32),
             end=rng.standard_normal(d, dtype=np.float32))
    cfg.dtype = dtype
    meta = cfg.to_meta(str(manifest.meta.get("pnnx_version", "")))
    meta["random_weights"] = True
    result = build_manifest(out, manifest.name, MANIFEST_ENGINE, meta)
    (out / MANIFEST_NAME).write_text(result.to_json(), encoding="utf-8")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("template", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--dtype", default="fp16", choices=("fp32", "fp16", "bf16"),
                        help="the storage the engine runs the fp32 weights in")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(write_folder(args.template, args.out, args.dtype, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
