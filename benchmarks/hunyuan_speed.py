"""HunyuanOCR speed: ncnn engine (fp32 and a reduced-precision storage) beside transformers.

A full-size random-weight model is built from the published config sizes, saved as a checkpoint
and converted once (cached under ~/.cache/pagerunner/bench/hunyuan). Each measurement runs in
its own process so peak RSS is per configuration. Random weights never emit EOS, so decoding
is forced to a fixed number of tokens (EOS ignored, loop guard off).

    python benchmarks/hunyuan_speed.py [--threads 2] [--tokens 64] [--dtypes fp32,bf16,int8]
        [--device cpu|gpu] [--torch-device cpu|cuda|none] [--torch-dtype fp32|bf16]
        [--low-memory-tokens 8]

Both children run with OMP_WAIT_POLICY=PASSIVE unless the caller set it: ncnn and torch both use
libgomp, and with its default (spinning) policy a shared machine stalls every parallel region
(see model_cache/hunyuan/__init__.py); same policy on both sides keeps the comparison fair.

Prints a table: vision s, prompt tokens, prefill tok/s, time to first token, decode tok/s
(median of per-token times), peak RSS. That table is one page, and its transformers child syncs
per token (a streamer): use it for CPU-side profiles, not to compare the two engines on a GPU.

The fair comparison is --batches 1,8,32: both sides warm (the same shapes run once before the
timing), the same page prompt and token count, no per-token synchronisation on the transformers
side (generate() of 1 token for TTFT, of 1 + tokens for the decode rate), the ncnn engine through
its batch graph as ocr_many runs it; prints TTFT, per-page and aggregate decode tok/s, pages/hour
for an 800-token page and peak memory per batch size (child_ncnn_batches, child_torch_batches).
    python benchmarks/hunyuan_speed.py --batches 1,8,32 --dtypes fp16 --device gpu --threads 16 \
        --torch-device cuda --torch-dtype bf16 [--template CONVERTED_DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_CACHE = Path(os.environ.get("PAGERUNNER_HOME", Path.home() / ".cache" / "pagerunner")) / "bench" / "hunyuan"


def document_image(width: int = 1000, height: int = 1400):
    """A synthetic text page: lines of words on white, like a scanned letter."""
    import random

    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    rng = random.Random(0)
    words = "invoice total amount date payment account number reference order item".split()
    for y in range(60, height - 60, 28):
        line = " ".join(rng.choice(words) for _ in range(rng.randint(6, 12)))
        draw.text((60, y), line, fill="black")
    return image


def prepare(cache: Path, dtypes: list[str], log=print, size: str = "full") -> dict[str, Path]:
    """Build + convert the random model once; return {dtype: model_dir}."""
    from model_cache.hunyuan import random_checkpoint as rc
    from model_cache.manifest import MANIFEST_NAME

    ckpt = cache / "checkpoint"
    cache.mkdir(parents=True, exist_ok=True)
    if not (ckpt / "config.json").is_file():
        log(f"building full-size random checkpoint in {ckpt}")
        sizes = rc.FULL if size == "full" else rc.TINY
        model = rc.build_model(sizes, seed=0)
        tok = rc.build_tiny_tokenizer(cache / "tokenizer.json")
        rc.save_checkpoint(model, ckpt, sizes, tok)
        del model
    dirs = {}
    for dtype in dtypes:
        out = cache / f"ncnn-{dtype}"
        fp32 = cache / "ncnn-fp32"
        if not (out / MANIFEST_NAME).is_file():
            log(f"converting to {out}")
            # int8 is derived from a converted fp32 folder when there is one (no second tracing)
            source = ["--from-fp32", str(fp32)] if dtype == "int8" and (fp32 / MANIFEST_NAME).is_file() \
                else ["--checkpoint", str(ckpt)]
            subprocess.run([sys.executable, "-m", "model_cache.hunyuan.convert", *source,
                            "-o", str(out), "--dtype", dtype], check=True, cwd=ROOT)
        dirs[dtype] = out
    return dirs


def peak_rss_mb() -> float:
    """VmHWM of this process (ru_maxrss would carry the parent's peak across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def child_ncnn(model_dir: Path, threads: int, device: str, tokens: int, low_memory: bool,
               fused: str, options: str = "", warmup: bool = False) -> dict:
    from model_cache.engine import EngineOptions
    from model_cache.hunyuan.engine import create_engine

    extra = (("max_new_tokens", str(tokens + 1)), ("loop_guard", "0"), ("low_memory", "1" if low_memory else "0"))
    if fused:
        extra += (("fused_decoder", fused),)
    extra += tuple(tuple(kv.split("=", 1)) for kv in options.split(",") if kv)
    t0 = time.perf_counter()
    engine = create_engine(EngineOptions(threads=threads, device=device, model_dir=model_dir, extra=extra))
    load_s = time.perf_counter() - t0
    engine.generation = replace(engine.generation, eos_ids=frozenset())
    if warmup:  # first use of each pipeline/allocation, kept out of the timed page
        engine.run_page(document_image(320, 320))
    run = engine.run_page(document_image())
    gen, timings = run.generation, run.result.timings
    layers_s = statistics.median(s[0] for s in gen.split_s)
    head_s = statistics.median(s[1] for s in gen.split_s)
    prompt = int(timings["prompt_tokens"])
    return {"load_s": load_s, "vision_s": timings["vision_s"], "prompt_tokens": prompt,
            "prefill_tok_s": prompt / gen.prefill_s, "ttft_s": timings["vision_s"] + gen.prefill_s,
            "decode_tok_s": 1.0 / statistics.median(gen.step_s), "decoded": len(gen.step_s),
            "step_layers_ms": layers_s * 1e3, "step_head_ms": head_s * 1e3, "peak_rss_mb": peak_rss_mb()}


def child_torch(checkpoint: Path, threads: int, device: str, dtype: str, tokens: int,
                warmup: bool = False) -> dict:
    import torch
    from transformers import HunYuanVLForConditionalGeneration
    from transformers.models.hunyuan_vl.image_processing_pil_hunyuan_vl import HunYuanVLImageProcessorPil

    from model_cache.hunyuan.ids import SpecialIds
    from model_cache.hunyuan.prompt import DEFAULT_PROMPT
    from model_cache.hunyuan.tokenizer import TextTokenizer

    torch.set_num_threads(threads)
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    model = HunYuanVLForConditionalGeneration.from_pretrained(checkpoint, dtype=torch_dtype).to(device).eval()
    pre = json.loads((checkpoint / "preprocessor_config.json").read_text())
    proc = HunYuanVLImageProcessorPil(min_pixels=pre["min_pixels"], max_pixels=pre["max_pixels"])
    ids = SpecialIds()
    text_ids = TextTokenizer(checkpoint / "tokenizer.json").encode(DEFAULT_PROMPT)
    stamps: list[float] = []
    vision: list[float] = []
    tower = model.model.vision_tower
    tower.register_forward_pre_hook(lambda *_: vision.append(_sync(torch, device)))
    tower.register_forward_hook(lambda *_: vision.append(_sync(torch, device)))
    if warmup:  # CUDA context, cuBLAS handles and kernel loading, kept out of the timing
        small = proc(document_image(320, 320), return_tensors="pt")
        sh, sw = small["image_grid_thw"][0, 1:].tolist()
        n = (sh // 2) * (sw // 2 + 1) + 2
        ids_small = torch.tensor([[ids.bos, ids.image_start] + [ids.image] * n + [ids.image_end, ids.assistant]],
                                 device=device)
        with torch.no_grad():
            model.generate(input_ids=ids_small, attention_mask=torch.ones_like(ids_small),
                           pixel_values=small["pixel_values"].to(device, torch_dtype),
                           image_grid_thw=small["image_grid_thw"].to(device),
                           mm_token_type_ids=(ids_small == ids.image).int(), max_new_tokens=2, do_sample=False)
        vision.clear()
    t0 = time.perf_counter()
    pix = proc(document_image(), return_tensors="pt")
    gh, gw = pix["image_grid_thw"][0, 1:].tolist()
    count = (gh // 2) * (gw // 2 + 1) + 2
    prompt = [ids.bos, ids.image_start] + [ids.image] * count + [ids.image_end] + text_ids + [ids.assistant]
    input_ids = torch.tensor([prompt], device=device)

    class Stamp:
        def put(self, value):
            stamps.append(_sync(torch, device))

        def end(self):
            pass

    with torch.no_grad():
        model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                       pixel_values=pix["pixel_values"].to(device, torch_dtype),
                       image_grid_thw=pix["image_grid_thw"].to(device),
                       mm_token_type_ids=(input_ids == ids.image).int(), max_new_tokens=tokens + 1,
                       min_new_tokens=tokens + 1, do_sample=False, streamer=Stamp())
    # stamps[0]: prompt pushed; stamps[1]: first generated token; then one per token
    steps = [b - a for a, b in zip(stamps[1:], stamps[2:])]
    return {"load_s": 0.0, "vision_s": vision[1] - vision[0], "prompt_tokens": len(prompt),
            "prefill_tok_s": len(prompt) / (stamps[1] - vision[1]), "ttft_s": stamps[1] - t0,
            "decode_tok_s": 1.0 / statistics.median(steps), "decoded": len(steps),
            "peak_rss_mb": peak_rss_mb()}


_KEEP: list = []


def child_ncnn_batches(model_dir: Path, threads: int, device: str, batches: list[int], tokens: int,
                       single_threads: list[int] | None = None) -> dict:
    """Warm, side-by-side-comparable batch figures for the engine: one page's vision and prefill
    (run twice, the second timed), `tokens` steps of the one-page path, then for each batch size
    N, N prefilled copies of that page decode `tokens` steps together through the batch graph (a
    warm-up round of 4 steps first), choosing every token as the scheduler does (repetition
    penalty, greedy, per page). The prefilled pages are reused by the next batch size, whose
    context is then up to 2 x (4 + tokens) longer. Every row also splits a step into the decoder
    graph, the LM head and the rest (embedding, inputs, sampling: Python). single_threads: the
    one-page path again with each of these thread counts (net.opt.num_threads, set after load)."""
    import numpy as np

    from model_cache.engine import EngineOptions
    from model_cache.hunyuan.batch_decoder import BatchDecoder, Slot
    from model_cache.hunyuan.engine import HunyuanEngine
    from model_cache.hunyuan.generate import TokenStream
    from model_cache.hunyuan.model_config import ModelConfig
    from model_cache.hunyuan.sampling import Sampler
    from model_cache.manifest import Manifest

    cfg = ModelConfig.from_meta(Manifest.load(model_dir).meta)
    options = EngineOptions(threads=threads, device=device, model_dir=model_dir,
                            extra=(("loop_guard", "0"), ("batch_pages", "1")))
    t0 = time.perf_counter()
    engine = HunyuanEngine(model_dir, cfg, options)  # the manifest's hashes are not re-checked here
    load_s = time.perf_counter() - t0
    engine.generation = replace(engine.generation, eos_ids=frozenset(), max_new_tokens=10**6, guard=None)
    image = document_image()
    for _ in range(2):
        inputs = engine.prompt_inputs(image)
        t1 = time.perf_counter()
        first = engine.decoder.prefill(inputs.embeds, inputs.positions)
        prefill_s = time.perf_counter() - t1
    cache, decoder = engine.decoder.cache, engine.decoder
    pool: list[Slot] = []  # prefilled pages, shared by the batch sizes (their caches grow a little)

    def prefilled(n: int) -> list[Slot]:
        while len(pool) < n:
            decoder.prefill(inputs.embeds, inputs.positions)
            pool.append(Slot(list(cache.keys), list(cache.values), cache.length, decoder.delta))
            cache.reset()
        return pool[:n]

    def streams(n: int) -> list[TokenStream]:
        out = [TokenStream(Sampler(engine.sampling, cfg.vocab), engine.generation, inputs.ids) for _ in range(n)]
        for stream in out:
            stream.push(first)
        return out

    def one_page() -> dict:
        """`tokens` steps of the engine's one-page path (Decoder.step) on a fresh prefill."""
        decoder.prefill(inputs.embeds, inputs.positions)
        single = streams(1)[0]
        times, splits = [], []
        for _ in range(4 + tokens):
            ts = time.perf_counter()
            single.push(decoder.step(single.last))
            times.append(time.perf_counter() - ts)
            splits.append(decoder.step_split)
        cache.reset()
        graph_s = statistics.median(s[0] for s in splits[4:])
        head_s = statistics.median(s[1] for s in splits[4:])
        step_s = statistics.median(times[4:])
        return {"step_s": step_s, "n": 1, "graph_ms": graph_s * 1e3, "head_ms": head_s * 1e3,
                "rest_ms": (step_s - graph_s - head_s) * 1e3}

    rows = {"single": one_page()}
    for count in single_threads or []:
        for net in engine.graphs._nets.values():
            net.opt.num_threads = count
        rows[f"single, {count} threads"] = one_page()
        print(f"ncnn one page, {count} threads: {rows[f'single, {count} threads']}", file=sys.stderr, flush=True)
    for net in engine.graphs._nets.values():
        net.opt.num_threads = threads
    for n in batches:
        batch = BatchDecoder(model_dir, cfg, engine.graphs, n, host_attention=engine.gpu, storage=engine.storage)
        engine.graphs.preload(batch.graph_names())
        slots = prefilled(n)
        for steps in (4, tokens):  # warm-up round at the same shapes, then the timed one
            pages = streams(n)
            for j, stream in enumerate(pages):
                slots[j].token = stream.last
                batch.state[j] = slots[j]
            ts = time.perf_counter()
            graph_s = head_s = 0.0
            for _ in range(steps):
                hidden = batch.step(decoder.embed)
                th = time.perf_counter()
                logits = decoder.logits_rows(np.stack([hidden[j] for j in range(n)]))
                graph_s, head_s = graph_s + batch.step_s, head_s + time.perf_counter() - th
                for j, stream in enumerate(pages):
                    stream.push(logits[j])
                    batch.state[j].token = stream.last
            elapsed = time.perf_counter() - ts
        rows[str(n)] = {"step_s": elapsed / tokens, "n": n, "context": slots[0].length,
                        "graph_ms": graph_s / tokens * 1e3, "head_ms": head_s / tokens * 1e3,
                        "rest_ms": (elapsed - graph_s - head_s) / tokens * 1e3}
        batch.state = [None] * n
        print(f"ncnn batch {n}: {elapsed / tokens * 1e3:.1f} ms/step", file=sys.stderr, flush=True)
    _KEEP.append((engine, pool))  # alive until os._exit: ncnn aborts when its allocators go first
    return {"engine": "ncnn", "load_s": load_s, "vision_s": inputs.vision_s, "prefill_s": prefill_s,
            "prompt_tokens": len(inputs.ids), "rows": rows, "peak_rss_mb": peak_rss_mb()}


def child_torch_batches(template: Path, device: str, dtype: str, batches: list[int], tokens: int,
                        size: str = "full") -> dict:
    """transformers' generate() on a random full-size model built on the device, N copies of the
    same page prompt per call: warm-up call at the same shapes first; TTFT = generate() of one
    token (vision + prefill of the batch), decode step = (generate of 1 + tokens) - TTFT, over
    tokens; one synchronisation per call, none per token."""
    import torch
    from transformers import HunYuanVLConfig, HunYuanVLForConditionalGeneration
    from transformers.models.hunyuan_vl.image_processing_pil_hunyuan_vl import HunYuanVLImageProcessorPil

    from model_cache.hunyuan import random_checkpoint as rc
    from model_cache.hunyuan.ids import SpecialIds
    from model_cache.hunyuan.prompt import DEFAULT_PROMPT
    from model_cache.hunyuan.tokenizer import TextTokenizer

    ids, sizes = SpecialIds(), (rc.FULL if size == "full" else rc.TINY)
    config = HunYuanVLConfig(text_config=rc.text_config(sizes, ids), vision_config=rc.vision_config(sizes),
                             image_token_id=ids.image, im_start_id=ids.image_start, im_end_id=ids.image_end,
                             im_newline_id=ids.newline, tie_word_embeddings=True)
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    t0 = time.perf_counter()
    with torch.device(device):
        model = HunYuanVLForConditionalGeneration(config).to(torch_dtype).eval()
    load_s = time.perf_counter() - t0
    proc = HunYuanVLImageProcessorPil(min_pixels=sizes.min_pixels, max_pixels=sizes.max_pixels)
    pix = proc(document_image(), return_tensors="pt")
    gh, gw = pix["image_grid_thw"][0, 1:].tolist()
    count = (gh // 2) * (gw // 2 + 1) + 2
    text_ids = TextTokenizer(template / "tokenizer.json").encode(DEFAULT_PROMPT)
    prompt = [ids.bos, ids.image_start] + [ids.image] * count + [ids.image_end] + text_ids + [ids.assistant]
    rows = {}
    for n in batches:
        input_ids = torch.tensor([prompt] * n, device=device)
        kwargs = dict(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                      pixel_values=pix["pixel_values"].repeat(n, 1).to(device, torch_dtype),
                      image_grid_thw=pix["image_grid_thw"].repeat(n, 1).to(device),
                      mm_token_type_ids=(input_ids == ids.image).int(), do_sample=False,
                      repetition_penalty=1.08)

        def generate(new: int) -> float:
            _sync(torch, device)
            ts = time.perf_counter()
            with torch.no_grad():
                model.generate(**kwargs, max_new_tokens=new, min_new_tokens=new)
            return _sync(torch, device) - ts

        generate(4)  # warm-up at the same shapes
        if device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats()
        ttft = generate(1)
        total = generate(tokens + 1)
        peak = torch.cuda.max_memory_allocated() / 2**20 if device.startswith("cuda") else 0.0
        rows[str(n)] = {"ttft_s": ttft, "step_s": (total - ttft) / tokens, "n": n, "gpu_peak_mb": peak}
    return {"engine": "transformers", "load_s": load_s, "prompt_tokens": len(prompt), "rows": rows,
            "peak_rss_mb": peak_rss_mb()}


def print_batch_table(results: list[dict], page_tokens: int = 800) -> None:
    """Per batch size: TTFT (first token of every page of the batch), per-page and aggregate
    decode tok/s, pages/hour for `page_tokens`-token pages, peak memory."""
    head = (f"{'engine':44} {'batch':>5} {'TTFT s':>8} {'page tok/s':>11} {'all tok/s':>10} "
            f"{'pages/hour':>11} {'peak MB':>9} {'step ms: graph/head/rest':>25}")
    print(head + "\n" + "-" * len(head))
    for res in results:
        if "error" in res:
            print(f"{res.get('label', '?'):34} error: {res['error']}")
            continue
        for key, row in res["rows"].items():
            n, step = row["n"], row["step_s"]
            if res["engine"] == "ncnn":  # pages are encoded and prefilled one after another
                ttft = n * (res["vision_s"] + res["prefill_s"])
            else:
                ttft = row["ttft_s"]
            pages_hour = 3600.0 * n / (ttft + (page_tokens - 1) * step)
            peak = row.get("gpu_peak_mb") or res["peak_rss_mb"]
            label = res["label"] + (" one-page path" + key[6:] if key.startswith("single") else "")
            split = "/".join(f"{row[k]:.1f}" for k in ("graph_ms", "head_ms", "rest_ms")) if "graph_ms" in row else ""
            print(f"{label:44} {n:5d} {ttft:8.2f} {1 / step:11.1f} {n / step:10.1f} {pages_hour:11.0f} {peak:9.0f} "
                  f"{split:>25}")


def _sync(torch, device: str) -> float:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter()


def run_child(args: list[str]) -> dict:
    t0 = time.perf_counter()
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=ROOT, env=env)
    if proc.returncode != 0:
        result = {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    else:
        result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - t0
    print(json.dumps(result), file=sys.stderr, flush=True)  # partial results survive a timeout
    return result


def print_table(rows: list[tuple[str, dict]]) -> None:
    head = (f"{'engine':34} {'vision s':>9} {'prompt':>7} {'prefill tok/s':>14} {'TTFT s':>8} "
            f"{'decode tok/s':>13} {'peak RSS MB':>12}")
    print(head)
    print("-" * len(head))
    for name, r in rows:
        if "error" in r:
            print(f"{name:34} error: {r['error']}")
            continue
        print(f"{name:34} {r['vision_s']:9.2f} {r['prompt_tokens']:7d} {r['prefill_tok_s']:14.1f} "
              f"{r['ttft_s']:8.2f} {r['decode_tok_s']:13.2f} {r['peak_rss_mb']:12.0f}")


def batch_main(args) -> int:
    """ncnn (each dtype) then transformers, each in its own process, same page and token count."""
    common = ["--threads", str(args.threads), "--tokens", str(args.tokens), "--batches", args.batches]
    results = []
    if args.template is not None:
        from benchmarks.hunyuan_random_folder import write_folder

        dtype = args.dtypes.split(",")[0]
        folder = args.cache / f"random-{dtype}"
        if not (folder / "manifest.json").is_file():
            print(f"writing {folder}", file=sys.stderr, flush=True)
            write_folder(args.template, folder, dtype)
        dirs = {dtype: folder}
    else:
        dirs = prepare(args.cache, [d for d in args.dtypes.split(",") if d], log=lambda m: print(m, file=sys.stderr))
    for dtype, folder in dirs.items():
        res = run_child(["--child", "ncnn-batch", "--model-dir", str(folder), "--device", args.device, *common,
                         "--single-threads", args.single_threads])
        res["label"] = f"ncnn {dtype} ({args.device})"
        results.append(res)
    if args.torch_device != "none":
        template = args.template or next(iter(dirs.values()))
        res = run_child(["--child", "torch-batch", "--template", str(template), "--size", args.size, "--torch-device",
                         args.torch_device, "--torch-dtype", args.torch_dtype, *common])
        res["label"] = f"transformers {args.torch_dtype} ({args.torch_device})"
        results.append(res)
    print_batch_table(results)
    print(json.dumps(results), file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--dtypes", default="fp32,bf16")
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument("--torch-device", default="cpu")
    parser.add_argument("--torch-dtype", default="fp32", choices=("fp32", "bf16"))
    parser.add_argument("--low-memory-tokens", type=int, default=8, help="0 to skip the low-memory run")
    parser.add_argument("--child", choices=("ncnn", "torch", "ncnn-batch", "torch-batch"), help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--low-memory", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--fused", default="", help=argparse.SUPPRESS)
    parser.add_argument("--options", default="", help=argparse.SUPPRESS)
    parser.add_argument("--warmup", action="store_true",
                        help="one small page first in each process (use on GPUs: pipeline/kernel setup)")
    parser.add_argument("--variant", action="append", default=[],
                        help="extra ncnn row: LABEL:key=value,key=value (engine options), e.g. "
                             "'device attention:host_attention=0'")
    parser.add_argument("--batches", default="",
                        help="e.g. 1,8,32: the warm batch comparison (ncnn engine vs transformers) instead")
    parser.add_argument("--template", type=Path,
                        help="with --batches: write the ncnn folder from this converted folder's graph "
                             "texts with random weights (benchmarks/hunyuan_random_folder.py) instead of converting")
    parser.add_argument("--single-threads", default="",
                        help="with --batches: the ncnn one-page path again at these thread counts, e.g. 4,8")
    parser.add_argument("--size", default="full", choices=("full", "tiny"), help="tiny: smoke test of this script")
    parser.add_argument("--unfused-tokens", type=int, default=0,
                        help="also time the per-layer decoder graphs (default on cpu; the naive loop on gpu)")
    args = parser.parse_args()

    if args.child == "ncnn":
        print(json.dumps(child_ncnn(args.model_dir, args.threads, args.device, args.tokens, args.low_memory,
                                    args.fused, args.options, args.warmup)))
        return 0
    batches = [int(b) for b in args.batches.split(",") if b]
    if args.child == "ncnn-batch":
        single = [int(t) for t in args.single_threads.split(",") if t]
        print(json.dumps(child_ncnn_batches(args.model_dir, args.threads, args.device, batches, args.tokens, single)))
        sys.stdout.flush()
        os._exit(0)  # skip teardown: ncnn complains when allocators go before the cloned caches
    if args.child == "torch-batch":
        print(json.dumps(child_torch_batches(args.template, args.torch_device, args.torch_dtype, batches,
                                             args.tokens, args.size)))
        return 0
    if batches:
        return batch_main(args)
    if args.child == "torch":
        print(json.dumps(child_torch(args.cache / "checkpoint", args.threads, args.torch_device,
                                     args.torch_dtype, args.tokens, args.warmup)))
        return 0

    dtypes = [d for d in args.dtypes.split(",") if d]
    dirs = prepare(args.cache, dtypes, log=lambda m: print(m, file=sys.stderr), size=args.size)
    common = ["--threads", str(args.threads), "--cache", str(args.cache), *(["--warmup"] if args.warmup else [])]
    rows = []
    for dtype, folder in dirs.items():
        print(f"ncnn {dtype} {args.device} ...", file=sys.stderr)
        res = run_child(["--child", "ncnn", "--model-dir", str(folder), "--device", args.device,
                         "--tokens", str(args.tokens), *common])
        rows.append((f"ncnn {dtype} ({args.device}, {args.threads} thr)", res))
    if args.unfused_tokens > 0 and dirs:
        dtype, folder = next(iter(dirs.items()))
        res = run_child(["--child", "ncnn", "--model-dir", str(folder), "--device", args.device, "--fused", "0",
                         "--tokens", str(args.unfused_tokens), *common])
        rows.append((f"ncnn {dtype} per-layer graphs ({args.device})", res))
    for spec in args.variant:
        label, _, options = spec.partition(":")
        dtype, folder = next(iter(dirs.items()))
        res = run_child(["--child", "ncnn", "--model-dir", str(folder), "--device", args.device,
                         "--options", options, "--tokens", str(args.tokens), *common])
        rows.append((f"ncnn {dtype} {label} ({args.device})", res))
    if args.low_memory_tokens > 0 and dirs:
        dtype, folder = next(iter(dirs.items()))
        print(f"ncnn {dtype} low-memory ...", file=sys.stderr)
        res = run_child(["--child", "ncnn", "--model-dir", str(folder), "--device", args.device, "--low-memory",
                         "--tokens", str(args.low_memory_tokens), *common])
        rows.append((f"ncnn {dtype} low-memory ({args.device})", res))
    if args.torch_device != "none":
        print(f"transformers {args.torch_device} {args.torch_dtype} ...", file=sys.stderr)
        res = run_child(["--child", "torch", "--torch-device", args.torch_device, "--torch-dtype",
                         args.torch_dtype, "--tokens", str(args.tokens), *common])
        rows.append((f"transformers {args.torch_dtype} ({args.torch_device}, {args.threads} thr)", res))
    print_table(rows)
    print(json.dumps({name: r for name, r in rows}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
