"""The `hunyuan` engine: HunyuanOCR on split ncnn graphs, loaded once per process.

EngineOptions.extra keys (all optional):
  max_new_tokens (4096), low_memory (0/1: load each graph only while it runs),
  rope_variant (1.0/1.5, default from the manifest), prompt (default the OCR prompt),
  repetition_penalty (default from the checkpoint), temperature (0 = greedy), top_k, top_p, seed,
  loop_guard (1/0), fused_decoder (0/1: one graph for all decoder layers; default on for gpu),
  host_attention (1/0, gpu only: decode attention on the CPU next to the KV cache),
  decoder_storage (int8 folders only: bf16 (default) or fp32 activations and KV cache).
`engine.on_token(token_id, seconds_since_page_decode_start)` is called for every generated token.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from model_cache.engine import EngineError, EngineOptions
from model_cache.hunyuan.decoder import Decoder
from model_cache.hunyuan.generate import Generation, GenerationSettings, TokenCallback, generate
from model_cache.hunyuan.graphs import GraphStore, NetSettings
from model_cache.hunyuan.loop_guard import LoopGuard
from model_cache.hunyuan.model_config import MANIFEST_ENGINE, ModelConfig
from model_cache.hunyuan.preprocess import image_to_patches
from model_cache.hunyuan.prompt import DEFAULT_PROMPT, build_prompt, image_token_count
from model_cache.hunyuan.result import page_result
from model_cache.hunyuan.rope import VARIANTS, prompt_positions
from model_cache.hunyuan.sampling import Sampler, SamplingOptions
from model_cache.hunyuan.tokenizer import TextTokenizer
from model_cache.manifest import ModelVerificationError, verify_folder
from outputs.model import PageResult

ENGINE_NAME = "hunyuanocr"
DEFAULT_MAX_NEW_TOKENS = 4096


@dataclass
class PromptInputs:
    embeds: np.ndarray  # (prompt length, hidden), image features in place
    positions: np.ndarray  # (RoPE axes, prompt length)
    ids: list[int]
    image_embeds: np.ndarray
    vision_s: float


@dataclass
class PageRun:
    """Everything one page produced, for tests and benchmarks (ocr() keeps only the result)."""
    result: PageResult
    generation: Generation
    image_embeds: np.ndarray
    prompt_ids: list[int]


class HunyuanEngine:
    name = ENGINE_NAME

    def __init__(self, folder: Path, cfg: ModelConfig, options: EngineOptions):
        self.cfg = cfg
        self.folder = folder
        self.on_token: TokenCallback | None = None
        self.rope_variant = _choice(options, "rope_variant", cfg.rope_variant, VARIANTS)
        self.low_memory = _flag(options, "low_memory", False)
        settings = NetSettings(threads=options.threads, gpu=options.device == "gpu", dtype=cfg.dtype)
        self.graphs = GraphStore(folder, settings, resident=not self.low_memory)
        from model_cache.hunyuan.vision import VisionTower

        self.vision = VisionTower(folder, cfg, self.graphs)
        # One graph per step on Vulkan (each extract is a GPU round trip); per-layer on CPU, where
        # it costs nothing measurable and allows low_memory.
        fused = _flag(options, "fused_decoder", options.device == "gpu") and not self.low_memory
        # On Vulkan, decode attention runs on the host so the KV caches never cross to the GPU
        # (ncnn's Python API has no GPU-resident Mat); prefill attention stays on the GPU.
        host_attention = fused and options.device == "gpu" and _flag(options, "host_attention", True)
        self.decoder = Decoder(folder, cfg, self.graphs, self.rope_variant, fused=fused,
                               host_attention=host_attention, storage=_int8_storage(cfg, options))
        if not self.low_memory:
            self.graphs.preload(self.vision.graph_names() + self.decoder.graph_names())
        self.tokenizer = TextTokenizer(folder / cfg.tokenizer)
        self.prompt_ids = self.tokenizer.encode(options.get("prompt") or DEFAULT_PROMPT)
        self.sampling = SamplingOptions(
            repetition_penalty=_float(options, "repetition_penalty", cfg.repetition_penalty),
            temperature=_float(options, "temperature", 0.0), top_k=int(_float(options, "top_k", 0)),
            top_p=_float(options, "top_p", 1.0),
            seed=int(options.get("seed")) if options.get("seed") not in (None, "") else None)
        self.generation = GenerationSettings(
            eos_ids=frozenset(cfg.eos_ids),
            max_new_tokens=int(_float(options, "max_new_tokens", DEFAULT_MAX_NEW_TOKENS)),
            guard=LoopGuard() if _flag(options, "loop_guard", True) else None)

    def ocr(self, image: Image.Image) -> PageResult:
        return self.run_page(image).result

    def prompt_inputs(self, image: Image.Image) -> PromptInputs:
        """Vision tower + prompt: what the decoder's prefill takes for this page."""
        cfg = self.cfg
        t0 = time.perf_counter()
        patches = image_to_patches(image, cfg.patch, cfg.merge, cfg.min_pixels, cfg.max_pixels,
                                   cfg.image_mean, cfg.image_std)
        image_embeds = self.vision.embed(patches)
        vision_s = time.perf_counter() - t0
        count = image_token_count(patches.grid_h, patches.grid_w, cfg.merge)
        prompt = build_prompt(cfg, self.rope_variant, count, self.prompt_ids)
        embeds = self.decoder.embed(prompt.ids)
        embeds[prompt.image_start:prompt.image_start + count] = image_embeds
        spans = [(prompt.image_start, patches.grid_h // cfg.merge, patches.grid_w // cfg.merge)]
        positions = prompt_positions(len(prompt.ids), len(cfg.mrope_section), spans)
        return PromptInputs(embeds, positions, prompt.ids, image_embeds, vision_s)

    def run_page(self, image: Image.Image) -> PageRun:
        cfg = self.cfg
        inputs = self.prompt_inputs(image)
        sampler = Sampler(self.sampling, cfg.vocab)
        gen = generate(self.decoder, inputs.embeds, inputs.positions, inputs.ids, sampler, self.generation,
                       self.on_token)
        text = self.tokenizer.decode(gen.tokens).strip()
        warnings = ["repetition_loop"] if gen.stop == "repetition_loop" else []
        if gen.stop == "max_new_tokens":
            warnings.append("max_new_tokens")
        timings = _timings(inputs.vision_s, gen, len(inputs.ids))
        result = page_result(text, gen.probs, image.width, image.height, self.name, timings, warnings)
        if self.low_memory:
            self.decoder.cache.reset()
            self.graphs.trim()  # hand cached activation blocks back between pages
        return PageRun(result, gen, inputs.image_embeds, inputs.ids)

    def close(self) -> None:
        self.decoder.cache.reset()
        self.graphs.close()


def _timings(vision_s: float, gen: Generation, prompt_len: int) -> dict[str, float]:
    decoded = max(len(gen.step_s), 1)
    return {"vision_s": vision_s, "prefill_s": gen.prefill_s, "decode_s": gen.decode_s,
            "prompt_tokens": float(prompt_len), "new_tokens": float(len(gen.tokens)),
            "decode_tok_s": decoded / max(sum(gen.step_s), 1e-9) if gen.step_s else 0.0}


def _int8_storage(cfg: ModelConfig, options: EngineOptions) -> str | None:
    """int8 folders: bf16 activations and KV cache in the decoder unless decoder_storage=fp32
    (measured 1.3x faster decode at 1438 tokens of context, logits error 0.082 vs 0.076 std)."""
    if cfg.dtype != "int8":
        return None
    return _choice(options, "decoder_storage", "bf16", ("bf16", "fp32"))


def _flag(options: EngineOptions, key: str, default: bool) -> bool:
    value = options.get(key)
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def _float(options: EngineOptions, key: str, default: float) -> float:
    value = options.get(key)
    try:
        return default if value in (None, "") else float(value)
    except ValueError:
        raise EngineError(f"hunyuan option {key}={value!r} is not a number") from None


def _choice(options: EngineOptions, key: str, default: str, allowed: tuple[str, ...]) -> str:
    value = options.get(key) or default
    if value not in allowed:
        raise EngineError(f"hunyuan option {key}={value!r}: choose from {', '.join(allowed)}")
    return value


def create_engine(options: EngineOptions) -> HunyuanEngine:
    if options.model_dir is None:
        raise EngineError("the hunyuan engine needs a converted model folder (--model-dir); create one with "
                          "`pagerunner models convert hunyuanocr --checkpoint DIR -o MODEL_DIR`")
    folder = Path(options.model_dir)
    try:
        manifest = verify_folder(folder, engine=MANIFEST_ENGINE)
        cfg = ModelConfig.from_meta(manifest.meta)
    except ModelVerificationError as exc:
        raise EngineError(f"refusing to load HunyuanOCR: {exc}") from exc
    except ValueError as exc:
        raise EngineError(f"refusing to load HunyuanOCR from {folder}: {exc}") from exc
    if options.device == "gpu":
        if cfg.dtype == "int8":
            raise EngineError(f"{folder} holds int8 (block-quantized) weights, which ncnn runs on the "
                              "CPU only; use --device cpu or an fp32/fp16/bf16 model folder")
        _require_gpu()
    return HunyuanEngine(folder, cfg, options)


def _require_gpu() -> None:
    import ncnn

    if ncnn.get_gpu_count() == 0:
        raise EngineError("--device gpu: ncnn found no Vulkan device (install a Vulkan driver, "
                          "e.g. mesa-vulkan-drivers, or use --device cpu)")
