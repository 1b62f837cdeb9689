"""HunyuanOCR decode step on CPU: the engine's Decoder, several configurations interleaved in one
process (on a shared machine, only side-by-side medians and ratios mean anything).

Uses the random-weight model that benchmarks/hunyuan_speed.py builds and converts (run that once
with the dtypes wanted, e.g. --dtypes fp32,bf16,int8; int8 is derived from the fp32 folder).
Each configuration prefills the same random prompt (--context tokens, vision skipped), then all
take decode steps in turn, alternating the order. The OpenMP wait policy is per process
(OMP_WAIT_POLICY; model_cache.hunyuan sets PASSIVE unless given): compare policies by running
this twice.

    python benchmarks/hunyuan_decode_step.py [--configs fp32:2,bf16:2,int8:2,int8/fp32:2,fp32+kvbf16:2]
        [--context 1438] [--steps 16] [--fused] [--batch 1,8]

--batch N[,M...]: per configuration, also N pages (each its own prefill of a random prompt)
stepping together through the batch graph (model_cache/hunyuan/batch_decoder.py, LM head on N
rows), interleaved with the one-page steps; reports per-step ms and aggregate tok/s against one
page. "graph ms" is the time inside the decoder graph(s) of a step (for the one-page path the
24 layer graphs and the Python between them), "host ms" what the step spends outside them and
the LM head (embedding, RoPE tables, masks, inputs and extracts).

A config is dtype[/decoder storage][+kvbf16]:threads; int8 runs with bf16 activations and KV
cache (the engine's default) unless written int8/fp32; +kvbf16 keeps the attention and its KV
caches in bf16 under the folder's weights (engine option kv_cache_dtype=bf16).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.hunyuan_speed import DEFAULT_CACHE  # noqa: E402


def build(folder: Path, threads: int, fused: bool, storage: str | None = None, bf16_kv: bool = False):
    from model_cache.hunyuan.decoder import Decoder
    from model_cache.hunyuan.graphs import GraphStore, NetSettings
    from model_cache.hunyuan.model_config import ModelConfig
    from model_cache.manifest import Manifest

    cfg = ModelConfig.from_meta(Manifest.load(folder).meta)
    graphs = GraphStore(folder, NetSettings(threads=threads, dtype=cfg.dtype))
    decoder = Decoder(folder, cfg, graphs, cfg.rope_variant, fused=fused, storage=storage, bf16_kv=bf16_kv)
    graphs.preload(decoder.graph_names())
    return decoder


class BatchStep:
    """N prefilled pages stepping together, with Decoder.step's interface for the timing loop."""

    def __init__(self, decoder, pages: int, rng, context: int, storage: str | None, bf16_kv: bool = False):
        import numpy as np

        from model_cache.hunyuan.batch_decoder import BatchDecoder

        self.decoder, self.pages, self.rng = decoder, pages, rng
        self.batch = BatchDecoder(decoder.graphs.folder, decoder.cfg, decoder.graphs, pages, storage=storage,
                                  bf16_kv=bf16_kv)
        decoder.graphs.preload(self.batch.graph_names())
        axes = len(decoder.cfg.mrope_section)
        saved = (decoder.cache.keys, decoder.cache.values, decoder.cache.length, decoder.delta)
        for j in range(pages):
            t0 = time.perf_counter()
            embeds = decoder.embed(rng.randint(0, decoder.cfg.vocab - 1000, context))
            decoder.cache.reset()
            decoder.prefill(embeds, np.tile(np.arange(context), (axes, 1)))
            self.batch.admit(j, decoder, 0)
            print(f"  batch page {j}: prefill {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        decoder.cache.keys, decoder.cache.values, decoder.cache.length, decoder.delta = saved
        self.cfg = decoder.cfg
        self.step_split = (0.0, 0.0)

    def step(self, token: int) -> None:
        import numpy as np

        for j in range(self.pages):
            self.batch.state[j].token = int(self.rng.randint(0, self.cfg.vocab - 1000))
        hidden = self.batch.step(self.decoder.embed)
        t1 = time.perf_counter()
        self.decoder.logits_rows(np.stack([hidden[j] for j in range(self.pages)]))
        self.step_split = (self.batch.step_s, time.perf_counter() - t1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--configs", default="fp32:2,bf16:2,int8:2", help="dtype:threads,...")
    parser.add_argument("--context", type=int, default=1438)
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--fused", action="store_true", help="one graph for all layers (the Vulkan layout)")
    parser.add_argument("--batch", default="", help="also N[,M...] pages per step through the batch graph")
    args = parser.parse_args()

    import numpy as np

    rng = np.random.RandomState(0)
    runs = []
    for spec in args.configs.split(","):
        dtype, threads = spec.split(":")
        dtype, kv_flag, _ = dtype.partition("+kvbf16")
        bf16_kv = bool(kv_flag)
        dtype, _, storage = dtype.partition("/")
        if dtype == "int8" and not storage:
            storage = "bf16"  # the engine's default for int8 folders
        decoder = build(args.cache / f"ncnn-{dtype}", int(threads), args.fused, storage or None, bf16_kv)
        embeds = decoder.embed(rng.randint(0, decoder.cfg.vocab - 1000, args.context))
        t0 = time.perf_counter()
        decoder.prefill(embeds, np.tile(np.arange(args.context), (len(decoder.cfg.mrope_section), 1)))
        print(f"{spec}: prefill {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        label = (f"{dtype}/{storage}" if storage else dtype) + (", kv bf16" if bf16_kv else "")
        runs.append((f"ncnn {label}, {threads} thr", decoder, [], [], [], []))
        for pages in (int(n) for n in args.batch.split(",") if n):
            runs.append((f"ncnn {label}, {threads} thr, batch of {pages}",
                         BatchStep(decoder, pages, rng, args.context, storage or None, bf16_kv), [], [], [], []))
    for i in range(args.steps):
        for _, decoder, steps, heads, cpu, inner in runs if i % 2 == 0 else runs[::-1]:
            t0, c0 = time.perf_counter(), time.process_time()
            decoder.step(int(rng.randint(0, decoder.cfg.vocab - 1000)))
            steps.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            heads.append(decoder.step_split[1])
            inner.append(decoder.step_split[0])
    print(f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}, context {args.context}, "
          f"{args.steps} steps each (first dropped), {'fused graph' if args.fused else 'per-layer graphs'}")
    # CPU ms: all threads' CPU time per step; less moved by other processes than wall time
    # tok/s counts every page's token (aggregate); "vs one page" compares tok/s with the one-page
    # path of the same configuration (batch rows: the aggregate against one page)
    head = (f"{'config':40} {'step ms':>8} {'graph ms':>9} {'LM head ms':>11} {'host ms':>8} {'tok/s':>7} "
            f"{'vs one page':>12} {'CPU ms':>7} {'CPU/token vs one page':>22}")
    print(head + "\n" + "-" * len(head))
    for name, decoder, steps, heads, cpu, inner in runs:
        if not isinstance(decoder, BatchStep):
            base, base_cpu = statistics.median(steps[1:]), statistics.median(cpu[1:])
        step, cpu_step = statistics.median(steps[1:]), statistics.median(cpu[1:])
        graph, lm = statistics.median(inner[1:]), statistics.median(heads[1:])
        host = statistics.median(s - g - h for s, g, h in zip(steps[1:], inner[1:], heads[1:]))
        pages = getattr(decoder, "pages", 1)
        print(f"{name:40} {step * 1e3:8.0f} {graph * 1e3:9.0f} {lm * 1e3:11.1f} {host * 1e3:8.1f} "
              f"{pages / step:7.2f} {pages * base / step:11.2f}x {cpu_step * 1e3:7.0f} "
              f"{pages * base_cpu / cpu_step:21.2f}x")
    sys.stdout.flush()
    os._exit(0)  # skip teardown: ncnn complains when allocators go before the nets' caches


if __name__ == "__main__":
    raise SystemExit(main())
