"""Several graphs loaded as one ncnn.Net, so that on a GPU each shader is compiled once.

On a Vulkan device most of a net's load is ncnn compiling its shaders from GLSL (glslang) and
the driver making pipelines from them. ncnn caches both per Net, and its Python binding cannot
share one cache between nets (`Option.pipeline_cache` is not exposed). The detector and the
strip recogniser use mostly the same shader types (convolutions, depthwise convolutions,
activations, binary ops), so loading them as one net compiles those once: on an H200 the
device owner's nets loaded in 1.75-1.98 s (median 1.78) as one net against 1.89-2.21 s (median
2.09) as two (docs/benchmarks.md, "One net for the GPU owner").

Each part keeps its graph behind a name prefix; `NcnnNet.part_of` adds it, so callers name
blobs as before. The weights are the parts' .bin files one after the other, in the order of
the parts' layers.
"""

from __future__ import annotations

from dataclasses import dataclass

from model_cache.engine import EngineError
from model_cache.ncnn_graph import MAGIC, Graph, Layer, format_line, parse_line
from model_cache.ppocr.assets import NetFiles
from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions, configured_net


@dataclass(frozen=True)
class JointPart:
    files: NetFiles  # its .bin holds the graph's weights
    param_text: str  # the graph (the .param file's text or a rewrite over the same .bin)


def prefix_of(index: int) -> str:
    return f"p{index}."


def joint_text(parts: list[JointPart]) -> str:
    """One .param text holding every part's layers, each part's names behind its prefix."""
    layers = [layer for index, part in enumerate(parts) for layer in _prefixed(part.param_text, prefix_of(index))]
    lines = [MAGIC, f"{len(layers)} {Graph(layers).blob_count()}", *map(format_line, layers)]
    return "\n".join(lines) + "\n"


def load_joint(parts: list[JointPart], options: RuntimeOptions) -> list[NcnnNet]:
    """The parts loaded as one net with `options`; one NcnnNet per part, in order. The .bin
    files must be the verified model files (assets.py): ncnn's loader from memory reads what
    the layers ask for and cannot report a short buffer."""
    net = configured_net(options)
    if net.load_param_mem(joint_text(parts)) != 0:
        raise EngineError("ncnn could not load the joint graph of " + ", ".join(p.files.param.name for p in parts))
    net.load_model_mem(b"".join(part.files.bin.read_bytes() for part in parts))
    return [NcnnNet.part_of(net, part.files, options, prefix_of(index)) for index, part in enumerate(parts)]


def _prefixed(param_text: str, prefix: str) -> list[Layer]:
    """A .param text's layers with every layer and blob name behind `prefix`."""
    lines = [line for line in param_text.splitlines() if line.strip()]
    if not lines or lines[0].strip() != MAGIC:
        raise EngineError("not an ncnn .param text")
    layers = [parse_line(line) for line in lines[2:]]
    for layer in layers:
        layer.name = prefix + layer.name
        layer.inputs = [prefix + blob for blob in layer.inputs]
        layer.outputs = [prefix + blob for blob in layer.outputs]
    return layers
