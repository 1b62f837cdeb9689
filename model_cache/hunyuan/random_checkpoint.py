"""Random-weight HunyuanOCR checkpoints (tiny for parity tests, full size for benchmarks).

Real weights cannot be downloaded here, so correctness is proven against transformers on a tiny
model of the same architecture and speed on a full-size one. Needs torch + transformers (the
`convert` extra); the runtime never imports this module.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from model_cache.hunyuan.ids import SpecialIds

OCR_PROMPT = "提取图中的文字。"


@dataclass(frozen=True)
class Sizes:
    text_layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vision_layers: int
    vision_hidden: int
    vision_heads: int
    vision_intermediate: int
    max_image_size: int
    vocab: int = 120818
    min_pixels: int = 262144
    max_pixels: int = 16777216


FULL = Sizes(24, 1024, 16, 8, 128, 3584, 27, 1152, 16, 4304, 2048)
TINY = Sizes(3, 64, 4, 2, 16, 128, 2, 32, 4, 64, 256, min_pixels=4096, max_pixels=65536)


def text_config(sizes: Sizes, ids: SpecialIds) -> dict:
    quarter = sizes.head_dim // 8
    return {
        "vocab_size": sizes.vocab, "hidden_size": sizes.hidden,
        "intermediate_size": sizes.intermediate, "num_hidden_layers": sizes.text_layers,
        "num_attention_heads": sizes.heads, "num_key_value_heads": sizes.kv_heads,
        "head_dim": sizes.head_dim, "hidden_act": "silu", "rms_norm_eps": 1e-5,
        "max_position_embeddings": 32768, "tie_word_embeddings": True, "attention_bias": False,
        "bos_token_id": ids.bos, "eos_token_id": ids.eos, "eod_token_id": ids.eod,
        "pad_token_id": ids.pad,
        "rope_parameters": {"rope_type": "dynamic", "rope_theta": 10000.0, "alpha": 1000.0,
                            "factor": 1.0, "mrope_section": [quarter] * 4},
    }


def vision_config(sizes: Sizes) -> dict:
    return {
        "hidden_size": sizes.vision_hidden, "intermediate_size": sizes.vision_intermediate,
        "num_hidden_layers": sizes.vision_layers, "num_attention_heads": sizes.vision_heads,
        "hidden_act": "gelu", "rms_norm_eps": 1e-5, "patch_size": 16, "spatial_merge_size": 2,
        "max_image_size": sizes.max_image_size, "out_hidden_size": sizes.hidden,
    }


def build_model(sizes: Sizes, seed: int = 0):
    """A HunYuanVLForConditionalGeneration with weights that make greedy decoding non-trivial."""
    import torch
    from transformers import HunYuanVLConfig, HunYuanVLForConditionalGeneration

    ids = SpecialIds()
    config = HunYuanVLConfig(text_config=text_config(sizes, ids), vision_config=vision_config(sizes),
                             image_token_id=ids.image, im_start_id=ids.image_start,
                             im_end_id=ids.image_end, im_newline_id=ids.newline,
                             tie_word_embeddings=True)
    torch.manual_seed(seed)
    model = HunYuanVLForConditionalGeneration(config).eval()
    _randomise(model, torch)
    return model


def _randomise(model, torch) -> None:
    # Default init gives near-uniform logits and a model that repeats one token; larger
    # weights make the parity test exercise real, varied decoding.
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "embed_tokens" in name or "position_embedding" in name:
                param.normal_(0.0, 0.3)
            elif param.dim() >= 2:
                fan_in = param[0].numel()
                param.normal_(0.0, 2.0 / math.sqrt(fan_in) if "vision" not in name
                              else 1.0 / math.sqrt(fan_in))
            elif name.endswith("bias"):
                param.normal_(0.0, 0.02)
            elif "image_" in name:
                param.normal_(0.0, 0.5)
            else:  # norm weights
                param.uniform_(0.8, 1.2)
        model.lm_head.weight = model.model.language_model.embed_tokens.weight


def save_checkpoint(model, out_dir: Path, sizes: Sizes, tokenizer_json: Path | None = None,
                    variant: str = "1.5") -> Path:
    """Write a checkpoint folder shaped like the published one (config, generation and
    preprocessor configs, safetensors, tokenizer.json)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    ids = SpecialIds()
    eos = [ids.eod] if variant == "1.5" else [ids.eos, ids.eod]
    gen = {"bos_token_id": ids.bos, "eos_token_id": eos, "pad_token_id": ids.pad,
           "do_sample": False, "repetition_penalty": 1.08 if variant == "1.5" else 1.03}
    (out_dir / "generation_config.json").write_text(json.dumps(gen, indent=2))
    pre = {"image_processor_type": "HunYuanVLImageProcessor", "min_pixels": sizes.min_pixels,
           "max_pixels": sizes.max_pixels, "patch_size": 16, "merge_size": 2,
           "temporal_patch_size": 1,
           "image_mean": [0.48145466, 0.4578275, 0.40821073],
           "image_std": [0.26862954, 0.26130258, 0.27577711]}
    (out_dir / "preprocessor_config.json").write_text(json.dumps(pre, indent=2))
    if tokenizer_json is not None:
        (out_dir / "tokenizer.json").write_bytes(tokenizer_json.read_bytes())
    return out_dir


def build_tiny_tokenizer(path: Path, vocab_size: int = 120818) -> Path:
    """A byte-level BPE tokenizer over the full id range with the special tokens at their
    real ids, so decoding any id the tiny model emits is well defined."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    ids = SpecialIds()
    specials = ids.names()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab: dict[str, int] = {}
    for ch in sorted(alphabet):
        vocab[ch] = len(vocab)
    merges = []
    for a, b in [("t", "h"), ("th", "e"), ("i", "n"), ("Ġ", "the"), ("e", "r"), ("o", "n")]:
        merges.append((a, b))
        vocab[a + b] = len(vocab)
    for text in OCR_PROMPT:
        for piece in pre_tokenizers.ByteLevel(add_prefix_space=False).pre_tokenize_str(text):
            for ch in piece[0]:
                vocab.setdefault(ch, len(vocab))
    filler = 0
    while len(vocab) < vocab_size:
        idx = len(vocab)
        if idx in specials:
            vocab[specials[idx]] = idx
        else:
            vocab[f"w{filler}"] = idx
            filler += 1
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(list(specials.values()))
    tok.save(str(path))
    return path
