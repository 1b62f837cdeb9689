"""The model facts the runtime needs, written into manifest.json at conversion time."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from model_cache.hunyuan.ids import SpecialIds

MANIFEST_ENGINE = "hunyuan"
META_KEY = "hunyuan"
FORMAT_VERSION = 1
# HunyuanOCR's published greedy decoding settings (generation_config.json of the 1.0 and 1.5
# checkpoints: 1.5 stops on EOD with penalty 1.08, 1.0 on EOS/EOD with 1.03), used when a
# checkpoint has no generation_config.json.
PUBLISHED_PENALTY = {"1.0": 1.03, "1.5": 1.08}
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


@dataclass
class ModelConfig:
    dtype: str  # fp32 | fp16 | bf16 storage, or int8: decoder and LM-head Gemms block-quantized
    rope_variant: str  # "1.5": xdRoPE in every layer during prefill; "1.0": layer 0 only
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    rms_eps: float
    vocab: int
    rope_base: float
    mrope_section: list[int]
    vision_layers: int
    vision_hidden: int
    vision_heads: int
    patch: int
    merge: int
    pos_edge: int
    bos_id: int
    image_start_id: int
    image_end_id: int
    image_id: int
    assistant_id: int
    eos_ids: list[int]
    repetition_penalty: float
    min_pixels: int
    max_pixels: int
    image_mean: list[float] = field(default_factory=lambda: list(CLIP_MEAN))
    image_std: list[float] = field(default_factory=lambda: list(CLIP_STD))
    system_1_0_id: int = SpecialIds().system_1_0
    tokenizer: str = "tokenizer.json"
    weight_block: int = 0  # int8 only: weights per quantization block (quantize.py)

    def to_meta(self, pnnx_version: str) -> dict[str, Any]:
        meta = {"format": FORMAT_VERSION, "pnnx_version": pnnx_version, "dtype": self.dtype,
                "rope_variant": self.rope_variant, "eos_ids": self.eos_ids,
                "tokenizer": self.tokenizer, META_KEY: asdict(self)}
        if self.weight_block:
            meta["quantization"] = {"bits": 8, "block": self.weight_block, "graphs": ["dec_*", "lm_head"],
                                    "layers": "Gemm (ncnn weight-block quantized, param 18)",
                                    "other_weights": "fp32"}
        return meta

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> "ModelConfig":
        data = meta.get(META_KEY)
        if not isinstance(data, dict):
            raise ValueError(f"manifest has no '{META_KEY}' section: not a converted HunyuanOCR folder")
        names = {f.name for f in fields(cls)}
        optional = {"image_mean", "image_std", "system_1_0_id", "tokenizer", "weight_block"}
        missing = names - set(data) - optional
        if missing:
            raise ValueError(f"manifest '{META_KEY}' section lacks {sorted(missing)}")
        return cls(**{k: v for k, v in data.items() if k in names})


def config_from_checkpoint(checkpoint: Path, dtype: str, rope_variant: str) -> ModelConfig:
    """Read config.json (nested or legacy flat layout, via transformers), generation_config.json
    and preprocessor_config.json of a Hugging Face checkpoint."""
    from transformers import HunYuanVLConfig

    config = HunYuanVLConfig.from_pretrained(checkpoint)
    text, vision = config.text_config, config.vision_config
    rope = dict(text.rope_parameters or {})
    head_dim = text.head_dim or text.hidden_size // text.num_attention_heads
    base = float(rope.get("rope_theta", 10000.0))
    if rope.get("alpha"):
        base *= float(rope["alpha"]) ** (head_dim / (head_dim - 2))
    gen = _read_json(checkpoint / "generation_config.json")
    pre = _read_json(checkpoint / "preprocessor_config.json")
    ids = SpecialIds()
    return ModelConfig(
        dtype=dtype, rope_variant=rope_variant, hidden=text.hidden_size,
        layers=text.num_hidden_layers, heads=text.num_attention_heads,
        kv_heads=text.num_key_value_heads, head_dim=head_dim, rms_eps=float(text.rms_norm_eps),
        vocab=text.vocab_size, rope_base=base,
        mrope_section=[int(s) for s in rope.get("mrope_section") or [head_dim // 2]],
        vision_layers=vision.num_hidden_layers, vision_hidden=vision.hidden_size,
        vision_heads=vision.num_attention_heads, patch=vision.patch_size,
        merge=vision.spatial_merge_size, pos_edge=vision.max_image_size // vision.patch_size,
        bos_id=_first(text.bos_token_id, ids.bos), image_start_id=config.im_start_id,
        image_end_id=config.im_end_id, image_id=config.image_token_id, assistant_id=ids.assistant,
        eos_ids=_eos_set(gen, text),
        repetition_penalty=float(gen.get("repetition_penalty", PUBLISHED_PENALTY[rope_variant])),
        min_pixels=int(_pixels(pre, "min_pixels", "shortest_edge", 512 * 512)),
        max_pixels=int(_pixels(pre, "max_pixels", "longest_edge", 2048 * 2048)),
        image_mean=[float(v) for v in pre.get("image_mean", CLIP_MEAN)],
        image_std=[float(v) for v in pre.get("image_std", CLIP_STD)],
    )


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _first(value: Any, default: int) -> int:
    if isinstance(value, list):
        return int(value[0]) if value else default
    return default if value is None else int(value)


def _as_list(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in value] if isinstance(value, list) else [int(value)]


def _eos_set(gen: dict[str, Any], text) -> list[int]:
    """Every id the checkpoint treats as end of output: generation EOS, text EOS and EOD."""
    ids = _as_list(gen.get("eos_token_id")) + _as_list(text.eos_token_id)
    ids += _as_list(getattr(text, "eod_token_id", None))
    return sorted(set(ids))


def _pixels(pre: dict[str, Any], key: str, size_key: str, default: int) -> int:
    if key in pre:
        return pre[key]
    return (pre.get("size") or {}).get(size_key, default)
