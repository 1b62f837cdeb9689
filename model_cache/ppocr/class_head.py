"""The recogniser's class head (features x weights + bias per time step) run in numpy.

The head is one matrix product per crop: steps x K features against K x N classes (PP-OCRv5:
120 x 18,385). ncnn's x86 Gemm runs it at ~25 GMAC/s on one core of this project's AVX-512
machine; numpy's OpenBLAS sgemm at ~55 (docs/benchmarks.md, "The class head in numpy"). So on a
CPU the net runs to the head's input and numpy makes the logits. The head's weights are read
from the end of the model's .bin, where ncnn's converter writes the last layer's: a 4-byte tag
(0: fp32, 0x01306B47: fp16) and the weights, then a tag and the bias. The arithmetic is the same
(fp16 weights are widened to fp32 exactly); only the order of the K additions differs, so a
logit may differ in its last bits (tests/test_class_head.py compares both on the shipped models).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

FP32_TAG = 0
FP16_TAG = 0x01306B47
_DTYPES = {FP32_TAG: np.dtype("<f4"), FP16_TAG: np.dtype("<f2")}


@dataclass(frozen=True)
class ClassHead:
    features: str  # the blob the head reads: steps x K
    logits: str  # the blob it makes: steps x N
    weight: np.ndarray  # K x N float32, C-contiguous (features @ weight)
    bias: np.ndarray  # N float32

    def __call__(self, features: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """steps x N logits of steps x K features (into `out`, steps x N, when given)."""
        logits = np.matmul(features, self.weight, out=out)
        logits += self.bias
        return logits


@dataclass(frozen=True)
class _HeadLayer:
    features: str
    logits: str
    classes: int  # N
    depth: int  # K
    index: int  # the layer's line among the layers


def read_class_head(param: Path, bin_path: Path, logits: str | None) -> ClassHead | None:
    """The head that makes `logits`, if it is the .bin's last layer with weights and a plain
    per-step product with bias (a Gemm with constant B and C, B transposed, alpha = beta = 1, C
    broadcast per class); None for any other form, which the net then runs itself."""
    layers = _layers(param.read_text(encoding="utf-8"))
    layer = _head_layer(layers, logits) if logits else None
    if layer is None or any(_has_weights(fields) for fields in layers[layer.index + 1:]):
        return None
    tail = _read_tail(bin_path, layer.classes, layer.depth)
    if tail is None:
        return None
    weight, bias = tail
    return ClassHead(layer.features, layer.logits, np.ascontiguousarray(weight.T), bias)


def graph_to_features(param_text: str, head: ClassHead) -> str:
    """The .param text without the head and the layers that read its logits (a softmax): ncnn
    then loads the same .bin without the head's weights, which stay unread at its end."""
    lines = param_text.splitlines()
    magic, counts, body = lines[0], lines[1].split(), [line for line in lines[2:] if line.strip()]
    kept = [line for line in body if not _touches(line.split(), head.logits)]
    dropped_blobs = sum(int(line.split()[3]) for line in body if _touches(line.split(), head.logits))
    header = f"{int(counts[0]) - (len(body) - len(kept))} {int(counts[1]) - dropped_blobs}"
    return "\n".join([magic, header] + kept) + "\n"


def _touches(fields: list[str], blob: str) -> bool:
    """Whether a layer makes or reads `blob`."""
    n_in, n_out = int(fields[2]), int(fields[3])
    return blob in fields[4:4 + n_in + n_out]


def _layers(param_text: str) -> list[list[str]]:
    return [line.split() for line in param_text.splitlines()[2:] if len(line.split()) >= 4]


def _head_layer(layers: list[list[str]], logits: str) -> _HeadLayer | None:
    for index, fields in enumerate(layers):
        n_in, n_out = int(fields[2]), int(fields[3])
        if logits not in fields[4 + n_in:4 + n_in + n_out]:
            continue
        params = dict(kv.split("=", 1) for kv in fields[4 + n_in + n_out:])
        # Gemm ids: 0 alpha, 1 beta, 2/3 transA/B, 4/5/6 constant A/B/C, 8 N, 9 K, 10 C's broadcast
        # (4: one value per class); 11-14 and 18 change the output's layout or quantize it.
        ok = (fields[0] == "Gemm" and n_in == 1 and params.get("2", "0") == "0" and params.get("3") == "1"
              and params.get("4", "0") == "0" and params.get("5") == "1" and params.get("6") == "1"
              and params.get("10") == "4" and all(float(params.get(k, "1")) == 1.0 for k in ("0", "1"))
              and not any(k in params for k in ("11", "12", "13", "14", "18")))
        if not ok:
            return None
        return _HeadLayer(fields[4], logits, int(params["8"]), int(params["9"]), index)
    return None


def _has_weights(fields: list[str]) -> bool:
    """Whether a layer after the head reads weights from the .bin (only a Softmax may follow)."""
    return fields[0] not in ("Softmax", "Split", "Noop")


def _read_tail(bin_path: Path, classes: int, depth: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(weights N x K, bias N) as float32 from the end of the .bin, or None when the tags or the
    sizes do not fit it exactly."""
    size = bin_path.stat().st_size
    layouts = [(w_tag, b_tag, _aligned(classes * depth * _DTYPES[w_tag].itemsize),
                _aligned(classes * _DTYPES[b_tag].itemsize))
               for w_tag, b_tag in ((FP16_TAG, FP16_TAG), (FP32_TAG, FP32_TAG), (FP16_TAG, FP32_TAG),
                                    (FP32_TAG, FP16_TAG))]
    longest = min(size, max(8 + w_size + b_size for _, _, w_size, b_size in layouts))
    with bin_path.open("rb") as f:  # read once: the longest tail any layout could need
        f.seek(size - longest)
        end = f.read()
    for w_tag, b_tag, w_size, b_size in layouts:
        if 8 + w_size + b_size > size:
            continue
        tail = end[len(end) - (8 + w_size + b_size):]
        tags = int(np.frombuffer(tail, "<u4", 1, 0)[0]), int(np.frombuffer(tail, "<u4", 1, 4 + w_size)[0])
        if tags != (w_tag, b_tag):
            continue
        weight = np.frombuffer(tail, _DTYPES[w_tag], classes * depth, 4).reshape(classes, depth)
        bias = np.frombuffer(tail, _DTYPES[b_tag], classes, 8 + w_size)
        if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
            return None
        return weight.astype(np.float32), bias.astype(np.float32)
    return None


def _aligned(size: int) -> int:
    return (size + 3) // 4 * 4
