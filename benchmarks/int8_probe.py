#!/usr/bin/env python3
"""Issue 13 feasibility probe: does ncnn's int8 quantization make the PP-OCRv5 mobile recogniser
faster on this CPU at 1 thread, and what does it cost in text? A probe: nothing here is shipped.
Results and the commands that gave them: docs/benchmarks.md, "int8 recognition on a CPU".

    # 1. line crops from the corpus's tune half only (a calibration set and a fixed timing set)
    python benchmarks/int8_probe.py crops --out /tmp/int8/crops
    # 2. calibration table and int8 files, with ncnn2table / ncnn2int8 built from ncnn's source
    python benchmarks/int8_probe.py quantize --tools /tmp/int8/build/tools/quantize \\
        --crops /tmp/int8/crops --out /tmp/int8/models-int8-kl-dw32 --method kl --keep ConvolutionDepthWise
    # 3. ms per crop, fp32 (the engine's options) against each int8 folder, interleaved, median of rounds
    python benchmarks/int8_probe.py time --crops /tmp/int8/crops --int8 FOLDER [FOLDER ...]
    #    where the time goes, layer by layer (shares only: every blob is kept)
    python benchmarks/int8_probe.py profile --crops /tmp/int8/crops --int8 FOLDER --only LABEL ...
    # 4. the kit's maint-guide pages through PPOCREngine: seconds, identical lines, CER
    python benchmarks/int8_probe.py pages --int8 /tmp/int8/models-int8-kl-dw32

`quantize` writes a user model folder (manifest, int8 rec.ncnn.{param,bin}, the dictionary) that
PPOCREngine(model_dir=...) overlays on the shipped model; the tools' inputs, table and logs go
to FOLDER.work beside it.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
KIT = REPO.parent / "shared" / "eval"
sys.path.insert(0, str(KIT / "tools"))

import ncnn  # noqa: E402

from model_cache.engine import EngineOptions  # noqa: E402
from model_cache.ppocr.assets import default_model_dir  # noqa: E402
from model_cache.ppocr.engine import PPOCREngine  # noqa: E402
from model_cache.ppocr.crops import rectify  # noqa: E402
from model_cache.ppocr.recognition import RecParams, crop_to_mat, pad_to_min_width  # noqa: E402

MANIFEST = REPO / "benchmarks" / "corpus_manifest.json"
SEED = 13
REC = RecParams()
MEAN, NORM = "[127.5,127.5,127.5]", "[0.007843137,0.007843137,0.007843137]"


# ---------------------------------------------------------------- crops (tune half only)

def tune_pages(corpus: Path) -> list[dict]:
    """Born pages of documents the manifest files under the tune half (checked twice: the
    manifest's documents and pages.jsonl must agree)."""
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    tune_docs = {d["id"] for d in manifest["documents"] if d["half"] == "tune"}
    records = [json.loads(line) for line in (corpus / "pages.jsonl").read_text().splitlines() if line]
    pages = [r for r in records if r["half"] == "tune"]
    if any(r["doc"] not in tune_docs for r in pages):
        raise SystemExit("pages.jsonl and the manifest disagree on the tune half")
    return pages


def page_crops(engine: PPOCREngine, image: Path) -> list[np.ndarray]:
    rgb = np.asarray(Image.open(image).convert("RGB"))
    page = engine._detect(rgb, {})
    return [pad_to_min_width(rectify(page.rgb, box.quad, REC), REC) for box in page.boxes]


def cmd_crops(args: argparse.Namespace) -> None:
    pages = tune_pages(args.corpus)
    rng = random.Random(SEED)
    rng.shuffle(pages)
    # one page per document, so that no document dominates; calibration and timing pages differ
    seen: set[str] = set()
    chosen = [p for p in pages if not (p["doc"] in seen or seen.add(p["doc"]))]
    calib_pages, timing_pages = chosen[:args.pages], chosen[args.pages:args.pages + args.timing_pages]
    engine = PPOCREngine(EngineOptions(threads=2), recognizer=False)
    out = args.out
    (out / "calib").mkdir(parents=True, exist_ok=True)
    (out / "timing").mkdir(parents=True, exist_ok=True)
    calib: list[Path] = []
    for n, page in enumerate(calib_pages):
        copy = "scan" if n % 4 == 3 else "born"  # a quarter through the simulated scan
        crops = page_crops(engine, args.corpus / page[copy])
        rng.shuffle(crops)
        for i, crop in enumerate(crops[:args.per_page]):
            path = out / "calib" / f"{n:02d}_{i:03d}.png"
            Image.fromarray(crop).save(path)
            calib.append(path)
    (out / "calib.txt").write_text("".join(f"{p}\n" for p in calib))
    pool = [c for page in timing_pages for c in page_crops(engine, args.corpus / page["born"])
            if 100 <= c.shape[1] <= 1500]
    pool.sort(key=lambda c: c.shape[1])
    picks = [pool[round(i * (len(pool) - 1) / (args.timing - 1))] for i in range(args.timing)]
    for i, crop in enumerate(picks):
        Image.fromarray(crop).save(out / "timing" / f"{i:02d}.png")
    (out / "pages.json").write_text(json.dumps({"calib": [p["id"] for p in calib_pages],
                                                "timing": [p["id"] for p in timing_pages]}, indent=1))
    widths = [c.shape[1] for c in picks]
    print(f"calibration: {len(calib)} crops from {len(calib_pages)} tune pages; "
          f"timing: {len(picks)} crops from {len(timing_pages)} other tune pages, widths "
          f"{min(widths)}-{max(widths)} (median {int(statistics.median(widths))})")



# ---------------------------------------------------------------- quantize

def base_rec() -> tuple[Path, Path, dict]:
    folder = default_model_dir()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    spec = manifest["nets"]["rec"]
    return folder / spec["param"], folder / spec["bin"], spec


def short_floats(text: str) -> str:
    """The .param with every value longer than 15 characters written as the shortest float32
    repr that reads back to the same float32. The shipped files carry pad values such as
    18=0.9685701131820679; the wheel (1.0.20261020) reads them, but the mirrored ncnn source's
    parser reads 15 characters a value (`%15[^,\\n ]`) and fails on the rest. Lossless."""
    def short(value: str) -> str:
        if len(value) <= 15:
            return value
        f = np.float32(float(value))
        for digits in range(6, 10):
            shorter = f"{f:.{digits}g}"
            if np.float32(float(shorter)) == f:
                return shorter
        raise ValueError(value)

    lines = text.splitlines()
    for n, line in enumerate(lines[2:], 2):
        fields = line.split()
        for i, field in enumerate(fields[4:], 4):
            if "=" in field:
                key, value = field.split("=", 1)
                fields[i] = f"{key}={','.join(short(v) for v in value.split(','))}"
        lines[n] = " ".join(fields)
    return "\n".join(lines) + "\n"


def unfold_pad_values(graph, keep: tuple[str, ...] = ()) -> int:
    """Undo optimize.py's affine-into-consumer padding: a convolution that pads with p (18=p)
    becomes `x - p` (a scalar BinaryOp) then the convolution padding with 0, its bias raised by
    p * sum(w) per output channel (exact in real arithmetic). ncnn's int8 convolutions pad their
    quantized input with the raw pad value instead of p times the input scale, so the shipped
    graph quantized as it is reads garbage at every border (measured: every crop's text lost)."""
    from model_cache.ncnn_graph import Layer
    from model_cache.ppocr.optimize import _ensure_bias, _weights_by_output
    done = 0
    for conv in [l for l in graph.layers if l.type in ("Convolution", "ConvolutionDepthWise")]:
        if conv.type in keep or float(conv.params.get("18", "0")) == 0.0:
            continue  # a layer left in fp32 pads correctly
        pad = float(conv.params.pop("18"))
        shifted = f"{conv.inputs[0]}_shift"
        bias = _ensure_bias(conv)
        conv.weights[1].data = (bias + pad * _weights_by_output(conv).sum(axis=1)).astype(np.float32)
        shift = Layer("BinaryOp", f"{conv.name}_shift", [conv.inputs[0]], [shifted],
                      {"0": "0", "1": "1", "2": repr(float(np.float32(-pad)))})
        conv.inputs[0] = shifted
        graph.layers.insert(graph.layers.index(conv), shift)
        done += 1
    return done


def drop_from_table(table: Path, param: Path, keep: tuple[str, ...]) -> None:
    """Remove the scales of layers of the `keep` types: ncnn2int8 then leaves them in fp32."""
    names = {l.split()[1] for l in param.read_text().splitlines()[2:] if l.split()[0] in keep}
    lines = table.read_text().splitlines()
    kept = [l for l in lines if l.split()[0].removesuffix("_param_0") not in names]
    table.write_text("\n".join(kept) + "\n")
    print(f"  {len(lines) - len(kept)} table lines of {', '.join(keep)} layers dropped (left in fp32)")


def cmd_quantize(args: argparse.Namespace) -> None:
    from model_cache.ppocr.assets import write_manifest
    shipped, weights, spec = base_rec()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    scratch = out.parent / f"{out.name}.work"  # the tools' inputs, table and logs (not in the model folder)
    scratch.mkdir(exist_ok=True)
    param, fp32_bin = scratch / "rec.fp32.param", scratch / "rec.fp32.bin"
    from model_cache.ncnn_graph import load_graph, save_graph
    graph = load_graph(shipped, weights)
    unfolded = unfold_pad_values(graph, tuple(args.keep))
    save_graph(graph, param, fp32_bin)
    param.write_text(short_floats(param.read_text()))
    print(f"{unfolded} convolutions' pad values moved into a BinaryOp before them: {param}")
    weights = fp32_bin
    table = scratch / f"rec.{args.method}.table"
    # shape=[0,0,3]: every crop at its own width (already 48 px high), as the engine feeds it
    calib = [str(args.tools / "ncnn2table"), str(param), str(weights), str(args.crops / "calib.txt"),
             str(table), f"mean={MEAN}", f"norm={NORM}", "shape=[0,0,3]", "pixel=BGR",
             f"thread={args.threads}", f"method={args.method}"]
    quant = [str(args.tools / "ncnn2int8"), str(param), str(weights),
             str(out / "rec.ncnn.param"), str(out / "rec.ncnn.bin"), str(table)]
    for command in (calib, quant):
        if command is quant and args.keep:
            drop_from_table(table, param, tuple(args.keep))
        print("$", " ".join(command), flush=True)
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        log = scratch / f"{Path(command[0]).name}.log"
        log.write_text(done.stdout + done.stderr)
        print(f"  rc {done.returncode}, {time.perf_counter() - start:.0f} s, log {log}")
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
    dictionary = json.loads((default_model_dir() / "manifest.json").read_text())["dictionary"]["file"]
    shutil.copy(default_model_dir() / dictionary, out / dictionary)
    write_manifest(out, f"ppocr-v5-mobile-rec-int8-{args.method}-probe",
                   {"rec": {**spec, "param": "rec.ncnn.param", "bin": "rec.ncnn.bin"}}, dictionary)
    print(layer_report(shipped, out / "rec.ncnn.param"))


def int8_layers(param: Path) -> dict[str, bool]:
    """Layer name -> whether ncnn runs it in int8 (its int8 flag in the .param)."""
    flags = {"Convolution": "8", "ConvolutionDepthWise": "8", "InnerProduct": "8",
             "Gemm": "18", "MultiHeadAttention": "18", "SDPA": "18"}
    out = {}
    for line in param.read_text().splitlines()[2:]:
        fields = line.split()
        keys = dict(f.split("=", 1) for f in fields[4:] if "=" in f)
        flag = flags.get(fields[0])
        out[fields[1]] = bool(flag and keys.get(flag, "0") not in ("0",))
    return out


def layer_report(fp32: Path, int8: Path) -> str:
    types = {line.split()[1]: line.split()[0] for line in fp32.read_text().splitlines()[2:]}
    quantized = int8_layers(int8)
    rows: dict[str, list[int]] = {}
    for name, kind in types.items():
        row = rows.setdefault(kind, [0, 0])
        row[0] += 1
        row[1] += quantized.get(name, False)
    lines = ["| layer type | layers | in int8 |", "| --- | ---: | ---: |"]
    lines += [f"| {k} | {n} | {q} |" for k, (n, q) in sorted(rows.items(), key=lambda kv: -kv[1][0])]
    return "\n".join(lines)


# ---------------------------------------------------------------- time

@dataclass(frozen=True)
class Variant:
    label: str
    param: Path
    weights: Path
    direct: bool  # the engine's CPU option: no im2col-gemm / winograd convolution kernels


def variants(int8: list[Path]) -> list[Variant]:
    """fp32 as shipped, and each int8 folder with direct and with im2col-gemm kernels
    (labelled by folder name when there are several)."""
    param, weights, _ = base_rec()
    out = [Variant("fp32 direct (engine)", param, weights, True),
           Variant("fp32 gemm", param, weights, False)]
    for folder in int8:
        tag = f" {folder.name}" if len(int8) > 1 else ""
        q_param, q_weights = folder / "rec.ncnn.param", folder / "rec.ncnn.bin"
        out += [Variant(f"int8 direct{tag}", q_param, q_weights, True),
                Variant(f"int8 gemm{tag}", q_param, q_weights, False)]
    return out


def load(v: Variant, threads: int, lightmode: bool = True) -> ncnn.Net:
    net = ncnn.Net()
    net.opt.num_threads = threads
    net.opt.lightmode = lightmode
    if v.direct:
        net.opt.use_sgemm_convolution = False
        net.opt.use_winograd_convolution = False
    if net.load_param(str(v.param)) or net.load_model(str(v.weights)):
        raise SystemExit(f"ncnn cannot load {v.param}")
    return net


def logits_blob(param: Path) -> str:
    from model_cache.ppocr.recognition import softmax_input
    return softmax_input(param, "out0") or "out0"


def timing_crops(folder: Path) -> list[np.ndarray]:
    return [np.asarray(Image.open(p).convert("RGB")) for p in sorted((folder / "timing").glob("*.png"))]


def run_all(net: ncnn.Net, blob: str, mats: list[ncnn.Mat]) -> tuple[float, list[np.ndarray]]:
    outs = []
    start = time.perf_counter()
    for mat in mats:
        with net.create_extractor() as ex:
            ex.input("in0", mat)
            ret, out = ex.extract(blob)
            outs.append(np.array(out))
    return time.perf_counter() - start, outs


def cmd_time(args: argparse.Namespace) -> None:
    from model_cache.ppocr.recognition import ctc_decode, load_dictionary
    from runner.evaluation.metrics import levenshtein
    crops = timing_crops(args.crops)
    mats = [crop_to_mat(c, REC) for c in crops]
    chosen = [v for v in variants(args.int8) if not args.only or v.label in args.only]
    nets = {v.label: (load(v, args.threads), logits_blob(v.param)) for v in chosen}
    dictionary = load_dictionary(default_model_dir() / "ppocr_keys_v5.txt")
    texts = {}
    for label, (net, blob) in nets.items():  # warm-up pass; its text is compared below
        _, outs = run_all(net, blob, mats)
        texts[label] = [ctc_decode(o.reshape(-1, o.shape[-1]), dictionary, logits=True).text for o in outs]
    seconds: dict[str, list[float]] = {label: [] for label in nets}
    labels = list(nets)
    for r in range(args.rounds):
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:  # rotate the order
            net, blob = nets[label]
            seconds[label].append(run_all(net, blob, mats)[0])
    base = labels[0]
    widths = [c.shape[1] for c in crops]
    print(f"{len(crops)} crops, widths {min(widths)}-{max(widths)} px (sum {sum(widths)}), "
          f"{args.threads} thread(s), {args.rounds} rounds, order rotated each round")
    print("| variant | ms per crop (median) | rounds, s | fp32 direct / this (median of rounds) "
          "| crops with fp32's text | characters changed |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    chars = sum(len(t) for t in texts[base])
    for label in labels:
        ratio = statistics.median(b / s for b, s in zip(seconds[base], seconds[label]))
        same = sum(a == b for a, b in zip(texts[base], texts[label]))
        edits = sum(levenshtein(a, b) for a, b in zip(texts[base], texts[label]))
        rounds = " ".join(f"{s:.2f}" for s in seconds[label])
        print(f"| {label} | {statistics.median(seconds[label]) / len(crops) * 1e3:.1f} | {rounds} "
              f"| {ratio:.2f}x | {same}/{len(crops)} | {edits}/{chars} |")
    if args.show_diff:
        for label in labels[1:]:
            for a, b in zip(texts[base], texts[label]):
                if a != b:
                    print(f"  {label}: {a!r} -> {b!r}")


# ---------------------------------------------------------------- profile (per layer)

def layer_order(param: Path) -> list[tuple[str, str, str]]:
    """(type, name, first output blob) of every layer, in file order (topological for ncnn)."""
    rows = []
    for line in param.read_text().splitlines()[2:]:
        f = line.split()
        n_in, n_out = int(f[2]), int(f[3])
        if n_out:
            rows.append((f[0], f[1], f[4 + n_in]))
    return rows


def cmd_profile(args: argparse.Namespace) -> None:
    """Per-layer seconds: one extractor per crop that keeps every blob (lightmode off), each
    layer's output extracted in file order, so each extract runs only that layer's work. Kept
    blobs cost copies the engine's light mode avoids: read the shares, not the sum."""
    crops = timing_crops(args.crops)
    mats = [crop_to_mat(c, REC) for c in crops]
    chosen = [v for v in variants(args.int8) if v.label in args.only]
    results = {}
    for v in chosen:
        net = load(v, args.threads, lightmode=False)
        order = layer_order(v.param)[1:]  # no Input; up to the logits, as the engine extracts
        last = logits_blob(v.param)
        order = order[:[blob for _, _, blob in order].index(last) + 1]
        quantized = int8_layers(v.param)
        per = {name: 0.0 for _, name, _ in order}
        for _ in range(args.rounds):
            for mat in mats:
                with net.create_extractor() as ex:
                    ex.input("in0", mat)
                    for kind, name, blob in order:
                        start = time.perf_counter()
                        ex.extract(blob)
                        per[name] += time.perf_counter() - start
        results[v.label] = (order, quantized, {k: s / args.rounds for k, s in per.items()})
    print(f"per-layer seconds for the {len(crops)} timing crops (mean of {args.rounds} passes, "
          f"{args.threads} thread); 'int8' = layers ncnn runs in int8 in that file")
    labels = list(results)
    by_type: dict[str, dict[str, float]] = {}
    for label, (order, quantized, per) in results.items():
        for kind, name, _ in order:
            key = f"{kind}{' (int8)' if quantized.get(name) else ''}"
            by_type.setdefault(key, {}).setdefault(label, 0.0)
            by_type[key][label] += per[name]
    print("| layer type | " + " | ".join(f"{l} s" for l in labels) + " |")
    print("| --- |" + " ---: |" * len(labels))
    for key, row in sorted(by_type.items(), key=lambda kv: -max(kv[1].values())):
        print(f"| {key} | " + " | ".join(f"{row[l]:.3f}" if l in row else "" for l in labels) + " |")
    print("| total | " + " | ".join(f"{sum(results[l][2].values()):.3f}" for l in labels) + " |")
    for label, (order, quantized, per) in results.items():
        fp = sum(per[name] for _, name, _ in order if not quantized.get(name))
        print(f"{label}: layers left in fp32/fp16 take {fp:.3f} s of {sum(per.values()):.3f} s "
              f"({fp / sum(per.values()) * 100:.0f} %)")


# ---------------------------------------------------------------- pages (through the engine)

def page_lines(result) -> dict[tuple, str]:
    return {tuple(np.round(np.asarray(line.box, dtype=float).ravel(), 1)): line.text
            for block in result.blocks for line in block.lines}


def cmd_pages(args: argparse.Namespace) -> None:
    from gt_normalize import normalize
    from benchmarks.ppocr_pages import render_pdf_page
    from model_cache.ppocr.assets import NetFiles
    from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions
    from runner.evaluation.metrics import cer
    pdf = KIT / "pdfs" / "maint-guide.en.p5-9.pdf"
    gts = sorted((KIT / "pdfs").glob("maint-guide.en.p5-9.p[0-9][0-9].gt.txt"))
    images = [render_pdf_page(pdf, i) for i in range(len(gts))]
    engines = {"fp32": PPOCREngine(EngineOptions(threads=args.threads)),
               "int8": PPOCREngine(EngineOptions(threads=args.threads, model_dir=args.int8))}
    if not args.int8_direct:  # int8's im2col-gemm kernels for the recogniser only (the detector as shipped)
        rec = engines["int8"].models.rec
        engines["int8"].rec = NcnnNet(NetFiles(rec.param, rec.bin, rec.meta),
                                      RuntimeOptions(threads=args.threads, direct_conv=False))
    for engine in engines.values():  # warm: first page once each
        engine.ocr(images[0])
    wall = {k: [[] for _ in images] for k in engines}
    rec_net = {k: [[] for _ in images] for k in engines}
    last = {}
    for r in range(args.rounds):
        for i, image in enumerate(images):
            for label in (list(engines) if (r + i) % 2 == 0 else list(engines)[::-1]):
                start = time.perf_counter()
                result = engines[label].ocr(image)
                wall[label][i].append(time.perf_counter() - start)
                rec_net[label][i].append(result.timings.get("rec_net", 0.0))
                last[label, i] = result
    print(f"maint-guide.en.p5-9 pages 1-{len(images)} at 200 dpi, PPOCREngine threads={args.threads}, "
          f"{args.rounds} rounds alternating; int8 recogniser kernels: "
          f"{'direct' if args.int8_direct else 'im2col-gemm'}")
    print("| page | fp32 s | int8 s | fp32 rec net s | int8 rec net s | lines identical | CER fp32 | CER int8 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    totals = {"same": 0, "lines": 0}
    cers: dict[str, list[float]] = {"fp32": [], "int8": []}
    med = statistics.median
    for i, gt in enumerate(gts):
        a, b = page_lines(last["fp32", i]), page_lines(last["int8", i])
        same = sum(b.get(box) == text for box, text in a.items())
        totals["same"] += same
        totals["lines"] += len(a)
        ref = normalize(gt.read_text(encoding="utf-8"), cjk=True)
        for label in engines:
            cers[label].append(cer(ref, normalize(last[label, i].text, cjk=True)))
        print(f"| p{i + 1} | {med(wall['fp32'][i]):.2f} | {med(wall['int8'][i]):.2f} | "
              f"{med(rec_net['fp32'][i]):.2f} | {med(rec_net['int8'][i]):.2f} | {same}/{len(a)} | "
              f"{cers['fp32'][-1]:.4f} | {cers['int8'][-1]:.4f} |")
    sums = {k: sum(med(w) for w in wall[k]) for k in engines}
    recs = {k: sum(med(w) for w in rec_net[k]) for k in engines}
    print(f"| all | {sums['fp32']:.2f} | {sums['int8']:.2f} | {recs['fp32']:.2f} | {recs['int8']:.2f} | "
          f"{totals['same']}/{totals['lines']} | {statistics.mean(cers['fp32']):.4f} | "
          f"{statistics.mean(cers['int8']):.4f} |")
    print(f"page time fp32/int8 {sums['fp32'] / sums['int8']:.2f}x, recogniser net {recs['fp32'] / recs['int8']:.2f}x")
    if args.show_diff:
        for i in range(len(images)):
            a, b = page_lines(last["fp32", i]), page_lines(last["int8", i])
            for box, text in a.items():
                if b.get(box) != text:
                    print(f"  p{i + 1}: {text!r} -> {b.get(box)!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("crops")
    p.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--pages", type=int, default=16, help="tune pages for calibration")
    p.add_argument("--per-page", type=int, default=25, help="crops at most per calibration page")
    p.add_argument("--timing-pages", type=int, default=4)
    p.add_argument("--timing", type=int, default=40, help="timing crops, 100-1500 px wide")
    p.set_defaults(run=cmd_crops)
    p = sub.add_parser("quantize")
    p.add_argument("--tools", type=Path, required=True, help="folder with ncnn2table and ncnn2int8")
    p.add_argument("--crops", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--method", default="kl", choices=("kl", "aciq", "eq"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--keep", nargs="*", default=[], help="layer types to leave in fp32, "
                   "e.g. ConvolutionDepthWise")
    p.set_defaults(run=cmd_quantize)
    for name, run in (("time", cmd_time), ("profile", cmd_profile)):
        p = sub.add_parser(name)
        p.add_argument("--crops", type=Path, required=True)
        p.add_argument("--int8", type=Path, nargs="+", required=True, help="int8 model folder(s)")
        p.add_argument("--threads", type=int, default=1)
        p.add_argument("--rounds", type=int, default=5 if name == "time" else 1)
        p.add_argument("--only", nargs="*", default=[] if name == "time" else
                       ["fp32 direct (engine)", "int8 gemm"], help="variant labels")
        p.add_argument("--show-diff", action="store_true")
        p.set_defaults(run=run)
    p = sub.add_parser("pages")
    p.add_argument("--int8", type=Path, required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--int8-direct", action="store_true", help="int8 with the engine's direct kernels")
    p.add_argument("--show-diff", action="store_true")
    p.set_defaults(run=cmd_pages)
    args = parser.parse_args()
    args.run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
