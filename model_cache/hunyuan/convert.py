"""Convert a HunyuanOCR Hugging Face checkpoint folder into split ncnn graphs + manifest.json.

    python -m model_cache.hunyuan.convert --checkpoint DIR -o MODEL_DIR [--dtype fp32|fp16|bf16|int8]
    python -m model_cache.hunyuan.convert --from-fp32 FP32_MODEL_DIR -o MODEL_DIR --dtype int8

int8: the decoder layers' and the LM head's linear weights become ncnn block-quantized Gemms
(quantize.py); everything else stays fp32. --from-fp32 derives that from a converted fp32 folder
without tracing again.

Needs torch, transformers>=5.13 and pnnx (the `convert` extra); the runtime needs none of them.
Graphs: vis_embed, vis_block_{i}, vis_merge, dec_{i} (with SDPA KV cache), lm_head. Small
tensors (embedding table, position grid, merger vectors) are stored as .npy for numpy glue.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model_cache.hunyuan.kvcache_param import add_kv_cache
from model_cache.hunyuan.model_config import MANIFEST_ENGINE, ModelConfig, config_from_checkpoint
from model_cache.hunyuan.quantize import BLOCK_CODES, BlockQuant, quantize_graph
from model_cache.manifest import MANIFEST_NAME, build_manifest, verify_folder

DTYPES = ("fp32", "fp16", "bf16", "int8")
DEFAULT_BLOCK = 32


def convert_checkpoint(checkpoint: Path, out_dir: Path, dtype: str = "fp32",
                       rope_variant: str = "1.5", log=print, jobs: int = 1,
                       weight_block: int = DEFAULT_BLOCK) -> Path:
    """Write the ncnn model folder for `checkpoint` into `out_dir` and return it."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, not {dtype!r}")
    quant = BlockQuant(block=weight_block) if dtype == "int8" else None
    import torch
    from transformers import HunYuanVLForConditionalGeneration

    checkpoint, out_dir = Path(checkpoint), Path(out_dir)
    tokenizer = checkpoint / "tokenizer.json"
    if not tokenizer.is_file():
        raise FileNotFoundError(f"{tokenizer} is missing: the runtime decodes with this file")
    cfg = config_from_checkpoint(checkpoint, dtype=dtype, rope_variant=rope_variant)
    cfg.weight_block = quant.block if quant else 0
    model = HunYuanVLForConditionalGeneration.from_pretrained(checkpoint, dtype=torch.float32).eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    with torch.no_grad(), tempfile.TemporaryDirectory() as tmp:
        _export_all(model, cfg, out_dir, Path(tmp), log, jobs)
        _save_arrays(model, cfg, out_dir)
    if quant:
        _quantize_decoder(out_dir, cfg, quant, log)
    shutil.copyfile(tokenizer, out_dir / "tokenizer.json")
    _write_manifest(out_dir, cfg, _pnnx_version())
    return out_dir


def quantize_fp32_folder(fp32_dir: Path, out_dir: Path, weight_block: int = DEFAULT_BLOCK,
                         log=print) -> Path:
    """Derive an int8 model folder from a converted fp32 one (no torch or pnnx needed)."""
    fp32_dir, out_dir = Path(fp32_dir), Path(out_dir)
    if out_dir.resolve() == fp32_dir.resolve():
        raise ValueError("the int8 folder must not be the fp32 folder it is derived from")
    manifest = verify_folder(fp32_dir, engine=MANIFEST_ENGINE)
    cfg = ModelConfig.from_meta(manifest.meta)
    if cfg.dtype != "fp32":
        raise ValueError(f"{fp32_dir} holds {cfg.dtype} weights; int8 is derived from fp32 only")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in manifest.files:
        shutil.copyfile(fp32_dir / name, out_dir / name)
    quant = BlockQuant(block=weight_block)
    cfg.dtype, cfg.weight_block = "int8", quant.block
    _quantize_decoder(out_dir, cfg, quant, log)
    _write_manifest(out_dir, cfg, str(manifest.meta.get("pnnx_version", "")))
    return out_dir


def _quantize_decoder(out_dir: Path, cfg: ModelConfig, quant: BlockQuant, log) -> None:
    for name in [*(f"dec_{i}" for i in range(cfg.layers)), "lm_head"]:
        count = quantize_graph(out_dir / f"{name}.param", out_dir / f"{name}.bin", quant)
        log(f"quantized {count} Gemm weights of {name} to int8 (blocks of {quant.block})")


def _write_manifest(out_dir: Path, cfg: ModelConfig, pnnx_version: str) -> None:
    manifest = build_manifest(out_dir, "hunyuanocr", MANIFEST_ENGINE, cfg.to_meta(pnnx_version))
    (out_dir / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")


def _export_all(model, cfg: ModelConfig, out_dir: Path, tmp: Path, log, jobs: int = 1) -> None:
    """Trace every part (in this process), then run the pnnx converter on them, `jobs` at a time."""
    import torch

    from model_cache.hunyuan import export

    vt = model.model.vision_tower
    c, d = cfg.vision_hidden, cfg.hidden
    tasks: list[_Task] = []

    def trace(name: str, module, shapes1, shapes2=None, kv=False) -> None:
        log(f"tracing {name}")
        work = tmp / name
        work.mkdir()
        inputs = [torch.rand(*s) for s in shapes1]
        inputs2 = [torch.rand(*s) for s in shapes2] if shapes2 else None
        pt = work / f"{name}.pt"
        torch.jit.trace(module.eval(), tuple(inputs), check_trace=False).save(str(pt))
        tasks.append(_Task(name, pt, inputs, inputs2, kv))

    trace("vis_embed", export.VisionEmbed(vt.embeddings), [(16, 768), (16, c)], [(24, 768), (24, c)])
    for i, block in enumerate(vt.layers):
        trace(f"vis_block_{i}", export.VisionBlock(block, cfg.vision_heads), [(1, 16, c)], [(1, 24, c)])
    trace("vis_merge", export.VisionMerge(vt.patch_merger), [(4, 4 * c)], [(6, 4 * c)])
    text = model.model.language_model
    for i, layer in enumerate(text.layers):
        mod = export.DecoderLayer(layer, cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.rms_eps)
        trace(f"dec_{i}", mod, _dec_shapes(5, d, cfg.head_dim), _dec_shapes(9, d, cfg.head_dim), kv=True)
    trace("lm_head", export.LmHead(text.norm.weight, model.lm_head.weight, cfg.rms_eps), [(1, 1, d)])

    fp16 = cfg.dtype in ("fp16", "bf16")
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for name in pool.map(lambda t: _pnnx(t, out_dir, fp16), tasks):
            log(f"converted {name}")


@dataclass
class _Task:
    name: str
    pt: Path
    inputs: list
    inputs2: list | None
    kv: bool


def _dec_shapes(s: int, d: int, hd: int) -> list[tuple[int, ...]]:
    return [(1, s, d), (1, 1, s, s), (1, 1, s, hd), (1, 1, s, hd)]


def _pnnx(task: _Task, out_dir: Path, fp16: bool) -> str:
    import pnnx

    pnnx.convert(str(task.pt), task.inputs, task.inputs2, fp16=fp16)
    work, name = task.pt.parent, task.name
    if not (work / f"{name}.ncnn.param").is_file():
        raise RuntimeError(f"pnnx produced no ncnn graph for {name}")
    param = (work / f"{name}.ncnn.param").read_text()
    (out_dir / f"{name}.param").write_text(add_kv_cache(param) if task.kv else param)
    shutil.move(str(work / f"{name}.ncnn.bin"), out_dir / f"{name}.bin")
    shutil.rmtree(work)
    return name


def _save_arrays(model, cfg: ModelConfig, out_dir: Path) -> None:
    vt = model.model.vision_tower
    merger = vt.patch_merger
    embed = model.model.language_model.embed_tokens.weight.detach().float().numpy()
    store = np.float16 if cfg.dtype in ("fp16", "bf16") else np.float32
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
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", type=Path)
    source.add_argument("--from-fp32", type=Path, help="a converted fp32 model folder (--dtype int8 only)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--dtype", choices=DTYPES, default="fp32")
    parser.add_argument("--weight-block", type=int, choices=sorted(BLOCK_CODES), default=DEFAULT_BLOCK,
                        help="int8: weights per quantization block")
    parser.add_argument("--rope-variant", choices=("1.0", "1.5"), default="1.5")
    parser.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1),
                        help="pnnx conversions run in parallel")
    args = parser.parse_args(argv)
    log = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    if args.from_fp32 is not None:
        if args.dtype != "int8":
            parser.error("--from-fp32 makes --dtype int8 folders only")
        out = quantize_fp32_folder(args.from_fp32, args.output, args.weight_block, log)
    else:
        out = convert_checkpoint(args.checkpoint, args.output, args.dtype, args.rope_variant,
                                 log=log, jobs=args.jobs, weight_block=args.weight_block)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
