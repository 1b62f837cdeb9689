"""Read and write ncnn .param/.bin pairs as an editable graph, for conversion-time rewrites
(folding, fusing, int8 annotation). Only the layer types our converted nets contain are
understood; an unknown layer with weights is refused rather than guessed.

`load_graph` holds a whole graph in memory (the small PP-OCR nets); `weight_spans` walks a
graph's weights as byte ranges of a memory-mapped .bin, for GB-size graphs that are rewritten
as a stream (model_cache/hunyuan/quantize.py)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

MAGIC = "7767517"
TAG_FP16 = 0x01306B47
TAG_FP32 = 0x0002C056
TAG_INT8 = 0x000D4B38

# Layers that load nothing from the .bin.
WEIGHTLESS = {"Input", "Split", "HardSwish", "HardSigmoid", "Swish", "Sigmoid", "ReLU", "Clip",
              "Pooling", "Permute", "Reshape", "Squeeze", "ExpandDims", "Softmax", "Concat", "Interp",
              "Slice", "Crop", "Flatten", "Eltwise", "Noop", "Dropout", "GELU", "RotaryEmbed", "SDPA",
              "Reduction", "PixelShuffle"}


@dataclass
class Weight:
    """One `ModelBin::load` call: tagged (type 0: fp16/fp32 with a leading tag) or raw fp32."""
    data: np.ndarray  # float32, 1-D
    tagged: bool
    fp16: bool = False  # storage of a tagged weight


@dataclass(frozen=True)
class WeightSpan:
    """Where one `ModelBin::load` call's bytes lie in a .bin: tag and padding included."""
    offset: int
    size: int
    tagged: bool
    count: int  # elements


@dataclass
class Layer:
    type: str
    name: str
    inputs: list[str]
    outputs: list[str]
    params: dict[str, str]
    weights: list[Weight] = field(default_factory=list)

    def get(self, key: str, default: float = 0) -> float:
        value = self.params.get(key)
        return default if value is None else float(value)

    def geti(self, key: str, default: int = 0) -> int:
        return int(self.get(key, default))


@dataclass
class Graph:
    layers: list[Layer]

    def consumers(self, blob: str) -> list[Layer]:
        return [layer for layer in self.layers if blob in layer.inputs]

    def producer(self, blob: str) -> Layer | None:
        for layer in self.layers:
            if blob in layer.outputs:
                return layer
        return None

    def blob_count(self) -> int:
        return len({b for layer in self.layers for b in layer.outputs})


def weight_plan(layer: Layer) -> list[tuple[bool, int]]:
    """(tagged, element count) of every load the layer makes, in order."""
    p = layer.geti
    kind = layer.type
    if kind in ("Convolution", "ConvolutionDepthWise", "Deconvolution", "DeconvolutionDepthWise"):
        plan = [(True, p("6"))] + ([(False, p("0"))] if p("5") else [])
        if p("8"):
            groups = p("7", 1) if kind == "ConvolutionDepthWise" else p("0")
            plan += [(False, groups), (False, 1)]
        return plan
    if kind == "InnerProduct":
        return [(True, p("2"))] + ([(False, p("0"))] if p("1") else [])
    if kind == "Gemm":
        m, n, k = p("7"), p("8"), p("9")
        plan = []
        if p("4"):
            plan.append((True, m * k))
        if p("5"):
            plan.append((True, n * k))
        if p("6") and p("10") != -1:
            plan.append((True, {0: 1, 1: m, 2: m, 3: m * n, 4: n}[p("10")]))
        return plan
    if kind == "LayerNorm":
        return [(False, p("0")), (False, p("0"))] if p("2", 1) else []
    if kind == "RMSNorm":
        return [(False, p("0"))] if p("2", 1) else []
    if kind == "MultiHeadAttention":
        embed = p("0")
        qdim = p("2") // embed
        kdim, vdim = p("3", embed), p("4", embed)
        return [(True, embed * qdim), (False, embed), (True, embed * kdim), (False, embed),
                (True, embed * vdim), (False, embed), (True, qdim * embed), (False, qdim)]
    if kind == "BatchNorm":
        return [(False, p("0"))] * 4  # slope, mean, variance, bias
    if kind == "Padding":
        return [(False, p("6"))] if p("6") else []  # per-channel pad values
    if kind == "BinaryOp":
        return []  # scalar or two-input forms; neither has weights
    if kind in WEIGHTLESS:
        return []
    raise ValueError(f"ncnn_graph: no weight layout known for layer type {kind} ({layer.name})")


def parse_line(line: str) -> Layer:
    fields = line.split()
    n_in, n_out = int(fields[2]), int(fields[3])
    inputs = fields[4:4 + n_in]
    outputs = fields[4 + n_in:4 + n_in + n_out]
    params = dict(kv.split("=", 1) for kv in fields[4 + n_in + n_out:])
    return Layer(fields[0], fields[1], inputs, outputs, params)


def read_layers(param: Path) -> list[Layer]:
    lines = [ln for ln in Path(param).read_text(encoding="utf-8").splitlines() if ln.strip()]
    if lines[0].strip() != MAGIC:
        raise ValueError(f"{param}: not an ncnn param file")
    return [parse_line(ln) for ln in lines[2:]]


def weight_spans(layers: list[Layer], data: bytes | np.ndarray,
                 where: str = "weights") -> Iterator[tuple[Layer, list[WeightSpan]]]:
    """Each layer with the byte ranges of its weights in `data` (the whole .bin, e.g. a memmap);
    raises if the file ends early or has bytes left after the last layer."""
    offset = 0
    for layer in layers:
        spans = []
        for tagged, count in weight_plan(layer):
            size = _tagged_size(data, offset, count) if tagged else count * 4
            if offset + size > len(data):
                raise ValueError(f"{where}: ends inside the weights of {layer.name}")
            spans.append(WeightSpan(offset, size, tagged, count))
            offset += size
        yield layer, spans
    if offset != len(data):
        raise ValueError(f"{where}: {len(data) - offset} bytes left after the last layer")


def span_tag(data: bytes | np.ndarray, span: WeightSpan) -> int:
    return struct.unpack("<I", bytes(data[span.offset:span.offset + 4]))[0]


def _tagged_size(data: bytes | np.ndarray, offset: int, count: int) -> int:
    tag = struct.unpack("<I", bytes(data[offset:offset + 4]))[0]
    if tag == TAG_FP16:
        return 4 + (count * 2 + 3) // 4 * 4
    if tag in (0, TAG_FP32):
        return 4 + count * 4
    raise ValueError(f"ncnn_graph: unsupported weight tag {tag:#x} at byte {offset}")


def _decode(data: bytes, span: WeightSpan) -> Weight:
    if not span.tagged:
        return Weight(np.frombuffer(data, "<f4", span.count, span.offset).copy(), False)
    if span_tag(data, span) == TAG_FP16:
        return Weight(np.frombuffer(data, "<f2", span.count, span.offset + 4).astype(np.float32), True, True)
    return Weight(np.frombuffer(data, "<f4", span.count, span.offset + 4).copy(), True)


def load_graph(param: Path, binary: Path) -> Graph:
    layers = read_layers(param)
    data = Path(binary).read_bytes()
    for layer, spans in weight_spans(layers, data, str(binary)):
        layer.weights = [_decode(data, span) for span in spans]
    return Graph(layers)


def format_line(layer: Layer) -> str:
    params = " ".join(f"{k}={v}" for k, v in layer.params.items())
    head = f"{layer.type:<24} {layer.name:<24} {len(layer.inputs)} {len(layer.outputs)}"
    return " ".join(part for part in (head, *layer.inputs, *layer.outputs, params) if part)


def _write_weight(weight: Weight) -> bytes:
    values = np.ascontiguousarray(weight.data, dtype=np.float32)
    if not weight.tagged:
        return values.astype("<f4").tobytes()
    if weight.fp16:
        raw = values.astype("<f2").tobytes()
        return struct.pack("<I", TAG_FP16) + raw + b"\0" * ((-len(raw)) % 4)
    return struct.pack("<I", 0) + values.astype("<f4").tobytes()


def save_graph(graph: Graph, param: Path, binary: Path) -> None:
    for layer in graph.layers:
        expected = weight_plan(layer)
        if len(expected) != len(layer.weights):
            raise ValueError(f"ncnn_graph: {layer.name} has {len(layer.weights)} weights, "
                             f"its params say {len(expected)}")
    text = [MAGIC, f"{len(graph.layers)} {graph.blob_count()}"]
    text += [format_line(layer) for layer in graph.layers]
    Path(param).write_text("\n".join(text) + "\n", encoding="utf-8")
    Path(binary).write_bytes(b"".join(_write_weight(w) for layer in graph.layers for w in layer.weights))
