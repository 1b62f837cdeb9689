"""int8 (ncnn weight-block-quantized Gemm) HunyuanOCR decoder weights.

Fast tests: the quantizer's arithmetic, and a small fp32 graph rewritten by quantize_graph run
by ncnn against the same graph in fp32 (this pins the on-disk format: the right one gives a
relative error of ~1e-2, inverted scales ~1e11; a type tag before the int8 blob, as ncnn's other
weights have, shifted every weight by four places when tried by hand).
Slow tests: a tiny random HunyuanOCR converted to fp32 and int8; teacher-forced on the fp32
greedy tokens, the int8 decoder must pick the same token on most steps, on (nearly) every step
where fp32's choice is clear, and keep its logits near fp32's; a folder with inverted scales must
fail that same check. (Random weights give flat logits: the median gap between fp32's top two
tokens is ~0.1 standard deviations of the logits, so even bf16 storage agrees on only 89% of
steps. Observed, int8 in blocks of 32: 88% of steps, 20 of 20 clear ones, mean |logit diff|
0.029 std with bf16 activations/KV cache (the default), 0.028 with fp32 ones (bf16 storage
alone: 0.014); with inverted scales: 0% of steps, error ~3e4 std.)
Needs ncnn; the slow ones also torch==2.13.0 (CPU), transformers>=5.13, pnnx, tokenizers.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import ncnn
import numpy as np
import pytest
from PIL import Image

from model_cache.hunyuan import quantize
from model_cache.hunyuan.graphs import to_mat
from model_cache.hunyuan.quantize import BlockQuant, dequantize, quantize_graph, quantize_rows
from tests.hunyuan_helpers import MAX_NEW, SIZES, random_image

GEMM_TOL = 0.03  # max |int8 - fp32| / max |fp32| of the small graph; observed ~0.01
AGREE_MIN = 0.75  # teacher-forced steps where int8 and fp32 pick the same token
CLEAR_GAP = 0.3  # a step is clear when fp32's top token leads the next by this many logit stds
CLEAR_AGREE_MIN = 0.9  # ... and on those int8 must pick the same token
ERROR_MAX = 0.06  # mean |int8 - fp32| logit / std of fp32's logits, averaged over steps


def test_quantize_rows_round_trip():
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((5, 100)).astype(np.float32)
    weight[1, :32] = 0.0  # an all-zero block must not divide by zero
    q, scales = quantize_rows(weight, 32)
    assert q.dtype == np.int8 and q.shape == weight.shape and scales.shape == (5, 4)
    assert np.abs(q).max() == 127
    error = np.abs(dequantize(q, scales, 32) - weight)
    step = np.repeat(1.0 / scales, 32, axis=1)[:, :100]
    assert np.all(error <= 0.5 * step + 1e-7)
    assert np.all(q[1, :32] == 0)


def test_block_quant_options_are_checked():
    assert BlockQuant(block=64).term == 801
    with pytest.raises(ValueError):
        BlockQuant(block=48)
    with pytest.raises(ValueError):
        BlockQuant(bits=4)


@dataclass
class SmallGraph:
    param: Path
    weights: Path
    x: np.ndarray


def _small_graph(folder: Path, seed: int = 0) -> SmallGraph:
    """in0 (3 x 64) -> RMSNorm -> Gemm 64->96 -> Swish -> Gemm 96->40, fp32 weights as pnnx writes them."""
    rng = np.random.default_rng(seed)
    gamma = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    w1 = (rng.standard_normal((96, 64)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((40, 96)) * 0.1).astype(np.float32)
    gemm = "10=-1 2=0 3=1 4=0 5=1 6=1 7=0"
    text = ("7767517\n5 5\nInput in0 0 1 in0\n"
            "RMSNorm norm 1 1 in0 1 0=64 1=1.000000e-05 2=1\n"
            f"Gemm g1 1 1 1 2 {gemm} 8=96 9=64\nSwish act 1 1 2 3\n"
            f"Gemm g2 1 1 3 out0 {gemm} 8=40 9=96\n")
    param, weights = folder / "small.param", folder / "small.bin"
    param.write_text(text)
    tag = struct.pack("<I", 0)
    weights.write_bytes(gamma.tobytes() + tag + w1.tobytes() + tag + w2.tobytes())
    return SmallGraph(param, weights, rng.standard_normal((3, 64)).astype(np.float32))


def _run(graph: SmallGraph) -> np.ndarray:
    net = ncnn.Net()
    net.opt.num_threads = 2
    assert net.load_param(str(graph.param)) == 0 and net.load_model(str(graph.weights)) == 0
    x = to_mat(graph.x)
    with net.create_extractor() as ex:
        ex.input("in0", x)
        ret, out = ex.extract("out0")
        assert ret == 0
        result = np.array(out, copy=True)
    net.clear()
    return result


def _quantized_error(tmp_path: Path, block: int) -> float:
    graph = _small_graph(tmp_path)
    reference = _run(graph)
    assert quantize_graph(graph.param, graph.weights, BlockQuant(block=block)) == 2
    assert graph.param.read_text().count(f"18={BlockQuant(block=block).term}") == 2
    out = _run(graph)
    assert out.shape == reference.shape
    return float(np.abs(out - reference).max() / np.abs(reference).max())


@pytest.mark.parametrize("block", [32, 64, 128])
def test_quantized_graph_matches_fp32(tmp_path: Path, block: int):
    assert _quantized_error(tmp_path, block) < GEMM_TOL


def test_inverted_scales_are_caught(tmp_path: Path, monkeypatch):
    def inverted(weight, block):
        q, scales = quantize_rows(weight, block)
        return q, 1.0 / scales

    monkeypatch.setattr(quantize, "quantize_rows", inverted)
    assert _quantized_error(tmp_path, 32) > 10 * GEMM_TOL


def test_quantize_graph_refuses_a_quantized_graph(tmp_path: Path):
    graph = _small_graph(tmp_path)
    quantize_graph(graph.param, graph.weights, BlockQuant())
    with pytest.raises(ValueError, match="already quantized"):
        quantize_graph(graph.param, graph.weights, BlockQuant())


def test_quantize_graph_refuses_unknown_layers(tmp_path: Path):
    graph = _small_graph(tmp_path)
    graph.param.write_text(graph.param.read_text().replace("Swish act", "Convolution act"))
    before = graph.weights.read_bytes()
    with pytest.raises(ValueError, match="Convolution"):
        quantize_graph(graph.param, graph.weights, BlockQuant())
    assert graph.weights.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.bin", "small.param"]


# --- tiny HunyuanOCR, converted twice ---------------------------------------------------------



@dataclass
class TinyPair:
    checkpoint: Path
    fp32: Path
    int8: Path


@pytest.fixture(scope="module")
def tiny_pair(tmp_path_factory) -> TinyPair:
    pytest.importorskip("torch")
    pytest.importorskip("pnnx")
    from model_cache.hunyuan import random_checkpoint as rc
    from model_cache.hunyuan.convert import convert_checkpoint

    root = tmp_path_factory.mktemp("hunyuan_q8")
    model = rc.build_model(rc.TINY, seed=0)
    tok = rc.build_tiny_tokenizer(root / "tokenizer.json")
    ckpt = rc.save_checkpoint(model, root / "ckpt", rc.TINY, tok)
    fp32 = convert_checkpoint(ckpt, root / "fp32", "fp32", log=lambda _: None)
    int8 = convert_checkpoint(ckpt, root / "int8", "int8", log=lambda _: None)
    return TinyPair(ckpt, fp32, int8)


def _engine(folder: Path, **extra: str):
    from model_cache.engine import EngineOptions
    from model_cache.hunyuan.engine import create_engine

    pairs = (("max_new_tokens", str(MAX_NEW)), *extra.items())
    return create_engine(EngineOptions(threads=2, model_dir=folder, extra=pairs))


def _forced_logits(engine, image: Image.Image, tokens: list[int]) -> np.ndarray:
    """Logits after the prompt and after each of `tokens` but the last (teacher forcing)."""
    inputs = engine.prompt_inputs(image)
    steps = [engine.decoder.prefill(inputs.embeds, inputs.positions)]
    steps += [engine.decoder.step(token) for token in tokens[:-1]]
    return np.stack(steps)


@dataclass
class Agreement:
    same_token: float  # fraction of steps with the same argmax
    clear_steps: int
    clear_same_token: float  # the same, over the steps where fp32's choice is clear
    error: float  # mean |diff| / std of the fp32 logits, averaged over steps

    def passes(self) -> bool:
        return (self.same_token >= AGREE_MIN and self.clear_same_token >= CLEAR_AGREE_MIN
                and self.error <= ERROR_MAX)


def _agreement(fp32_folder: Path, other_folder: Path, **extra: str) -> Agreement:
    fp32, other = _engine(fp32_folder), _engine(other_folder, **extra)
    refs, gots = [], []
    for size in SIZES:
        image = random_image(*size)
        tokens = fp32.run_page(image).generation.tokens
        refs.append(_forced_logits(fp32, image, tokens))
        gots.append(_forced_logits(other, image, tokens))
    fp32.close()
    other.close()
    ref, got = np.concatenate(refs), np.concatenate(gots)
    std = ref.std(axis=1)
    top2 = np.sort(ref, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) >= CLEAR_GAP * std
    same = ref.argmax(axis=1) == got.argmax(axis=1)
    error = float((np.abs(got - ref).mean(axis=1) / std).mean())
    return Agreement(float(same.mean()), int(clear.sum()), float(same[clear].mean()) if clear.any() else 0.0,
                     error)


@pytest.mark.slow
@pytest.mark.parametrize("storage", ["bf16", "fp32"])
def test_int8_decoder_follows_fp32(tiny_pair: TinyPair, storage: str):
    """storage: the decoder's activations and KV cache (bf16 is the engine's default for int8)."""
    result = _agreement(tiny_pair.fp32, tiny_pair.int8, decoder_storage=storage)
    assert result.clear_steps >= 8, result  # enough clear steps for the check to mean something
    assert result.passes(), result


@pytest.mark.slow
def test_int8_folder_manifest_and_sizes(tiny_pair: TinyPair, tmp_path: Path):
    from model_cache.hunyuan.convert import quantize_fp32_folder
    from model_cache.manifest import Manifest

    meta = Manifest.load(tiny_pair.int8).meta
    assert meta["dtype"] == "int8" and meta["hunyuan"]["weight_block"] == 32
    assert meta["quantization"]["bits"] == 8
    fp32_size = (tiny_pair.fp32 / "dec_0.bin").stat().st_size
    assert (tiny_pair.int8 / "dec_0.bin").stat().st_size < 0.35 * fp32_size
    vision = "vis_block_0.bin"
    assert (tiny_pair.int8 / vision).read_bytes() == (tiny_pair.fp32 / vision).read_bytes()
    derived = quantize_fp32_folder(tiny_pair.fp32, tmp_path / "derived", log=lambda _: None)
    for name in ("dec_0.bin", "dec_2.param", "lm_head.bin"):
        assert (derived / name).read_bytes() == (tiny_pair.int8 / name).read_bytes(), name


@pytest.mark.slow
def test_inverted_scales_fail_the_agreement_check(tiny_pair: TinyPair, tmp_path: Path, monkeypatch):
    from model_cache.hunyuan.convert import quantize_fp32_folder

    def inverted(weight, block):
        q, scales = quantize_rows(weight, block)
        return q, 1.0 / scales

    monkeypatch.setattr(quantize, "quantize_rows", inverted)
    broken = quantize_fp32_folder(tiny_pair.fp32, tmp_path / "broken", log=lambda _: None)
    result = _agreement(tiny_pair.fp32, broken)
    assert not result.passes(), result


@pytest.mark.slow
def test_int8_refuses_gpu(tiny_pair: TinyPair):
    from model_cache.engine import EngineError, EngineOptions
    from model_cache.hunyuan.engine import create_engine

    with pytest.raises(EngineError, match="int8"):
        create_engine(EngineOptions(device="gpu", model_dir=tiny_pair.int8))


@pytest.mark.slow
def test_int8_fused_decoder_gives_per_layer_tokens(tiny_pair: TinyPair):
    image = random_image(*SIZES[1])
    per_layer = _engine(tiny_pair.int8, fused_decoder="0").run_page(image)
    fused_engine = _engine(tiny_pair.int8, fused_decoder="1")
    assert fused_engine.decoder.fused
    fused = fused_engine.run_page(image)
    assert fused.generation.tokens == per_layer.generation.tokens
    assert np.abs(fused.generation.first_logits - per_layer.generation.first_logits).max() < 1e-4
    fused_engine.close()
