"""The hunyuan engine against transformers on a tiny random HunyuanOCR (same architecture).

Built, saved as a checkpoint folder, converted with our converter, then run on two images of
different aspect ratio. Asserts: generated ids equal transformers' greedy generate() exactly (EOS
included), vision features within 1e-4 and first-step logits within 1e-3 (absolute; observed
~4e-6 and ~2e-5 in fp32). Also shows that the comparison catches broken RoPE positions and a
broken KV cache, and that the Vulkan path gives the CPU's tokens.
Needs torch==2.13.0 (CPU), transformers>=5.13, pnnx, tokenizers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from model_cache.engine import EngineError, EngineOptions
from tests.hunyuan_helpers import MAX_NEW, SIZES, random_image

pytestmark = pytest.mark.slow



@dataclass
class Tiny:
    checkpoint: Path
    model_dir: Path
    model: object


def _reference(model, image: Image.Image, prompt_ids: list[int], cfg, max_new: int = MAX_NEW):
    """transformers: image features, first-step logits, greedy generate() ids."""
    import torch
    from transformers.models.hunyuan_vl.image_processing_pil_hunyuan_vl import HunYuanVLImageProcessorPil

    proc = HunYuanVLImageProcessorPil(min_pixels=cfg.min_pixels, max_pixels=cfg.max_pixels)
    pix = proc(image, return_tensors="pt")
    ids = torch.tensor([prompt_ids])
    kwargs = dict(pixel_values=pix["pixel_values"], image_grid_thw=pix["image_grid_thw"],
                  mm_token_type_ids=(ids == cfg.image_id).int())
    with torch.no_grad():
        feats = model.model.get_image_features(pix["pixel_values"], pix["image_grid_thw"]).pooler_output[0]
        logits = model(input_ids=ids, **kwargs).logits[0, -1]
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new,
                             do_sample=False, eos_token_id=list(cfg.eos_ids), **kwargs)
    return feats.numpy(), logits.numpy(), out[0, ids.shape[1]:].tolist(), pix["pixel_values"].numpy()


def _make_eos_reachable(model, image: Image.Image, prompt_ids, cfg) -> None:
    """Random weights almost never pick EOS. Make the EOD row a slightly scaled copy of a token
    the model emits mid-sequence, so greedy decoding ends there with EOD (lm_head is tied)."""
    import torch

    _, _, free_run, _ = _reference(model, image, prompt_ids, cfg, max_new=24)
    target = free_run[12]
    table = model.model.language_model.embed_tokens.weight
    with torch.no_grad():
        table[cfg.eos_ids[-1]] = table[target] * 1.05


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Tiny:
    from transformers import HunYuanVLForConditionalGeneration

    from model_cache.hunyuan import random_checkpoint as rc
    from model_cache.hunyuan.convert import convert_checkpoint
    from model_cache.hunyuan.engine import create_engine

    root = tmp_path_factory.mktemp("hunyuan_tiny")
    model = rc.build_model(rc.TINY, seed=0)
    tok = rc.build_tiny_tokenizer(root / "tokenizer.json")
    ckpt = rc.save_checkpoint(model, root / "ckpt", rc.TINY, tok)
    probe = convert_checkpoint(ckpt, root / "probe", "fp32", log=lambda _: None)
    engine = create_engine(EngineOptions(model_dir=probe))
    prompt_ids = engine.run_page(random_image(*SIZES[0])).prompt_ids
    engine.close()
    _make_eos_reachable(model, random_image(*SIZES[0]), prompt_ids, engine.cfg)
    ckpt = rc.save_checkpoint(model, root / "ckpt", rc.TINY, tok)
    model_dir = convert_checkpoint(ckpt, root / "model", "fp32", log=lambda _: None)
    reference = HunYuanVLForConditionalGeneration.from_pretrained(ckpt).float().eval()
    return Tiny(ckpt, model_dir, reference)


def _engine(tiny: Tiny, device: str = "cpu", **extra: str):
    from model_cache.hunyuan.engine import create_engine

    pairs = (("max_new_tokens", str(MAX_NEW)), *extra.items())
    return create_engine(EngineOptions(threads=2, device=device, model_dir=tiny.model_dir, extra=pairs))


def test_tokens_features_and_logits_match_transformers(tiny: Tiny):
    engine = _engine(tiny)
    ended_with_eos = 0
    for size in SIZES:
        image = random_image(*size)
        run = engine.run_page(image)
        feats, logits, ref_ids, _ = _reference(tiny.model, image, run.prompt_ids, engine.cfg)
        assert run.image_embeds.shape == feats.shape
        assert np.abs(run.image_embeds - feats).max() < 1e-4
        assert np.abs(run.generation.first_logits - logits).max() < 1e-3
        assert run.generation.tokens == ref_ids, f"image {size}: ncnn and transformers diverge"
        if ref_ids[-1] in engine.cfg.eos_ids:
            ended_with_eos += 1
            assert run.generation.stop == "eos"
            assert run.result.text == engine.tokenizer.decode(ref_ids).strip()
    assert ended_with_eos >= 1, "the test model must exercise stopping on EOS"
    engine.close()


def test_preprocessing_matches_image_processor(tiny: Tiny):
    from transformers.models.hunyuan_vl.image_processing_pil_hunyuan_vl import HunYuanVLImageProcessorPil

    from model_cache.hunyuan.preprocess import image_to_patches

    engine = _engine(tiny)
    cfg = engine.cfg
    for size in SIZES + [(333, 517)]:
        image = random_image(*size)
        ours = image_to_patches(image, cfg.patch, cfg.merge, cfg.min_pixels, cfg.max_pixels,
                                cfg.image_mean, cfg.image_std)
        ref = HunYuanVLImageProcessorPil(min_pixels=cfg.min_pixels, max_pixels=cfg.max_pixels)(
            image, return_tensors="np")
        assert [1, ours.grid_h, ours.grid_w] == ref["image_grid_thw"][0].tolist()
        assert np.abs(ours.values - ref["pixel_values"]).max() < 1e-5
    engine.close()


def test_broken_rope_positions_are_caught(tiny: Tiny, monkeypatch):
    """Feeding plain sequence positions to the image tokens must change the output."""
    from model_cache.hunyuan import engine as engine_module

    def flat_positions(length, axes, spans):
        return np.tile(np.arange(length), (axes, 1))

    monkeypatch.setattr(engine_module, "prompt_positions", flat_positions)
    engine = _engine(tiny)
    image = random_image(*SIZES[1])
    run = engine.run_page(image)
    _, logits, ref_ids, _ = _reference(tiny.model, image, run.prompt_ids, engine.cfg)
    assert run.generation.tokens != ref_ids or np.abs(run.generation.first_logits - logits).max() > 1e-3
    engine.close()


def test_broken_kv_cache_is_caught(tiny: Tiny, monkeypatch):
    """Extracting the caches converted (the ncnn default) instead of raw breaks decoding."""
    from model_cache.hunyuan import graphs

    original = graphs.GraphStore.run

    def converted(self, name, inputs, outputs, raw=()):
        return original(self, name, inputs, outputs, raw=())

    monkeypatch.setattr(graphs.GraphStore, "run", converted)
    engine = _engine(tiny)
    image = random_image(*SIZES[0])
    run = engine.run_page(image)
    _, _, ref_ids, _ = _reference(tiny.model, image, run.prompt_ids, engine.cfg)
    assert run.generation.tokens[0] == ref_ids[0]  # prefill does not read the cache
    assert run.generation.tokens != ref_ids
    engine.close()


def test_rope_variant_1_0_is_selectable(tiny: Tiny):
    """1.0 (system token, xdRoPE in layer 0 only) differs from 1.5 on image prompts."""
    image = random_image(*SIZES[1])
    runs = {}
    for variant in ("1.5", "1.0"):
        engine = _engine(tiny, rope_variant=variant, max_new_tokens="4")
        runs[variant] = engine.run_page(image)
        engine.close()
    assert np.abs(runs["1.5"].generation.first_logits - runs["1.0"].generation.first_logits).max() > 1e-3
    cfg = _engine(tiny).cfg
    assert runs["1.0"].prompt_ids[1] == cfg.system_1_0_id
    assert runs["1.5"].prompt_ids[1] == cfg.image_start_id


def test_low_memory_mode_gives_same_tokens(tiny: Tiny):
    image = random_image(*SIZES[0])
    resident = _engine(tiny).run_page(image).generation.tokens
    low = _engine(tiny, low_memory="1").run_page(image).generation.tokens
    assert low == resident


def test_on_token_streams_every_token(tiny: Tiny):
    engine = _engine(tiny)
    seen: list[tuple[int, float]] = []
    engine.on_token = lambda token, seconds: seen.append((token, seconds))
    run = engine.run_page(random_image(*SIZES[0]))
    assert [t for t, _ in seen] == run.generation.tokens
    assert all(b >= a for (_, a), (_, b) in zip(seen, seen[1:]))
    engine.close()


def test_engine_refuses_altered_folder(tiny: Tiny, tmp_path):
    import shutil

    from model_cache.hunyuan.engine import create_engine

    copy = tmp_path / "model"
    shutil.copytree(tiny.model_dir, copy)
    with open(copy / "dec_0.bin", "r+b") as fh:
        fh.seek(100)
        fh.write(b"\x00\x01\x02\x03")
    with pytest.raises(EngineError, match="dec_0.bin"):
        create_engine(EngineOptions(model_dir=copy))


def _has_vulkan() -> bool:
    import ncnn

    return ncnn.get_gpu_count() > 0


@pytest.mark.gpu
@pytest.mark.skipif(not _has_vulkan(), reason="ncnn found no Vulkan device")
@pytest.mark.parametrize("host_attention", ["1", "0"])
def test_vulkan_gives_cpu_tokens(tiny: Tiny, host_attention: str):
    """fp32 storage on both; host_attention=1 keeps the KV cache on the host (the default)."""
    image = random_image(*SIZES[0])
    cpu = _engine(tiny).run_page(image)
    gpu_engine = _engine(tiny, device="gpu", host_attention=host_attention)
    assert gpu_engine.decoder.fused
    gpu = gpu_engine.run_page(image)
    assert gpu.generation.tokens == cpu.generation.tokens
    assert np.abs(gpu.image_embeds - cpu.image_embeds).max() < 1e-2
    gpu_engine.close()


@pytest.mark.parametrize("variant", ["1.5", "1.0"])
def test_fused_decoder_graph_gives_per_layer_tokens(tiny: Tiny, variant: str):
    image = random_image(*SIZES[1])
    per_layer = _engine(tiny, rope_variant=variant, fused_decoder="0").run_page(image)
    fused_engine = _engine(tiny, rope_variant=variant, fused_decoder="1")
    assert fused_engine.decoder.fused
    fused = fused_engine.run_page(image)
    assert fused.generation.tokens == per_layer.generation.tokens
    assert np.abs(fused.generation.first_logits - per_layer.generation.first_logits).max() < 1e-5
