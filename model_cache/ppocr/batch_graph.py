"""Rewrite a CTC recogniser's ncnn graph so that many line crops run in one call.

ncnn has no batch dimension: a Mat is (c, h, w) and every layer sees one image. So crops are
packed end to end along the width (all are 48 px high) into one *strip*, with a few grey
columns between them. Convolutions, LayerNorm and the CTC head work per column and need
nothing; three kinds of layer would mix crops and are rewritten:

- global average pooling (the squeeze-excitation gates of PP-LCNet: a Pooling with
  global_pooling=1, or a mean Reduction over h and w) becomes a per-crop mean: average over
  the height, then a Gemm with a (columns x crops) averaging matrix; the gate chain then runs
  on (C, 1, crops) with each InnerProduct turned into the 1x1 Convolution it equals (same
  weight bytes), and a second Gemm with a (crops x columns) indicator spreads each crop's gate
  back over its own columns;
- self-attention (ncnn MultiHeadAttention, the SVTR neck) gets an additive attention mask
  built on the device from one segment id per token: 0 within a crop, -10000 across crops;
- Squeeze/ExpandDims, which have no Vulkan kernel (their blob would round-trip through the
  host), become the equivalent Reshape.

- a convolution wider than one column would read the gap's activations at a crop's border,
  where alone it reads its pad value: its input is first set to the pad value outside the
  crops, x' = (x - pad) * m + pad with m a 0/1 column mask (one input blob per resolution).

The weight-bearing layers keep their order and bytes, so the rewritten .param loads the
net's unchanged .bin. Every crop then computes what it computes alone, up to float rounding
(tests/test_ppocr_batch.py).

For a GPU the graph can end in a top-1 tail: from the softmax, the best class of each time
step and its probability, computed on the device, so a strip downloads 8 bytes per time step
instead of 4 x 18385. Class indices above 2048 are not exact in fp16, so a net with the tail
runs in fp32 (ncnn's per-layer featmask did not keep fp32 layers correct on Vulkan: lavapipe
gave garbage).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from model_cache.ncnn_graph import MAGIC, Layer, format_line, read_layers

MASK_BIG = 10000.0  # additive attention mask across crops (exp(-1e4) is 0 in fp16 and fp32)


@dataclass(frozen=True)
class PoolSite:
    """One global pooling rewritten per crop: its input is (channels, height, width)."""
    name: str
    channels: int
    height: int
    matrix: str  # input blob of the (columns x crops) averaging matrix
    spread: str  # input blob of the (crops x columns) indicator
    probe_blob: str  # blob whose width is this site's column count


@dataclass(frozen=True)
class ColumnMask:
    """A 0/1 mask over the columns of `probe_blob`'s resolution: 1 inside the crops."""
    input: str
    probe_blob: str


@dataclass
class BatchGraph:
    text: str  # the rewritten .param
    input: str
    logits: str  # (steps, classes) before the softmax
    top1: str | None  # (2, steps): probabilities then class indices, if built with the tail
    pools: list[PoolSite] = field(default_factory=list)
    masks: list[ColumnMask] = field(default_factory=list)
    segment_inputs: tuple[str, str] | None = None  # (column ids, row ids) when attention is masked
    ramp: str | None = None  # input: minus the class index (or its high part), for the tail's arg-max
    ramp_low: str | None = None  # with the fp16 tail: minus the index's low part (top1 is then 3 rows)
    classes: int = 0


@dataclass(frozen=True)
class Shapes:
    """Blob shapes (numpy order) of the original net on one probe crop."""
    of: dict[str, tuple[int, ...]]


class Unbatchable(Exception):
    """The graph has a layer that mixes crops and that the rewrite does not know."""


class _Builder:
    def __init__(self, layers: list[Layer]):
        self.layers = layers
        self.out: list[Layer] = []
        self.count = 0

    def blob(self, stem: str) -> str:
        self.count += 1
        return f"b_{stem}_{self.count}"

    def add(self, kind: str, inputs: list[str], outputs: list[str], params: dict[str, str]) -> None:
        self.count += 1
        self.out.append(Layer(kind, f"batch_{kind.lower()}_{self.count}", inputs, outputs, params))


def _consumers(layers: list[Layer], blob: str) -> list[Layer]:
    return [layer for layer in layers if blob in layer.inputs]


def _is_global_mean(layer: Layer) -> bool:
    if layer.type == "Pooling":
        return layer.params.get("4") == "1" and layer.params.get("0") == "1"
    if layer.type == "Reduction":  # mean (0=3) over h and w (axes 1,2), keepdims
        return layer.params.get("0") == "3" and layer.params.get("-23303") == "2,1,2"
    return False


def _gate_chain(layers: list[Layer], pool: Layer) -> tuple[list[Layer], Layer]:
    """The per-channel layers from the pooling to the BinaryOp mul that applies the gate."""
    chain, blob = [], pool.outputs[0]
    while True:
        users = _consumers(layers, blob)
        if len(users) != 1:
            raise Unbatchable(f"gate of {pool.name} branches")
        user = users[0]
        if user.type == "BinaryOp" and len(user.inputs) == 2 and user.params.get("0") == "2":
            return chain, user
        if user.type not in ("InnerProduct", "Convolution", "HardSigmoid", "Sigmoid", "ReLU",
                             "HardSwish", "Swish"):
            raise Unbatchable(f"gate of {pool.name} passes through {user.type}")
        if user.type == "Convolution" and (user.geti("1") != 1 or user.geti("11", 1) != 1):
            raise Unbatchable(f"gate of {pool.name} has a spatial convolution")
        chain.append(user)
        blob = user.outputs[0]


def _as_pointwise_conv(layer: Layer) -> Layer:
    """InnerProduct -> the 1x1 Convolution with the same weights (same load order and bytes)."""
    if layer.type != "InnerProduct":
        return layer
    p = layer.params
    params = {"0": p["0"], "1": "1", "11": "1", "5": p.get("1", "0"), "6": p["2"]}
    for key in ("9", "10"):  # fused activation and its parameters
        if key in p:
            params[key] = p[key]
    if "-23310" in p:
        params["-23310"] = p["-23310"]
    return Layer("Convolution", layer.name, layer.inputs, layer.outputs, params)


def _reshape(b: _Builder, src: str, dst: str, w: int, h: int | None = None, c: int | None = None) -> None:
    params = {"0": str(w)}
    if h is not None:
        params["1"] = str(h)
    if c is not None:
        params["2"] = str(c)
    b.add("Reshape", [src], [dst], params)


def _rewrite_pool(b: _Builder, pool: Layer, shapes: Shapes, index: int) -> PoolSite:
    """Emit the per-crop mean for `pool`: (C, 1, crops) under the pooling's output name."""
    x = pool.inputs[0]
    channels, height, _ = shapes.of[x]
    site = PoolSite(pool.name, channels, height, f"seg_mean{index}", f"seg_spread{index}", x)
    b.add("Input", [], [site.matrix], {})
    b.add("Input", [], [site.spread], {})
    col = b.blob("colmean")
    b.add("Pooling", [x], [col], {"0": "1", "1": "1", "11": str(height), "2": "1", "12": str(height),
                                  "3": "0", "4": "0", "5": "1"})
    flat, means = b.blob("cols2d"), b.blob("cropmean")
    _reshape(b, col, flat, -1, channels)
    b.add("Gemm", [flat, site.matrix], [means], {"2": "0", "3": "0", "4": "0", "5": "0", "6": "1",
                                                  "10": "-1"})
    _reshape(b, means, pool.outputs[0], -1, 1, channels)  # (C, 1, crops): the gate chain's input
    return site


def _rewrite_gate_mul(b: _Builder, mul: Layer, gate: str, site: PoolSite, channels: int) -> None:
    flat, spread, cols = b.blob("gate2d"), b.blob("gatecols"), b.blob("gate3d")
    _reshape(b, gate, flat, -1, channels)
    b.add("Gemm", [flat, site.spread], [spread], {"2": "0", "3": "0", "4": "0", "5": "0", "6": "1",
                                                   "10": "-1"})
    _reshape(b, spread, cols, -1, 1, channels)
    other = mul.inputs[0] if mul.inputs[1] == gate else mul.inputs[1]
    b.out.append(Layer("BinaryOp", mul.name, [other, cols], mul.outputs, dict(mul.params)))


def _gate_channels(chain: list[Layer], site: PoolSite) -> int:
    channels = site.channels
    for layer in chain:
        if layer.type in ("InnerProduct", "Convolution"):
            channels = layer.geti("0")
    return channels


def _attention_mask(b: _Builder, users: int) -> tuple[list[str], tuple[str, str]]:
    """Mask blobs (one per attention layer) from segment ids: a column (tokens x 1) and a row."""
    col_ids, row_ids = "seg_col", "seg_row"
    diff, mag, one, mask = b.blob("segdiff"), b.blob("segabs"), b.blob("segne"), b.blob("mask")
    b.add("Input", [], [col_ids], {})
    b.add("Input", [], [row_ids], {})
    b.add("BinaryOp", [col_ids, row_ids], [diff], {"0": "1"})
    b.add("UnaryOp", [diff], [mag], {"0": "0"})
    b.add("BinaryOp", [mag], [one], {"0": "5", "1": "1", "2": "1.0"})
    b.add("BinaryOp", [one], [mask], {"0": "2", "1": "1", "2": f"{-MASK_BIG:.1f}"})
    if users == 1:
        return [mask], (col_ids, row_ids)
    copies = [b.blob("maskcopy") for _ in range(users)]
    b.add("Split", [mask], list(copies), {})
    return copies, (col_ids, row_ids)


def _max_mask(b: _Builder, probs: str, classes: int) -> tuple[str, str]:
    """Each time step's max probability, and a mask that is 0 at its max class(es), 1 elsewhere."""
    cube, copy_a, copy_b, copy_c = b.blob("probs3d"), b.blob("pa"), b.blob("pb"), b.blob("pc")
    top, top3, gap, step, penal = (b.blob(s) for s in ("top", "top3", "gap", "ceil", "penal"))
    _reshape(b, probs, cube, classes, 1, -1)
    b.add("Split", [cube], [copy_a, copy_b], {})
    b.add("Pooling", [copy_a], [top], {"0": "0", "4": "1"})
    b.add("Split", [top], [copy_c, top + "_keep"], {})
    _reshape(b, copy_c, top3, 1, 1, -1)
    b.add("BinaryOp", [top3, copy_b], [gap], {"0": "1"})  # max - p >= 0, 0 only at the max
    b.add("UnaryOp", [gap], [step], {"0": "3"})  # ceil: 0 at the max, >= 1 elsewhere
    b.add("BinaryOp", [step], [penal], {"0": "5", "1": "1", "2": "1.0"})  # 0 at the max, else 1
    return top + "_keep", penal


def _top1_tail(b: _Builder, probs: str, classes: int) -> tuple[str, str]:
    """(2, steps) = [max probability; arg-max] per time step (the net must run in fp32)."""
    ramp = "class_ramp"
    score, best, neg = (b.blob(s) for s in ("score", "best", "negbest"))
    out = "top1"
    b.add("Input", [], [ramp], {})  # (1, 1, classes)
    top, penal = _max_mask(b, probs, classes)
    b.add("BinaryOp", [penal], [score], {"0": "2", "1": "1", "2": "-1000000.0"})
    b.add("BinaryOp", [score, ramp], [best], {"0": "0"})  # -index at the max, <= -1e6 elsewhere
    b.add("Pooling", [best], [neg], {"0": "0", "4": "1"})  # max: minus the smallest arg-max
    rows = [b.blob("toprow"), b.blob("idxrow")]
    idx = b.blob("idx")
    b.add("BinaryOp", [neg], [idx], {"0": "2", "1": "1", "2": "-1.0"})
    _reshape(b, top, rows[0], -1, 1)
    _reshape(b, idx, rows[1], -1, 1)
    b.add("Concat", rows, [out], {"0": "0"})
    return out, ramp


INDEX_RADIX = 128  # the fp16 tail's class index in two parts: index // RADIX, index % RADIX
_PENALTY = 1000.0  # > any index part; -1000 - 143 is exact in fp16 (integers to 2048 are)


def _top1_tail_fp16(b: _Builder, probs: str, classes: int) -> tuple[str, str, str]:
    """(3, steps) = [max probability; arg-max // INDEX_RADIX; arg-max % INDEX_RADIX]: every value
    the tail computes is an integer below 2048 or a probability, so it is exact in fp16 (one
    index up to 18385 is not). Ties go to the smallest index, as in the fp32 tail: first the
    smallest quotient among the maxima, then the smallest remainder among those."""
    high, low = "class_ramp_high", "class_ramp_low"  # (1, 1, classes): minus each index part
    out = "top1"
    b.add("Input", [], [high], {})
    b.add("Input", [], [low], {})
    top, penal = _max_mask(b, probs, classes)
    (score_q, neg_q), q_rows = _smallest_part(b, penal, high, "q")
    # 0 where both the max and the smallest quotient, else >= 1: |score_q - its max|, capped at 1
    neg_q3, diff, mag, penal_r = (b.blob(s) for s in ("negq3", "qdiff", "qmag", "rpenal"))
    _reshape(b, neg_q, neg_q3, 1, 1, -1)
    b.add("BinaryOp", [score_q, neg_q3], [diff], {"0": "1"})
    b.add("UnaryOp", [diff], [mag], {"0": "0"})
    b.add("BinaryOp", [mag], [penal_r], {"0": "5", "1": "1", "2": "1.0"})
    _, r_rows = _smallest_part(b, penal_r, low, "r")
    rows = [b.blob("toprow"), q_rows, r_rows]
    _reshape(b, top, rows[0], -1, 1)
    b.add("Concat", rows, [out], {"0": "0"})
    return out, high, low


def _smallest_part(b: _Builder, penal: str, ramp: str, tag: str) -> tuple[tuple[str, str], str]:
    """The smallest ramp part where penal is 0, per step: ((score, its max), the part as a row),
    score = -PENALTY * penal - part (blobs read twice get their Split from _split_shared)."""
    scaled, score, neg, part, row = (b.blob(f"{tag}{s}") for s in ("scaled", "score", "neg", "part", "row"))
    b.add("BinaryOp", [penal], [scaled], {"0": "2", "1": "1", "2": f"{-_PENALTY:.1f}"})
    b.add("BinaryOp", [scaled, ramp], [score], {"0": "0"})
    b.add("Pooling", [score], [neg], {"0": "0", "4": "1"})  # max: minus the smallest part
    b.add("BinaryOp", [neg], [part], {"0": "2", "1": "1", "2": "-1.0"})
    _reshape(b, part, row, -1, 1)
    return (score, neg), row


def _mask_border(b: _Builder, conv: Layer, resolution: object, graph: BatchGraph,
                 masks: dict[object, str]) -> Layer:
    """Set the conv's input to its pad value outside the crops; returns the conv reading it."""
    if resolution not in masks:
        masks[resolution] = f"col_mask{len(masks)}"
        graph.masks.append(ColumnMask(masks[resolution], conv.inputs[0]))
        b.add("Input", [], [masks[resolution]], {})
    mask, x = masks[resolution], conv.inputs[0]
    pad = conv.get("18", 0.0)
    if pad == 0.0:
        masked = b.blob("masked")
        b.add("BinaryOp", [x, mask], [masked], {"0": "2"})
    else:
        shifted, scaled, masked = b.blob("shift"), b.blob("scaled"), b.blob("masked")
        b.add("BinaryOp", [x], [shifted], {"0": "1", "1": "1", "2": repr(pad)})
        b.add("BinaryOp", [shifted, mask], [scaled], {"0": "2"})
        b.add("BinaryOp", [scaled], [masked], {"0": "0", "1": "1", "2": repr(pad)})
    return Layer(conv.type, conv.name, [masked], conv.outputs, dict(conv.params))


def _reads_border(layer: Layer, graph_input: str) -> bool:
    if layer.type not in ("Convolution", "ConvolutionDepthWise") or layer.geti("1") <= 1:
        return False
    if layer.geti("4") == 0 and layer.geti("15", layer.geti("4")) == 0:
        return False  # unpadded: never reads past a crop (crops are ALIGN-aligned)
    # The strip's input is 0 outside the crops, which is what a zero pad reads.
    return not (layer.inputs[0] == graph_input and layer.get("18", 0.0) == 0.0)


def build(param: Path, shapes: Shapes, top1: bool = False,
          resolution_of: dict[str, object] | None = None, split_index: bool = False) -> BatchGraph:
    """The batch graph of the recogniser `param`; `shapes` (and `resolution_of`, an equality
    key of each blob's width as a function of the input width) come from batch_rec.probe()."""
    layers = read_layers(param)
    softmax = [layer for layer in layers if layer.type == "Softmax"]
    if len(softmax) != 1 or layers[-1] is not softmax[0]:
        raise Unbatchable("the recogniser does not end in one Softmax")
    attention = [layer for layer in layers if layer.type == "MultiHeadAttention"]
    if any(len(layer.inputs) != 1 for layer in attention):
        raise Unbatchable("cross-attention")
    b = _Builder(layers)
    graph = BatchGraph("", layers[0].outputs[0], softmax[0].inputs[0], None)
    masks, pending = [], {}  # gate-mul layer name -> (gate blob, site, channels)
    gate_layers: set[str] = set()
    column_masks: dict[object, str] = {}
    masks_made = False
    for layer in layers:
        if layer.type == "MultiHeadAttention" and not masks_made:
            masks, graph.segment_inputs = _attention_mask(b, len(attention))
            masks_made = True
        if _is_global_mean(layer):
            site = _rewrite_pool(b, layer, shapes, len(graph.pools))
            graph.pools.append(site)
            chain, mul = _gate_chain(layers, layer)
            gate = chain[-1].outputs[0] if chain else layer.outputs[0]
            pending[mul.name] = (gate, site, _gate_channels(chain, site))
            gate_layers.update(link.name for link in chain)
            continue
        if layer.name in pending:
            _rewrite_gate_mul(b, layer, *pending.pop(layer.name))
            continue
        if layer.type == "Pooling" and layer.params.get("4") == "1":
            raise Unbatchable(f"global max pooling {layer.name}")
        if layer.type == "Reduction":
            raise Unbatchable(f"reduction {layer.name}")
        if layer.type == "MultiHeadAttention":
            params = dict(layer.params, **{"5": "1"})
            b.out.append(Layer(layer.type, layer.name, [layer.inputs[0], masks.pop(0)], layer.outputs, params))
            continue
        if layer.type in ("Squeeze", "ExpandDims"):
            b.out.append(_as_reshape(layer, shapes))
            continue
        if resolution_of is not None and _reads_border(layer, graph.input):
            layer = _mask_border(b, layer, resolution_of[layer.inputs[0]], graph, column_masks)
        b.out.append(_as_pointwise_conv(layer) if layer.name in gate_layers else layer)
    if pending:
        raise Unbatchable("a gate is never applied")
    if top1:
        graph.classes = shapes.of[graph.logits][-1]
        if split_index:  # a tail exact in fp16, so the net may run in fp16
            graph.top1, graph.ramp, graph.ramp_low = _top1_tail_fp16(b, softmax[0].outputs[0], graph.classes)
        else:
            graph.top1, graph.ramp = _top1_tail(b, softmax[0].outputs[0], graph.classes)
    inputs = [layer for layer in b.out if layer.type == "Input"]
    body = _split_shared(inputs + [layer for layer in b.out if layer.type != "Input"])
    blobs = len({blob for layer in body for blob in layer.outputs})
    graph.text = "\n".join([MAGIC, f"{len(body)} {blobs}", *map(format_line, body)]) + "\n"
    return graph


def _split_shared(layers: list[Layer]) -> list[Layer]:
    """ncnn gives a blob to one consumer (it may be modified in place): a blob read by several
    layers is handed out through a Split right after the layer that makes it."""
    readers: dict[str, list[Layer]] = {}
    for layer in layers:
        for blob in layer.inputs:
            readers.setdefault(blob, []).append(layer)
    out = []
    for layer in layers:
        out.append(layer)
        for blob in layer.outputs:
            users = readers.get(blob, [])
            if len(users) < 2:
                continue
            copies = [f"{blob}_copy{i}" for i in range(len(users))]
            out.append(Layer("Split", f"split_{blob}", [blob], copies, {}))
            for user, copy in zip(users, copies):
                user.inputs = [copy if name == blob else name for name in user.inputs]
    inputs = [layer for layer in out if layer.type == "Input"]
    return inputs + [layer for layer in out if layer.type != "Input"]


def _as_reshape(layer: Layer, shapes: Shapes) -> Layer:
    """Squeeze/ExpandDims of the height axis -> Reshape (which has a Vulkan kernel)."""
    src = shapes.of.get(layer.inputs[0])
    axes = layer.params.get("-23303")
    if src is None or axes != "1,1":
        raise Unbatchable(f"{layer.type} {layer.name} over axes {axes}")
    if layer.type == "Squeeze" and len(src) == 3 and src[1] == 1:
        params = {"0": "-1", "1": str(src[0])}  # (C, 1, W) -> (C, W)
    elif layer.type == "ExpandDims" and len(src) == 2:
        params = {"0": "-1", "1": "1", "2": str(src[0])}  # (C, W) -> (C, 1, W)
    else:
        raise Unbatchable(f"{layer.type} {layer.name} on shape {src}")
    return Layer("Reshape", layer.name, layer.inputs, layer.outputs, params)
