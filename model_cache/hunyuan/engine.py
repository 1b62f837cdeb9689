"""The `hunyuan` engine: HunyuanOCR on split ncnn graphs, loaded once per process.

EngineOptions.extra keys (all optional):
  max_new_tokens (4096), low_memory (0/1: load each graph only while it runs),
  rope_variant (1.0/1.5, default from the manifest), prompt (default the OCR prompt),
  repetition_penalty (default from the checkpoint), temperature (0 = greedy), top_k, top_p, seed,
  loop_guard (1/0), fused_decoder (0/1: one graph for all decoder layers; default on for gpu),
  host_attention (1/0, gpu only: decode attention on the CPU next to the KV cache),
  decoder_storage (int8 folders only: bf16 (default) or fp32 activations and KV cache),
  kv_cache_dtype (fp32 (default) or bf16, cpu only: the decoder's attention and KV caches in bf16,
    every other layer as the folder says; half the cache bytes a step reads; kv_dtype.py),
  batch_pages (pages decoded together by ocr_many; default 32 on gpu, 8 on cpu, 1 with low_memory),
  kv_cache_mb (KV-cache budget of a batch; default half the memory available at load).
`engine.on_token(token_id, seconds_since_page_decode_start)` is called for every generated token
of a page decoded alone (ocr / run_page), not in batches.
Blank pages (no ink, blank.py) are not sent to the model: empty text, warning "blank_page".
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from model_cache.engine import EngineError, EngineOptions
from model_cache.hunyuan.blank import is_blank
from model_cache.hunyuan.decoder import Decoder
from model_cache.hunyuan.generate import Generation, GenerationSettings, TokenCallback, generate
from model_cache.hunyuan.graphs import GraphStore, NetSettings
from model_cache.hunyuan.kv_dtype import DTYPES as KV_DTYPES
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
DEFAULT_BATCH_PAGES = {"gpu": 32, "cpu": 8}


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
        self.gpu = options.device == "gpu"
        settings = NetSettings(threads=options.threads, gpu=self.gpu, dtype=cfg.dtype)
        self.graphs = GraphStore(folder, settings, resident=not self.low_memory)
        from model_cache.hunyuan.vision import VisionTower

        self.vision = VisionTower(folder, cfg, self.graphs)
        # One graph per step on Vulkan (each extract is a GPU round trip); per-layer on CPU, where
        # it costs nothing measurable and allows low_memory.
        fused = _flag(options, "fused_decoder", options.device == "gpu") and not self.low_memory
        # On Vulkan, decode attention runs on the host so the KV caches never cross to the GPU
        # (ncnn's Python API has no GPU-resident Mat); prefill attention stays on the GPU.
        host_attention = fused and options.device == "gpu" and _flag(options, "host_attention", True)
        self.storage = _int8_storage(cfg, options)
        self.bf16_kv = _bf16_kv(cfg, options, self.storage, self.gpu)
        self.decoder = Decoder(folder, cfg, self.graphs, self.rope_variant, fused=fused,
                               host_attention=host_attention, storage=self.storage, bf16_kv=self.bf16_kv)
        default_batch = 1 if self.low_memory else DEFAULT_BATCH_PAGES.get(options.device, 8)
        self.batch_pages = max(1, int(_float(options, "batch_pages", default_batch)))
        self.kv_budget = int(_float(options, "kv_cache_mb", _available_bytes() / 2 / 2**20) * 2**20)
        self._batch = None  # BatchDecoder, built at the first batch (a second copy of the weights)
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

    def ocr_many(self, images: Iterable[Image.Image]) -> list[PageResult]:
        """Pages decoded together (continuous batching); results in input order."""
        runs = dict(self.run_many(images))
        return [runs[i].result for i in range(len(runs))]

    def run_many(self, images: Iterable[Image.Image]) -> Iterator[tuple[int, PageRun]]:
        """(input index, PageRun) for each image, as soon as its page is done (finish order)."""
        if self.batch_pages <= 1:
            for index, image in enumerate(images):
                yield index, self.run_page(image)
            return
        from model_cache.hunyuan.scheduler import BatchScheduler

        yield from BatchScheduler(self, self.batch_decoder(), self.kv_budget).run(images)

    def batch_decoder(self):
        if self._batch is None:
            from model_cache.hunyuan.batch_decoder import BatchDecoder

            self._batch = BatchDecoder(self.folder, self.cfg, self.graphs, self.batch_pages,
                                       host_attention=self.gpu, storage=self.storage, bf16_kv=self.bf16_kv)
            self.graphs.preload(self._batch.graph_names())
        return self._batch

    def kv_bytes_per_token(self) -> int:
        """K and V of every layer for one token, as the caches store them."""
        cfg = self.cfg
        low = self.bf16_kv or ((self.storage or cfg.dtype) == "bf16" and not self.gpu)
        return cfg.layers * 2 * cfg.kv_heads * cfg.head_dim * (2 if low else 4)

    def blank_run(self, image: Image.Image) -> PageRun | None:
        """The record of a page without ink, or None when the page has ink."""
        if not is_blank(image):
            return None
        gen = Generation([], [], "blank_page", np.zeros(0, dtype=np.float32), 0.0, 0.0)
        result = page_result("", [], image.width, image.height, self.name,
                             {"vision_s": 0.0, "prefill_s": 0.0, "decode_s": 0.0, "prompt_tokens": 0.0,
                              "new_tokens": 0.0, "decode_tok_s": 0.0}, ["blank_page"])
        return PageRun(result, gen, np.zeros((0, self.cfg.hidden), dtype=np.float32), [])

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
        blank = self.blank_run(image)
        if blank is not None:
            return blank
        inputs = self.prompt_inputs(image)
        sampler = Sampler(self.sampling, self.cfg.vocab)
        gen = generate(self.decoder, inputs.embeds, inputs.positions, inputs.ids, sampler, self.generation,
                       self.on_token)
        run = self.finish_page(image, inputs, gen)
        if self.low_memory:
            self.decoder.cache.reset()
            self.graphs.trim()  # hand cached activation blocks back between pages
        return run

    def finish_page(self, image: Image.Image, inputs: PromptInputs, gen: Generation,
                    extra_timings: dict[str, float] | None = None) -> PageRun:
        """The page's record: text, confidence, timings, and a warning when decoding was cut
        (a repeating tail dropped by the loop guard, or the max_new_tokens limit)."""
        text = self.tokenizer.decode(gen.tokens).strip()
        warnings = [gen.stop] if gen.stop in ("repetition_loop", "max_new_tokens") else []
        timings = {**_timings(inputs.vision_s, gen, len(inputs.ids)), **(extra_timings or {})}
        result = page_result(text, gen.probs, image.width, image.height, self.name, timings, warnings)
        return PageRun(result, gen, inputs.image_embeds, inputs.ids)

    def close(self) -> None:
        self.decoder.cache.reset()
        if self._batch is not None:
            self._batch.state = [None] * self._batch.slots
        self.graphs.close()


def _timings(vision_s: float, gen: Generation, prompt_len: int) -> dict[str, float]:
    decoded = max(len(gen.step_s), 1)
    return {"vision_s": vision_s, "prefill_s": gen.prefill_s, "decode_s": gen.decode_s,
            "prompt_tokens": float(prompt_len), "new_tokens": float(len(gen.tokens)),
            "decode_tok_s": decoded / max(sum(gen.step_s), 1e-9) if gen.step_s else 0.0}


def _available_bytes() -> int:
    """MemAvailable from /proc/meminfo (8 GiB where it cannot be read)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 * 2**30


def _int8_storage(cfg: ModelConfig, options: EngineOptions) -> str | None:
    """int8 folders: bf16 activations and KV cache in the decoder unless decoder_storage=fp32
    (measured 1.3x faster decode at 1438 tokens of context, logits error 0.082 vs 0.076 std)."""
    if cfg.dtype != "int8":
        return None
    return _choice(options, "decoder_storage", "bf16", ("bf16", "fp32"))


def _bf16_kv(cfg: ModelConfig, options: EngineOptions, storage: str | None, gpu: bool) -> bool:
    """kv_cache_dtype=bf16, where it changes something: not where the decoder already stores
    everything in bf16 (bf16 folders and int8's default on the CPU). CPU only: in a Vulkan net
    with host attention, bf16 storage gave NaN logits on lavapipe (ncnn's uploads between host
    and GPU layers follow the net's option, not the layer's featmask), so a GPU run refuses it
    rather than decode garbage."""
    wanted = _choice(options, "kv_cache_dtype", "fp32", KV_DTYPES) == "bf16"
    if wanted and gpu:
        raise EngineError("hunyuan option kv_cache_dtype=bf16 is for --device cpu (ncnn's bf16 "
                          "attention is the x86 one; on Vulkan it gave NaN logits)")
    return wanted and (storage or cfg.dtype) != "bf16"


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
