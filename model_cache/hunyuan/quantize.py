"""8-bit weights for the decoder graphs: ncnn's weight-block-quantized Gemm (param 18=80x).

Why: CPU decode reads every decoder weight once per token, so its speed is set by the bytes of
weights; int8 blocks need ~1.1 bytes per weight where fp32 needs 4.

The on-disk layout ncnn 1.0.20261020 (the PyPI wheel) loads for such a Gemm, found by experiment
(tests/test_hunyuan_q8.py checks it against numpy):
  param: 2=0 3=1 4=0 5=1 (B constant, transposed), 9=K 8=N, 18 = bits*100 + block code
         (block 32/64/128 -> 0/1/2);
  bin:   B as raw int8 bytes, N rows of K (row n = output n), WITHOUT the 4-byte type tag that
         ncnn puts before other weights (a tag is read as four weights and shifts everything);
         then fp32 scales, N rows of ceil(K/block), scale = 127 / absmax of the block, so a
         weight is q / scale.
On x86 the layer quantizes its input per block of K on the fly (dynamic W8A8, fp32 output), so
a smaller block also keeps an activation outlier from flattening the rest of its row.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model_cache.ncnn_graph import Layer, WeightSpan, parse_line, span_tag, weight_spans

QMAX = 127
BLOCK_CODES = {32: 0, 64: 1, 128: 2}
FP32_TAG = 0
COPIED = frozenset({"RMSNorm"})  # layers of the decoder / LM-head graphs whose weights are kept as they are
CHUNK_ROWS = 8192  # rows quantized at a time: bounds numpy's temporaries on the 495 MB LM head


@dataclass(frozen=True)
class BlockQuant:
    bits: int = 8
    block: int = 32

    def __post_init__(self) -> None:
        if self.bits != 8 or self.block not in BLOCK_CODES:
            raise ValueError(f"supported: 8-bit weights in blocks of {sorted(BLOCK_CODES)}")

    @property
    def term(self) -> int:
        return self.bits * 100 + BLOCK_CODES[self.block]


def quantize_rows(weight: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, K) fp32 -> int8 (N, K) and scales (N, ceil(K/block)) with weight ~= q / scale."""
    rows, k = weight.shape
    blocks = -(-k // block)
    padded = np.zeros((rows, blocks * block), dtype=np.float32)
    padded[:, :k] = weight
    grouped = padded.reshape(rows, blocks, block)
    absmax = np.abs(grouped).max(axis=2)
    scales = (QMAX / np.where(absmax > 0, absmax, QMAX)).astype(np.float32)
    q = np.clip(np.rint(grouped * scales[:, :, None]), -QMAX, QMAX).astype(np.int8)
    return q.reshape(rows, -1)[:, :k], scales


def dequantize(q: np.ndarray, scales: np.ndarray, block: int) -> np.ndarray:
    per_weight = np.repeat(scales, block, axis=1)[:, :q.shape[1]]
    return q.astype(np.float32) / per_weight


def quantize_graph(param: Path, weights: Path, quant: BlockQuant) -> int:
    """Rewrite one fp32 graph (param + bin, in place) with its constant-B Gemms block-quantized;
    return how many Gemms were quantized."""
    lines = param.read_text().splitlines()
    layers = [parse_line(line) for line in lines[2:]]
    for layer in layers:  # its weights would not even parse as fp32 ones
        if layer.type == "Gemm" and layer.params.get("18", "0") != "0":
            raise ValueError(f"{param.name}: {layer.name}: already quantized (18={layer.params['18']})")
    data = np.memmap(weights, dtype=np.uint8, mode="r")
    tmp_bin = weights.with_name(weights.name + ".tmp")
    count = 0
    try:
        with open(tmp_bin, "wb") as out:
            for index, (layer, spans) in enumerate(weight_spans(layers, data, weights.name), start=2):
                if layer.type == "Gemm":
                    _write_gemm(out, data, layer, spans, quant, f"{param.name}: {layer.name}")
                    lines[index] = _with_term(lines[index].split(), quant.term)
                    count += 1
                elif layer.type in COPIED or not spans:
                    for span in spans:
                        out.write(data[span.offset:span.offset + span.size].tobytes())
                else:
                    raise ValueError(f"{param.name}: layer type {layer.type} is not known to quantize_graph")
    except BaseException:
        tmp_bin.unlink(missing_ok=True)
        raise
    del data
    os.replace(tmp_bin, weights)
    param.write_text("\n".join(lines) + "\n")
    return count


def _with_term(fields: list[str], term: int) -> str:
    kept = [f for f in fields if not f.startswith("18=")]
    return " ".join([*kept, f"18={term}"])


def _write_gemm(out, data: np.ndarray, layer: Layer, spans: list[WeightSpan], quant: BlockQuant,
                where: str) -> None:
    params = layer.params
    layout = {key: params.get(key, "0") for key in ("2", "3", "4", "5")}
    if layout != {"2": "0", "3": "1", "4": "0", "5": "1"}:
        raise ValueError(f"{where}: only constant, transposed B can be block-quantized ({layout})")
    if params.get("6", "0") == "1" and params.get("10", "0") != "-1":
        raise ValueError(f"{where}: a constant bias (C) is not supported")
    k, n = int(params["9"]), int(params["8"])
    if (k * n) % 4:
        raise ValueError(f"{where}: K*N={k * n} is not a multiple of 4")
    (span,) = spans
    tag = span_tag(data, span)
    if tag != FP32_TAG:
        raise ValueError(f"{where}: weights are not fp32 (tag {tag:#x}); convert with fp32 storage first")
    weight = np.frombuffer(data, dtype="<f4", count=k * n, offset=span.offset + 4).reshape(n, k)
    scales = []
    for start in range(0, n, CHUNK_ROWS):
        q, s = quantize_rows(weight[start:start + CHUNK_ROWS], quant.block)
        out.write(q.tobytes())
        scales.append(s)
    for s in scales:
        out.write(s.astype("<f4").tobytes())
