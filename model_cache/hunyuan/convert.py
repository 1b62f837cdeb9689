"""Convert a HunyuanOCR Hugging Face checkpoint folder into split ncnn graphs + manifest.json.

    python -m model_cache.hunyuan.convert --checkpoint DIR -o MODEL_DIR [--dtype fp32|fp16|bf16]

Needs torch, transformers>=5.13 and pnnx (the `convert` extra); the runtime needs none of them.
Graphs: vis_embed, vis_block_{i}, vis_merge, dec_{i} (with SDPA KV cache), lm_head. Small
tensors (embedding table, position grid, merger vectors) are stored as .npy for numpy glue.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from model_cache.hunyuan.kvcache_param import add_kv_cache
from model_cache.hunyuan.model_config import MANIFEST_ENGINE, ModelConfig, config_from_checkpoint
from model_cache.manifest import MANIFEST_NAME, build_manifest

DTYPES = ("fp32", "fp16", "bf16")


def convert_checkpoint(checkpoint: Path, out_dir: Path, dtype: str = "fp32",
                       rope_variant: str = "1.5", log=print) -> Path:
    """Write the ncnn model folder for `checkpoint` into `out_dir` and return it."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, not {dtype!r}")
    import torch
    from transformers import HunYuanVLForConditionalGeneration

    checkpoint, out_dir = Path(checkpoint), Path(out_dir)
    tokenizer = checkpoint / "tokenizer.json"
    if not tokenizer.is_file():
        raise FileNotFoundError(f"{tokenizer} is missing: the runtime decodes with this file")
    cfg = config_from_checkpoint(checkpoint, dtype=dtype, rope_variant=rope_variant)
    model = HunYuanVLForConditionalGeneration.from_pretrained(checkpoint, dtype=torch.float32).eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    with torch.no_grad(), tempfile.TemporaryDirectory() as tmp:
        _export_all(model, cfg, out_dir, Path(tmp), log)
        _save_arrays(model, cfg, out_dir)
    shutil.copyfile(tokenizer, out_dir / "tokenizer.json")
    meta = cfg.to_meta(_pnnx_version())
    manifest = build_manifest(out_dir, "hunyuanocr", MANIFEST_ENGINE, meta)
    (out_dir / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")
    return out_dir


def _export_all(model, cfg: ModelConfig, out_dir: Path, tmp: Path, log) -> None:
    import torch

    from model_cache.hunyuan import export

    fp16 = cfg.dtype != "fp32"
    vt = model.model.vision_tower
    c, d = cfg.vision_hidden, cfg.hidden

    def run(name: str, module, shapes1, shapes2=None, kv=False) -> None:
        log(f"exporting {name}")
        _pnnx(module, tmp, name, out_dir, [torch.rand(*s) for s in shapes1],
              [torch.rand(*s) for s in shapes2] if shapes2 else None, fp16, kv)

    run("vis_embed", export.VisionEmbed(vt.embeddings), [(16, 768), (16, c)], [(24, 768), (24, c)])
    for i, block in enumerate(vt.layers):
        run(f"vis_block_{i}", export.VisionBlock(block, cfg.vision_heads), [(1, 16, c)], [(1, 24, c)])
    run("vis_merge", export.VisionMerge(vt.patch_merger), [(4, 4 * c)], [(6, 4 * c)])
    text = model.model.language_model
    for i, layer in enumerate(text.layers):
        mod = export.DecoderLayer(layer, cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.rms_eps)
        run(f"dec_{i}", mod, _dec_shapes(5, d, cfg.head_dim), _dec_shapes(9, d, cfg.head_dim), kv=True)
    head = export.LmHead(text.norm.weight, model.lm_head.weight, cfg.rms_eps)
    run("lm_head", head, [(1, 1, d)])


def _dec_shapes(s: int, d: int, hd: int) -> list[tuple[int, ...]]:
    return [(1, s, d), (1, 1, s, s), (1, 1, s, hd), (1, 1, s, hd)]


def _pnnx(module, tmp: Path, name: str, out_dir: Path, inputs, inputs2, fp16: bool, kv: bool) -> None:
    import pnnx

    pt = tmp / f"{name}.pt"
    pnnx.export(module.eval(), str(pt), tuple(inputs), tuple(inputs2) if inputs2 else None,
                check_trace=False, fp16=fp16)
    param = (tmp / f"{name}.ncnn.param").read_text()
    (out_dir / f"{name}.param").write_text(add_kv_cache(param) if kv else param)
    shutil.move(str(tmp / f"{name}.ncnn.bin"), out_dir / f"{name}.bin")
    for leftover in tmp.iterdir():
        leftover.unlink()


def _save_arrays(model, cfg: ModelConfig, out_dir: Path) -> None:
    vt = model.model.vision_tower
    merger = vt.patch_merger
    embed = model.model.language_model.embed_tokens.weight.detach().float().numpy()
    store = np.float32 if cfg.dtype == "fp32" else np.float16
    np.save(out_dir / "embed_tokens.npy", embed.astype(store))
    pos = vt.embeddings.position_embedding.weight.detach().float().numpy()[1:]
    newline_proj = merger.mlp(merger.image_newline.detach().float()[None])[0]
    np.savez(out_dir / "vision_arrays.npz",
             pos_embed=pos.astype(np.float32),
             before_rms=merger.before_rms.weight.detach().float().numpy(),
             after_rms=merger.after_rms.weight.detach().float().numpy(),
             newline=newline_proj.detach().numpy().astype(np.float32),
             begin=merger.image_begin.detach().float().numpy(),
             end=merger.image_end.detach().float().numpy())


def _pnnx_version() -> str:
    from importlib.metadata import version

    return version("pnnx")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model_cache.hunyuan.convert",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--dtype", choices=DTYPES, default="fp32")
    parser.add_argument("--rope-variant", choices=("1.0", "1.5"), default="1.5")
    args = parser.parse_args(argv)
    out = convert_checkpoint(args.checkpoint, args.output, args.dtype, args.rope_variant,
                             log=lambda msg: print(msg, file=sys.stderr))
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
