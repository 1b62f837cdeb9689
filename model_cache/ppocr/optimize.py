"""Conversion-time rewrites of the PP-OCR ncnn graphs (run by convert.py, never at run time).

PP-LCNetV3 puts a "learnable affine block" (y = a*x + b, two scalar BinaryOps) after every
convolution and after every HardSwish. On a 48-pixel text-line crop those element-wise passes
and the separate activation layers cost as much memory traffic as the 1x1 convolutions, so:

- an affine right after a convolution is folded into that convolution's weights and bias;
- a HardSwish right after a convolution becomes the convolution's fused activation;
- an affine right before a convolution is folded into it too: w' = a*w, bias' = bias + b*sum(w),
  and the border is padded with -b/a instead of 0, which is what a*x+b maps to zero.

The detectors' DB heads upsample with 2x2 stride-2 Deconvolutions, which ncnn's x86 kernels run
at 0.4-1.4 GMAC/s (95-105 ms of PP-OCRv6 tiny's ~390 ms detector on one thread). Such a
deconvolution writes each input pixel's 2x2 output block from that pixel alone, so:

- it becomes a 1x1 Convolution to 4x the channels (output o, tap (a, b) -> channel 4o + 2a + b)
  followed by PixelShuffle (33-45 ms for the same two layers; PixelShuffle has a Vulkan kernel).

All four are exact in real arithmetic; in float they move results by rounding only.
"""

from __future__ import annotations

import numpy as np

from model_cache.ncnn_graph import Graph, Layer, Weight

CONVOLUTIONS = ("Convolution", "ConvolutionDepthWise")
HARDSWISH_ACTIVATION = "6"  # ncnn's activation_type for HardSwish (params: alpha, beta)


def scalar_affine_op(layer: Layer) -> tuple[str, float] | None:
    """('mul'|'add', value) for a BinaryOp with a scalar constant operand, else None."""
    if layer.type != "BinaryOp" or len(layer.inputs) != 1 or layer.params.get("1") != "1":
        return None
    kind = {"2": "mul", "0": "add"}.get(layer.params.get("0", "0"))
    return (kind, float(layer.params.get("2", "0"))) if kind else None


def _sole_consumer(graph: Graph, blob: str) -> Layer | None:
    users = graph.consumers(blob)
    return users[0] if len(users) == 1 else None


def _affine_after(graph: Graph, blob: str) -> tuple[float, float, list[Layer]] | None:
    """The chain `mul a` then `add b` (either may be missing) that alone consumes `blob`."""
    scale, shift, chain = 1.0, 0.0, []
    layer = _sole_consumer(graph, blob)
    for expected in ("mul", "add"):
        op = scalar_affine_op(layer) if layer is not None else None
        if op is None or op[0] != expected:
            continue
        if op[0] == "mul":
            scale *= op[1]
        else:
            shift += op[1]
        chain.append(layer)
        layer = _sole_consumer(graph, layer.outputs[0])
    return (scale, shift, chain) if chain else None


def _bypass(graph: Graph, chain: list[Layer], new_output: str) -> None:
    """Remove `chain`; whatever read its last output now reads `new_output`."""
    last = chain[-1].outputs[0]
    for layer in graph.layers:
        layer.inputs = [new_output if b == last else b for b in layer.inputs]
    graph.layers = [layer for layer in graph.layers if all(layer is not c for c in chain)]


def _weights_by_output(conv: Layer) -> np.ndarray:
    return conv.weights[0].data.reshape(conv.geti("0"), -1)


def _ensure_bias(conv: Layer) -> np.ndarray:
    if not conv.geti("5"):
        conv.params["5"] = "1"
        conv.weights.insert(1, Weight(np.zeros(conv.geti("0"), np.float32), False))
    return conv.weights[1].data


def fold_affine_into_producer(graph: Graph) -> int:
    folded = 0
    for conv in [l for l in graph.layers if l.type in CONVOLUTIONS]:
        if conv.geti("9") != 0 or conv.geti("8") != 0:
            continue  # an activation or int8 already fused: the affine would land after it
        found = _affine_after(graph, conv.outputs[0])
        if found is None:
            continue
        scale, shift, chain = found
        weights = _weights_by_output(conv)
        bias = _ensure_bias(conv)
        conv.weights[0].data = (weights * scale).reshape(-1)
        conv.weights[1].data = (bias * scale + shift).astype(np.float32)
        _bypass(graph, chain, conv.outputs[0])
        folded += 1
    return folded


def fuse_hardswish(graph: Graph) -> int:
    fused = 0
    for conv in [l for l in graph.layers if l.type in CONVOLUTIONS]:
        act = _sole_consumer(graph, conv.outputs[0])
        if act is None or act.type != "HardSwish" or conv.geti("9") != 0:
            continue
        alpha, beta = act.params.get("0", "0.2"), act.params.get("1", "0.5")
        conv.params["9"] = HARDSWISH_ACTIVATION
        conv.params["-23310"] = f"2,{alpha},{beta}"
        _bypass(graph, [act], conv.outputs[0])
        fused += 1
    return fused


def fold_affine_into_consumer(graph: Graph) -> int:
    folded = 0
    for layer in list(graph.layers):
        if layer not in graph.layers:
            continue
        found = _affine_after(graph, layer.outputs[0]) if len(layer.outputs) == 1 else None
        if found is None:
            continue
        scale, shift, chain = found
        conv = _sole_consumer(graph, chain[-1].outputs[0])
        if conv is None or conv.type not in CONVOLUTIONS or conv.geti("8") or scale == 0.0:
            continue
        if conv.type == "ConvolutionDepthWise" and conv.geti("7", 1) != conv.geti("0"):
            continue  # grouped (not per-channel) convolution: keep it simple and exact
        weights = _weights_by_output(conv)
        bias = _ensure_bias(conv)
        conv.weights[1].data = (bias + shift * weights.sum(axis=1)).astype(np.float32)
        conv.weights[0].data = (weights * scale).reshape(-1)
        if _has_padding(conv) and shift != 0.0:
            conv.params["18"] = repr(float(np.float32(-shift / scale)))
        _bypass(graph, chain, layer.outputs[0])
        folded += 1
    return folded


def _has_padding(conv: Layer) -> bool:
    return any(conv.geti(k) != 0 for k in ("4", "14", "15", "16"))


def _is_block_deconvolution(layer: Layer) -> bool:
    """A Deconvolution whose 2x2 output blocks do not overlap: kernel = stride = 2, no dilation,
    padding, output padding, fixed output size or int8."""
    p = layer.geti
    kernel, stride = p("1"), p("3", 1)
    return (layer.type == "Deconvolution" and kernel == stride == 2
            and p("11", kernel) == 2 and p("13", stride) == 2 and p("2", 1) == p("12", 1) == 1
            and not any(p(k) for k in ("4", "14", "15", "16", "18", "19", "20", "21", "8")))


def _conv_and_shuffle(deconv: Layer) -> list[Layer]:
    """The 1x1 Convolution (output o, tap (a, b) -> channel 4o + 2a + b) and PixelShuffle that
    together compute `deconv`."""
    out_ch = deconv.geti("0")
    taps = deconv.weights[0].data.reshape(out_ch, -1, 2, 2)  # ncnn: [out][in][kh][kw]
    weights = np.ascontiguousarray(taps.transpose(0, 2, 3, 1)).reshape(-1)  # [4*out][in]
    params = {"0": str(4 * out_ch), "1": "1", "11": "1", "2": "1", "12": "1", "3": "1", "13": "1",
              "4": "0", "14": "0", "5": deconv.params.get("5", "0"), "6": str(weights.size)}
    for key in ("9", "-23310"):  # the activation, element-wise: it commutes with the shuffle
        if key in deconv.params:
            params[key] = deconv.params[key]
    conv_weights = [Weight(weights.astype(np.float32), True, deconv.weights[0].fp16)]
    if deconv.geti("5"):
        conv_weights.append(Weight(np.repeat(deconv.weights[1].data, 4).astype(np.float32), False))
    blocks = f"{deconv.outputs[0]}_blocks"
    return [Layer("Convolution", f"{deconv.name}_blocks", list(deconv.inputs), [blocks], params, conv_weights),
            Layer("PixelShuffle", f"{deconv.name}_shuffle", [blocks], list(deconv.outputs), {"0": "2"})]


def deconvolution_as_pixel_shuffle(graph: Graph) -> int:
    deconvs = [layer for layer in graph.layers if _is_block_deconvolution(layer)]
    for deconv in deconvs:
        at = graph.layers.index(deconv)
        graph.layers[at:at + 1] = _conv_and_shuffle(deconv)
    return len(deconvs)


def optimize(graph: Graph) -> dict[str, int]:
    """Apply every rewrite; returns how many times each fired."""
    return {"affine_into_producer": fold_affine_into_producer(graph),
            "hardswish_fused": fuse_hardswish(graph),
            "affine_into_consumer": fold_affine_into_consumer(graph),
            "deconvolution_as_pixel_shuffle": deconvolution_as_pixel_shuffle(graph)}
