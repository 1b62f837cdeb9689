"""Continuous batching of HunyuanOCR pages (model_cache/hunyuan/scheduler.py, batch_graph.py).

Greedy tokens of every page decoded in a batch must equal the tokens of the same page decoded
alone, with pages of different sizes (prompt lengths) that stop at different steps, slots that
free up and take the next page mid-run, both RoPE variants, on the CPU and on Vulkan (lavapipe).
The stopping steps are made to differ by declaring, as EOS, tokens that the pages emit at
different points when decoded alone (random weights rarely emit the real EOS).
Also: the memory budget (a page that does not fit beside the others is decoded alone), blank
pages (never decoded), and the batch graph's structure. The slow tests need torch, transformers
and pnnx (to convert the tiny random checkpoint).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from model_cache.engine import EngineOptions
from model_cache.hunyuan.batch_graph import any_rows, batch_param
from model_cache.hunyuan.blank import is_blank
from model_cache.hunyuan.generate import GenerationSettings, TokenStream
from model_cache.hunyuan.loop_guard import LoopGuard
from model_cache.hunyuan.sampling import Sampler, SamplingOptions
from tests.hunyuan_helpers import random_image

PAGES = [(100, 160), (300, 120), (200, 200), (64, 300), (150, 90), (120, 120)]
MAX_NEW = 40
STOPS = [6, 33, 14, 25, 9]  # a stop wanted near these steps for the first pages


def _has_vulkan() -> bool:
    import ncnn

    return ncnn.get_gpu_count() > 0


LAYER = """7767517
9 12
Input                    kv_cache                 0 2 cache_k cache_v
Input                    in0                      0 1 in0
Input                    in1                      0 1 in1
Input                    in2                      0 1 in2
Input                    in3                      0 1 in3
Split                    splitncnn_0              1 2 in0 1 2
RotaryEmbed              rope_0                   3 1 1 in2 in3 3 0=0
SDPA sdpa_20 6 3 3 3 3 in1 cache_k cache_v 4 out_cache_k out_cache_v 5=1 7=1
BinaryOp                 add_0                    2 1 2 4 out0 0=0
"""


def test_batch_graph_gives_every_slot_its_own_attention():
    text = batch_param([LAYER, LAYER], slots=3, heads=4, kv_heads=2, host_attention=True)
    lines = text.splitlines()
    body = lines[2:]
    assert lines[1].split()[0] == str(len(body))
    sdpa = [line.split() for line in body if line.startswith("SDPA")]
    assert len(sdpa) == 2 * 3
    assert sdpa[4][4:13] == ["L1_b_q1", "L1_b_k1", "L1_b_v1", "mask_1_1", "cache_k1_1", "cache_v1_1",
                             "L1_b_o1", "out_cache_k1_1", "out_cache_v1_1"]
    assert all(s[-1] == "31=16" and "7=1" in s for s in sdpa)  # on the host, with the cache
    masks = [line.split() for line in body if line.startswith("Split") and "split_mask_" in line]
    assert len(masks) == 3 and all(m[-1] == "31=16" for m in masks)  # masks never visit the GPU
    produced = [b for line in body for b in line.split()[4 + int(line.split()[2]):][:int(line.split()[3])]]
    assert len(produced) == len(set(produced)) == int(lines[1].split()[1])
    consumed = {b for line in body for b in line.split()[4:4 + int(line.split()[2])]}
    assert consumed <= set(produced)
    assert "out0" in produced and "L0_out0" in consumed


def test_one_page_graph_keeps_the_mask_on_the_host_with_host_attention():
    from model_cache.hunyuan.fuse import fused_param

    def mask_split(host: bool) -> list[str]:
        return next(line.split() for line in fused_param([LAYER, LAYER], host).splitlines()
                    if line.startswith("Split") and " in1 " in line)

    assert mask_split(True)[-1] == "31=16"
    assert mask_split(False)[-1] != "31=16"


def test_bf16_attention_opts_every_other_layer_out_of_bf16():
    from model_cache.hunyuan.kv_dtype import NO_BF16, bf16_attention

    text = batch_param([LAYER, LAYER], slots=2, heads=4, kv_heads=2, host_attention=True)
    masked = bf16_attention(text).splitlines()
    assert masked[:2] == text.splitlines()[:2]
    for before, after in zip(text.splitlines()[2:], masked[2:]):
        kind = before.split()[0]
        if kind in ("Input", "SDPA"):
            assert after == before  # SDPA takes bf16: its q/k/v are cast on entry, its caches bf16
        elif "31=16" in before:
            assert after == before.replace("31=16", f"31={16 | NO_BF16}")  # host-only kept
        else:
            assert after == f"{before} 31={NO_BF16}"


def test_lm_head_takes_any_number_of_rows():
    line = "Gemm gemm_0 1 1 1 out0 10=-1 2=0 3=1 4=0 5=1 6=1 7=1 8=120818 9=64"
    assert any_rows(f"7767517\n1 2\n{line}\n").split("\n")[2].split()[12] == "7=0"


def test_batch_pages_flag_becomes_the_engine_option():
    from model_cache.engine import RESULT_NEUTRAL_OPTIONS
    from runner.cli_options import engine_extra

    assert engine_extra(None, False, [], 8) == (("batch_pages", "8"),)
    assert {"batch_pages", "kv_cache_mb"} <= RESULT_NEUTRAL_OPTIONS  # never part of a document's identity


def test_blank_page_detection():
    page = Image.new("RGB", (1654, 2339), "white")
    assert is_blank(page)
    assert is_blank(Image.new("RGB", (800, 600), (40, 40, 40)))  # uniformly dark is no ink either
    from PIL import ImageDraw

    ImageDraw.Draw(page).text((100, 100), "Yes", fill="black")
    assert not is_blank(page)
    assert not is_blank(random_image(100, 160))


def test_token_stream_marks_a_cut_repeating_tail():
    settings = GenerationSettings(frozenset({99}), 200, LoopGuard())
    stream = TokenStream(Sampler(SamplingOptions(), 100), settings, [1, 2])
    done = False
    for step in range(200):
        logits = np.zeros(100, dtype=np.float32)
        logits[[5, 6, 7][step % 3]] = 1.0
        if stream.push(logits):
            done = True
            break
    assert done and stream.stop == "repetition_loop"
    assert stream.tokens[-3:] == [5, 6, 7] and len(stream.tokens) == 3


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    pytest.importorskip("transformers")
    from model_cache.hunyuan import random_checkpoint as rc
    from model_cache.hunyuan.convert import convert_checkpoint

    root = tmp_path_factory.mktemp("hunyuan_batch")
    model = rc.build_model(rc.TINY, seed=0)
    tok = rc.build_tiny_tokenizer(root / "tokenizer.json")
    ckpt = rc.save_checkpoint(model, root / "ckpt", rc.TINY, tok)
    return convert_checkpoint(ckpt, root / "model", "fp32", log=lambda _: None)


def _engine(model_dir: Path, device: str = "cpu", **extra: str):
    from model_cache.hunyuan.engine import create_engine

    pairs = tuple({"max_new_tokens": str(MAX_NEW), **extra}.items())
    return create_engine(EngineOptions(threads=2, device=device, model_dir=model_dir, extra=pairs))


def _staggered_eos(engine, images, stops: list[int]) -> frozenset[int]:
    """Tokens that end the first pages at different steps when taken as EOS."""
    free = [engine.run_page(image).generation.tokens for image in images]
    eos: set[int] = set()
    for tokens, wanted in zip(free, stops):
        stop = next((t for t in tokens[wanted:] if all(t not in o[:wanted] for o in free)), None)
        if stop is not None:
            eos.add(stop)
    return frozenset(eos)


def _alone_and_batched(model_dir: Path, device: str, variant: str, slots: int, pages=PAGES, stops=STOPS,
                       **extra: str):
    images = [random_image(*size) for size in pages]
    single = _engine(model_dir, device, rope_variant=variant, batch_pages="1", **extra)
    eos = _staggered_eos(single, images, stops)
    single.generation = replace(single.generation, eos_ids=eos)
    alone = [single.run_page(image).generation for image in images]
    single.close()
    batched_engine = _engine(model_dir, device, rope_variant=variant, batch_pages=str(slots), **extra)
    batched_engine.generation = replace(batched_engine.generation, eos_ids=eos)
    finished = list(batched_engine.run_many(images))
    batched_engine.close()
    return alone, finished


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["1.5", "1.0"])
def test_batched_tokens_equal_alone_cpu(model_dir: Path, variant: str):
    alone, finished = _alone_and_batched(model_dir, "cpu", variant, slots=3)
    lengths = [len(g.tokens) for g in alone]
    assert len(set(lengths)) >= 4, f"pages must stop at different steps: {lengths}"
    assert sorted(i for i, _ in finished) == list(range(len(PAGES)))
    assert [i for i, _ in finished] != list(range(len(PAGES))), "a short page must come back first"
    for index, run in finished:
        assert run.generation.tokens == alone[index].tokens, f"page {index} differs from its lone decode"
        assert run.generation.stop == alone[index].stop
    assert max(run.result.timings["batch_mean"] for _, run in finished) > 2.0


@pytest.mark.slow
def test_bf16_kv_caches_batched_tokens_equal_alone_cpu(model_dir: Path):
    """kv_cache_dtype=bf16: the caches are bf16 (half the bytes), the logits stay close to the
    fp32 caches' and batching still changes no token."""
    image = random_image(*PAGES[0])
    runs = {}
    for dtype in ("fp32", "bf16"):
        engine = _engine(model_dir, kv_cache_dtype=dtype, batch_pages="1", max_new_tokens="4")
        runs[dtype] = engine.run_page(image).generation.first_logits
        assert engine.decoder.cache.keys[0].elemsize == (2 if dtype == "bf16" else 4)
        assert engine.kv_bytes_per_token() == engine.cfg.layers * 2 * engine.cfg.kv_heads * engine.cfg.head_dim \
            * engine.decoder.cache.keys[0].elemsize
        engine.close()
    error = float(np.abs(runs["bf16"] - runs["fp32"]).max())
    assert 0.0 < error < 0.1 * float(runs["fp32"].std())
    alone, finished = _alone_and_batched(model_dir, "cpu", "1.5", slots=3, pages=PAGES[:4], stops=STOPS[:4],
                                         kv_cache_dtype="bf16")
    assert len({len(g.tokens) for g in alone}) >= 3
    for index, run in finished:
        assert run.generation.tokens == alone[index].tokens, f"page {index} differs from its lone decode"
        assert run.generation.stop == alone[index].stop


def test_bf16_kv_caches_are_refused_on_vulkan(tmp_path):
    from types import SimpleNamespace

    from model_cache.engine import EngineError
    from model_cache.hunyuan.engine import _bf16_kv

    options = EngineOptions(device="gpu", model_dir=tmp_path, extra=(("kv_cache_dtype", "bf16"),))
    cfg = SimpleNamespace(dtype="fp16")  # the folder's dtype is all _bf16_kv reads of the config
    with pytest.raises(EngineError, match="kv_cache_dtype=bf16"):
        _bf16_kv(cfg, options, None, gpu=True)
    cfg.dtype = "bf16"  # the CPU already keeps a bf16 folder's caches in bf16: nothing to change
    assert not _bf16_kv(cfg, replace(options, device="cpu"), None, gpu=False)
    cfg.dtype = "fp32"
    assert _bf16_kv(cfg, replace(options, device="cpu"), None, gpu=False)


@pytest.mark.slow
def test_page_beyond_the_memory_budget_is_decoded_alone(model_dir: Path):
    images = [random_image(*size) for size in PAGES[:3]]
    alone = _engine(model_dir, batch_pages="1")
    expected = [alone.run_page(image).generation.tokens for image in images]
    tight = _engine(model_dir, batch_pages="3", kv_cache_mb="0.01")  # smaller than one page's cache
    runs = dict(tight.run_many(images))
    assert [runs[i].generation.tokens for i in range(3)] == expected
    assert all(run.result.timings["batch_mean"] == 1.0 for run in runs.values())
    roomy = _engine(model_dir, batch_pages="3")
    assert [r.text for r in roomy.ocr_many(images)] == [runs[i].result.text for i in range(3)]


@pytest.mark.slow
def test_blank_page_is_not_decoded(model_dir: Path):
    engine = _engine(model_dir, batch_pages="2")
    images = [random_image(*PAGES[0]), Image.new("RGB", (400, 300), "white"), random_image(*PAGES[1])]
    results = engine.ocr_many(images)
    assert results[1].text == "" and results[1].warnings == ["blank_page"]
    assert results[1].timings["new_tokens"] == 0.0
    assert results[0].text and results[2].text
    single = engine.ocr(Image.new("RGB", (400, 300), "white"))
    assert single.text == "" and single.warnings == ["blank_page"]


@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.skipif(not _has_vulkan(), reason="ncnn found no Vulkan device")
@pytest.mark.parametrize("variant", ["1.5", "1.0"])
def test_batched_tokens_equal_alone_vulkan(model_dir: Path, variant: str):
    """lavapipe is slow: 4 pages of at most 16 tokens, 2 slots."""
    alone, finished = _alone_and_batched(model_dir, "gpu", variant, slots=2, pages=PAGES[:4],
                                         stops=[3, 12, 6, 9], max_new_tokens="16")
    assert len({len(g.tokens) for g in alone}) >= 3
    for index, run in finished:
        assert run.generation.tokens == alone[index].tokens, f"page {index} differs from its lone decode"


@pytest.mark.slow
def test_random_folder_has_the_converted_layout(model_dir: Path, tmp_path):
    """benchmarks/hunyuan_random_folder.py: every .bin the size the converter wrote, and the
    engine loads and decodes it (values are random, so nothing else is compared)."""
    from benchmarks.hunyuan_random_folder import write_folder

    out = write_folder(model_dir, tmp_path / "random", "fp32")
    for converted in model_dir.glob("*.bin"):
        assert (out / converted.name).stat().st_size == converted.stat().st_size, converted.name
    engine = _engine(out, max_new_tokens="4", batch_pages="2")
    assert len(engine.ocr_many([random_image(*PAGES[0]), random_image(*PAGES[1])])) == 2
