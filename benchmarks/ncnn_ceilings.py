"""What ncnn's CPU kernels can deliver on this machine, for the speed targets of both engines.

Every graph here is synthetic (random weights, written to a temporary folder), so nothing needs
a converted model. Each figure is the median of repeated runs (after one warm-up run).

    python benchmarks/ncnn_ceilings.py [--threads 2] [--only bandwidth,gemv,vision,conv]

- bandwidth: how fast numpy reads a 1 GiB array, one process per thread at once (GB/s, total).
- gemv: HunyuanOCR decode shapes, M=1 (40 distinct 1024 x N weights, too many to stay cached):
  weights streamed per second by ncnn's Gemm in fp32, int8 per tensor (18=2: ncnn's classic
  int8 GEMM) and int8 blocks of 32 / 128 (18=800/802, what `--dtype int8` uses).
- vision: one HunyuanOCR vision block (1152 wide, 16 heads, MLP 4304) over 5456 patches in
  fp32, with int8 block-quantized linear layers, and with int8 attention as well (SDPA 18=2).
- conv: the 1x1 convolutions that carry ~80 % of the PP-OCRv5 recogniser's FLOPs, fp32 direct
  (the engine's setting), fp32 im2col, and int8 (im2col).
- recogniser: the shipped recogniser's arithmetic per crop column (from its layers' output
  shapes), the crop columns of a dense page of the kit (maint-guide p3 at 200 dpi), and the
  rate the engine reaches on them.
"""

from __future__ import annotations

import argparse
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ncnn  # noqa: E402

from model_cache.hunyuan.quantize import quantize_rows  # noqa: E402

INT8_TAG = 0x000D4B38
RNG = np.random.default_rng(0)


def median_ms(run, repeats: int) -> float:
    run()  # first run: pipeline and buffer setup
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def load_net(folder: Path, name: str, param: str, weights: bytes, threads: int, sgemm: bool = True) -> ncnn.Net:
    (folder / f"{name}.param").write_text(param)
    (folder / f"{name}.bin").write_bytes(weights)
    net = ncnn.Net()
    net.opt.num_threads = threads
    net.opt.use_sgemm_convolution = sgemm
    net.opt.use_winograd_convolution = sgemm
    if net.load_param(str(folder / f"{name}.param")) or net.load_model(str(folder / f"{name}.bin")):
        raise SystemExit(f"ncnn could not load {name}")
    return net


def runner(net: ncnn.Net, array: np.ndarray, output: str):
    def run() -> None:
        with net.create_extractor() as ex:
            ex.input("in0", ncnn.Mat(array))
            ret, _ = ex.extract(output)
            if ret:
                raise SystemExit(f"extract failed ({ret})")
    return run


def graph(layers: list[str], blobs: int) -> str:
    return f"7767517\n{len(layers)} {blobs}\n" + "\n".join(layers) + "\n"


# --- bandwidth ---------------------------------------------------------------------------------

def bandwidth(threads: int) -> None:
    code = ("import numpy as np, time; a = np.ones(1 << 28, np.float32); a.sum(); t = time.perf_counter(); "
            "[a.sum() for _ in range(4)]; print(4 * a.nbytes / (time.perf_counter() - t) / 1e9)")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(threads)]
    rates = [float(p.communicate()[0]) for p in procs]
    print(f"\n## Memory read bandwidth\n\n{threads} processes reading 1 GiB each at once: "
          f"{sum(rates):.1f} GB/s in total ({', '.join(f'{r:.1f}' for r in rates)})")


# --- gemv --------------------------------------------------------------------------------------

def gemv_graph(n: int, k: int, count: int, mode: str) -> tuple[str, bytes]:
    layers = ["Input in0 0 1 in0", "Split split 1 %d in0 %s" % (count, " ".join(f"x{i}" for i in range(count)))]
    weights = bytearray()
    for i in range(count):
        w = RNG.standard_normal((n, k), dtype=np.float32) * 0.02
        if mode == "fp32":
            term = ""
            weights += struct.pack("<I", 0) + w.tobytes()
        elif mode == "int8 per tensor":
            scale = 127 / np.abs(w).max()
            q = np.clip(np.rint(w * scale), -127, 127).astype(np.int8)
            term = " 18=2"
            weights += struct.pack("<I", INT8_TAG) + q.tobytes() + b"\0" * (-q.size % 4)
            weights += np.float32(scale).tobytes()
        else:
            block = int(mode.rsplit(" ", 1)[1])
            q, scales = quantize_rows(w, block)
            term = f" 18={800 + {32: 0, 64: 1, 128: 2}[block]}"
            weights += q.tobytes() + scales.astype("<f4").tobytes()
        layers.append(f"Gemm g{i} 1 1 x{i} o{i} 2=0 3=1 4=0 5=1 6=0 7=0 8={n} 9={k}{term}")
    total = "o0"
    for i in range(1, count):  # one extract runs every Gemm
        layers.append(f"BinaryOp add{i} 2 1 {total} o{i} s{i} 0=0")
        total = f"s{i}"
    return graph(layers, 1 + 2 * count + count - 1), bytes(weights)


def gemv(threads: int, repeats: int) -> None:
    print("\n## GEMV (decode step shapes, M=1), weights per second\n")
    print("| N x K | fp32 | int8 per tensor | int8 blocks of 32 | int8 blocks of 128 |")
    print("| --- | ---: | ---: | ---: | ---: |")
    modes = ["fp32", "int8 per tensor", "int8 blocks 32", "int8 blocks 128"]
    count, k = 40, 1024
    x = RNG.standard_normal((1, k), dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        for n in (3584, 8192):
            runs = {}
            for mode in modes:
                param, weights = gemv_graph(n, k, count, mode)
                net = load_net(Path(tmp), mode.replace(" ", "_"), param, weights, threads)
                runs[mode] = (net, runner(net, x, f"s{count - 1}"))
            cells = []
            for mode in modes:
                ms = median_ms(runs[mode][1], repeats)
                cells.append(f"{count * n * k / ms / 1e6:.1f} G/s")
            print(f"| {n} x {k} | " + " | ".join(cells) + " |")


# --- vision block ------------------------------------------------------------------------------

def vision_block(quantize_linear: bool, int8_attention: bool) -> tuple[str, bytes]:
    d, heads, mlp = 1152, 16, 4304
    head = d // heads
    weights = bytearray()

    def norm() -> None:
        nonlocal weights
        weights += np.ones(d, np.float32).tobytes() + np.zeros(d, np.float32).tobytes()

    def linear(n: int, k: int) -> str:
        nonlocal weights
        w = RNG.standard_normal((n, k), dtype=np.float32) / np.sqrt(k)
        bias = struct.pack("<I", 0) + np.zeros(n, np.float32).tobytes()
        if quantize_linear:
            q, scales = quantize_rows(w, 32)
            weights += q.tobytes() + bias + scales.astype("<f4").tobytes()
            return " 18=800"
        weights += struct.pack("<I", 0) + w.tobytes() + bias
        return ""

    gemm = "2=0 3=1 4=0 5=1 6=1 7=0 10=4"
    layers = ["Input in0 0 1 in0", "Split sp0 1 2 in0 res0 x"]
    norm()
    layers.append(f"LayerNorm ln0 1 1 x xn 0={d} 1=1e-5 2=1")
    layers.append("Split sp1 1 3 xn xq xk xv")
    for name in ("q", "k", "v"):
        term = linear(d, d)
        layers.append(f"Gemm g{name} 1 1 x{name} {name}0 {gemm} 8={d} 9={d}{term}")
        layers.append(f'Reshape r{name} 1 1 {name}0 {name}1 6="{head},{heads},0h"')
        layers.append(f"Permute p{name} 1 1 {name}1 {name}2 0=2")
    layers.append("SDPA attn 3 1 q2 k2 v2 a0 5=0 6=1.0" + (" 18=2" if int8_attention else ""))
    layers.append("Permute pa 1 1 a0 a1 0=2")
    layers.append(f'Reshape ra 1 1 a1 a2 6="{d},0c"')
    term = linear(d, d)
    layers.append(f"Gemm go 1 1 a2 o0 {gemm} 8={d} 9={d}{term}")
    layers.append("BinaryOp add0 2 1 res0 o0 h0 0=0")
    layers.append("Split sp2 1 2 h0 res1 h1")
    norm()
    layers.append(f"LayerNorm ln1 1 1 h1 hn 0={d} 1=1e-5 2=1")
    term = linear(mlp, d)
    layers.append(f"Gemm gu 1 1 hn u0 {gemm} 8={mlp} 9={d}{term}")
    layers.append("GELU gelu 1 1 u0 u1")
    term = linear(d, mlp)
    layers.append(f"Gemm gd 1 1 u1 dn {gemm} 8={d} 9={mlp}{term}")
    layers.append("BinaryOp add1 2 1 res1 dn out0 0=0")
    blobs = len({b for line in layers for b in line.split()[4:4 + sum(map(int, line.split()[2:4]))]})
    return graph(layers, blobs), bytes(weights)


def vision(threads: int, repeats: int, patches: int = 5456) -> None:
    d, mlp = 1152, 4304
    flop_linear = 2 * patches * (4 * d * d + 2 * d * mlp)
    flop_attention = 2 * 2 * patches * patches * d
    print(f"\n## One vision block, {patches} patches "
          f"({(flop_linear + flop_attention) / 1e9:.0f} GFLOP: linear {flop_linear / 1e9:.0f}, "
          f"attention {flop_attention / 1e9:.0f}; 27 blocks per page)\n")
    print("| variant | ms per block | GFLOPS | x fp32 |")
    print("| --- | ---: | ---: | ---: |")
    x = RNG.standard_normal((patches, d), dtype=np.float32)
    variants = {"fp32": (False, False), "int8 linear (blocks of 32)": (True, False),
                "int8 linear + int8 attention": (True, True)}
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for label, (q_linear, q_attention) in variants.items():
            param, weights = vision_block(q_linear, q_attention)
            runs[label] = runner(load_net(Path(tmp), f"v{len(runs)}", param, weights, threads), x, "out0")
        times = {label: median_ms(run, repeats) for label, run in runs.items()}
    for label, ms in times.items():
        print(f"| {label} | {ms:.0f} | {(flop_linear + flop_attention) / ms / 1e6:.0f} | "
              f"{times['fp32'] / ms:.2f} |")


# --- recogniser convolutions -------------------------------------------------------------------

def conv_graph(cin: int, cout: int, int8: bool) -> tuple[str, bytes]:
    w = RNG.standard_normal((cout, cin), dtype=np.float32) * 0.05
    bias = np.zeros(cout, np.float32).tobytes()
    if int8:
        scales = 127 / np.abs(w).max(axis=1)
        q = np.clip(np.rint(w * scales[:, None]), -127, 127).astype(np.int8)
        weights = (struct.pack("<I", INT8_TAG) + q.tobytes() + b"\0" * (-q.size % 4) + bias
                   + scales.astype(np.float32).tobytes() + np.float32(127 / 4).tobytes())
    else:
        weights = struct.pack("<I", 0) + w.tobytes() + bias
    layer = f"Convolution c 1 1 in0 out0 0={cout} 1=1 5=1 6={w.size}" + (" 8=1" if int8 else "")
    return graph(["Input in0 0 1 in0", layer], 2), weights


def conv(threads: int, repeats: int) -> None:
    print("\n## PP-OCRv5 recogniser 1x1 convolutions (shapes of a 900-pixel-wide line crop), GFLOPS\n")
    print("| C x H x W | fp32 direct (engine) | fp32 im2col | int8 im2col |")
    print("| --- | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for c, h, w in ((64, 24, 450), (128, 12, 450), (240, 12, 225), (480, 6, 225)):
            x = RNG.standard_normal((c, h, w), dtype=np.float32)
            cells = []
            for int8, sgemm in ((False, False), (False, True), (True, True)):
                param, weights = conv_graph(c, c, int8)
                net = load_net(Path(tmp), f"c{c}{int(int8)}{int(sgemm)}", param, weights, threads, sgemm)
                ms = median_ms(runner(net, x, "out0"), repeats)
                cells.append(f"{2 * c * c * h * w / ms / 1e6:.0f}")
            print(f"| {c} x {h} x {w} | " + " | ".join(cells) + " |")


def recogniser_flops_per_column(width: int = 900) -> tuple[float, dict[str, float]]:
    from model_cache.ppocr.assets import load_model_set

    files = load_model_set(None).rec
    net = ncnn.Net()
    net.load_param(str(files.param))
    net.load_model(str(files.bin))
    x = RNG.standard_normal((3, 48, width), dtype=np.float32)
    by_type: dict[str, float] = {}
    for line in files.param.read_text().splitlines()[2:]:
        fields = line.split()
        kind, inputs, outputs = fields[0], int(fields[2]), int(fields[3])
        params = dict(f.split("=", 1) for f in fields[4 + inputs + outputs:])
        if kind not in ("Convolution", "ConvolutionDepthWise", "Gemm", "MultiHeadAttention"):
            continue
        with net.create_extractor() as ex:
            ex.input(files.input, ncnn.Mat(x))
            out = np.array(ex.extract(fields[4 + inputs])[1])
        if kind == "Gemm":
            flop = 2 * out.size * int(params["9"])
        elif kind == "MultiHeadAttention":
            tokens, dim = out.shape
            flop = 2 * 4 * tokens * dim * dim + 2 * 2 * tokens * tokens * dim
        else:
            flop = 2 * int(params["6"]) * (out.size // out.shape[0])
        by_type[kind] = by_type.get(kind, 0.0) + flop / width
    return sum(by_type.values()), by_type


def recogniser_stage_blobs(param: Path) -> tuple[str, str]:
    """(backbone output, neck output): the strided average pool's output and the Squeeze's input."""
    backbone = neck = ""
    for line in param.read_text().splitlines()[2:]:
        fields = line.split()
        if fields[0] == "Pooling" and "4=1" not in fields:  # not a global (squeeze-excite) pool
            backbone = fields[5]
        if fields[0] == "Squeeze":
            neck = fields[4]
    return backbone, neck


def recogniser(threads: int) -> None:
    from benchmarks.eval_sets import render_page, shared_eval_dir
    from model_cache.engine import EngineOptions
    from model_cache.ppocr.detection import detect
    from model_cache.ppocr.engine import create_engine, to_rgb
    from model_cache.ppocr.crops import rectify
    from model_cache.ppocr.recognition import crop_to_mat

    per_column, by_type = recogniser_flops_per_column()
    # The class head inside the net: this measures ncnn's own kernels on the whole recogniser.
    engine = create_engine(EngineOptions(threads=threads, extra=(("rec_head", "ncnn"),)))
    page = render_page(shared_eval_dir() / "pdfs" / "maint-guide.en.p5-9.pdf", 3, 200.0)
    rgb = to_rgb(page)
    crops = [rectify(rgb, box.quad, engine.params.rec) for box in detect(engine.det, rgb, engine.params.det)]
    columns = sum(max(c.shape[1], engine.params.rec.min_width) for c in crops)
    engine.ocr(page)
    runs = [engine.ocr(page).timings for _ in range(3)]
    seconds = statistics.median(t["recognize"] for t in runs)
    total = per_column * columns
    shares = ", ".join(f"{kind} {value / per_column:.0%}" for kind, value in by_type.items())
    print(f"\n## PP-OCRv5 recogniser on a dense page (maint-guide p3, 200 dpi)\n\n"
          f"{per_column / 1e6:.2f} MFLOP per crop column ({shares}); {len(crops)} line crops, "
          f"{columns} columns: {total / 1e9:.0f} GFLOP per page. The engine recognises the page in "
          f"{seconds:.2f} s: {total / seconds / 1e9:.0f} GFLOPS on {threads} threads; it detects in "
          f"{statistics.median(t['detect'] for t in runs):.2f} s.")
    mats = [crop_to_mat(c, engine.params.rec) for c in crops]
    backbone, neck = recogniser_stage_blobs(engine.models.rec.param)
    cumulative = {}
    for blob in (backbone, neck, engine.rec_logits or engine.models.rec.output):
        def run(blob: str = blob) -> None:
            for mat in mats:
                with engine.rec.net.create_extractor() as ex:
                    ex.input(engine.models.rec.input, mat)
                    ex.extract(blob)
        cumulative[blob] = median_ms(run, 3) / 1000
    stages = list(cumulative.values())
    print(f"Recognition by stage (the page's crops, cumulative extracts): backbone {stages[0]:.2f} s, "
          f"neck {stages[1] - stages[0]:.2f} s, CTC head {stages[2] - stages[1]:.2f} s.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="bandwidth,gemv,vision,conv,recogniser")
    args = parser.parse_args()
    parts = {"bandwidth": lambda: bandwidth(args.threads), "gemv": lambda: gemv(args.threads, args.repeats),
             "vision": lambda: vision(args.threads, max(2, args.repeats // 2)),
             "conv": lambda: conv(args.threads, args.repeats), "recogniser": lambda: recogniser(args.threads)}
    print(f"ncnn {ncnn.__version__}, {args.threads} threads")
    for name in args.only.split(","):
        parts[name]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
