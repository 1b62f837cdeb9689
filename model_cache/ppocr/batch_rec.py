"""Batched recognition: line crops packed end to end into strips, one net call per strip
(the graph rewrite is batch_graph.py). Used alike on the CPU and the GPU; a crop's result
is the same as alone except at its borders (see batch_graph's docstring for why)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import ncnn
import numpy as np

from model_cache.engine import EngineError
from model_cache.ncnn_graph import read_layers
from model_cache.ppocr.assets import NetFiles
from model_cache.ppocr.batch_graph import INDEX_RADIX, BatchGraph, Shapes, Unbatchable, build
from model_cache.ppocr.probe_cache import cached_probe
from model_cache.ppocr.recognition import RecParams, pad_to_min_width
from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions

PROBE_WIDTH = 64  # crops are at least RecParams.min_width wide
ALIGN = 8  # crops start at multiples of this many pixels (the recogniser's horizontal stride)
PROBE_WIDTHS = range(PROBE_WIDTH, PROBE_WIDTH + 2 * ALIGN)


@dataclass(frozen=True)
class BatchParams:
    max_steps: int = 512  # time steps per strip: attention costs steps^2, logits steps x classes
    gap: int = 16  # grey pixels between two crops of a strip (a multiple of ALIGN)
    fixed_width: bool = False  # pad every strip to max_steps (one shape for all strips)


@dataclass(frozen=True)
class WidthMap:
    """Width of one blob as a function of the input width w >= PROBE_WIDTH, measured on the net:
    base[(w - PROBE_WIDTH) % ALIGN] + (w - PROBE_WIDTH) // ALIGN * per_align."""
    base: tuple[int, ...]
    per_align: int
    axis: int

    def __call__(self, width: int) -> int:
        extra = width - PROBE_WIDTH
        return self.base[extra % ALIGN] + extra // ALIGN * self.per_align

    def offset(self, x: int) -> int:
        """Column of this blob where a crop starting at pixel x (a multiple of ALIGN) starts."""
        return x // ALIGN * self.per_align


def has_attention(param: Path) -> bool:
    return any(layer.type == "MultiHeadAttention" for layer in read_layers(param))


def probe(files: NetFiles, blobs: list[str]) -> tuple[Shapes, dict[str, WidthMap]]:
    """Run the original net on crops PROBE_WIDTH .. PROBE_WIDTH + 2*ALIGN - 1 wide: every blob's
    shape at PROBE_WIDTH, and how the width of `blobs` follows the input width."""
    net = ncnn.Net()
    net.opt.lightmode = False  # keep every intermediate blob for extraction
    net.opt.num_threads = 1
    if net.load_param(str(files.param)) != 0 or net.load_model(str(files.bin)) != 0:
        raise Unbatchable(f"cannot load {files.param}")
    names = [blob for layer in read_layers(files.param) for blob in layer.outputs]
    runs = []
    for width in PROBE_WIDTHS:
        with net.create_extractor() as ex:
            ex.input(files.input, ncnn.Mat(np.zeros((3, RecParams.height, width), np.float32)))
            shapes = {}
            for name in (names if width == PROBE_WIDTH else blobs):
                ret, mat = ex.extract(name)
                if ret == 0:
                    shapes[name] = tuple(np.array(mat).shape)
            runs.append(shapes)
    maps = {blob: _width_map(blob, [run[blob] for run in runs]) for blob in blobs}
    return Shapes(runs[0]), maps


def _width_map(blob: str, shapes: list[tuple[int, ...]]) -> WidthMap:
    moving = [axis for axis in range(len(shapes[0])) if shapes[0][axis] != shapes[-1][axis]]
    if len(moving) != 1:
        raise Unbatchable(f"blob {blob}: no single width axis in {shapes[0]} .. {shapes[-1]}")
    axis = moving[0]
    widths = [shape[axis] for shape in shapes]
    steps = {widths[i + ALIGN] - widths[i] for i in range(ALIGN)}
    if len(steps) != 1:
        raise Unbatchable(f"blob {blob}: width not periodic in {ALIGN} px")
    return WidthMap(tuple(widths[:ALIGN]), steps.pop(), axis)


@dataclass(frozen=True)
class Strip:
    crops: tuple[int, ...]  # indices into the caller's crop list
    starts: tuple[int, ...]  # pixel column of each crop in the strip
    widths: tuple[int, ...]
    width: int


def plan_strips(widths: list[int], steps_of: WidthMap, params: BatchParams) -> list[Strip]:
    """Pack crops, in the order given, into strips of at most params.max_steps time steps."""
    strips, current, starts, x = [], [], [], 0
    for index, width in enumerate(widths):
        slot = -(-width // ALIGN) * ALIGN + params.gap
        if current and steps_of(x + slot) > params.max_steps:
            strips.append(_strip(current, starts, widths, x))
            current, starts, x = [], [], 0
        current.append(index)
        starts.append(x)
        x += slot
    if current:
        strips.append(_strip(current, starts, widths, x))
    return strips


def _strip(crops: list[int], starts: list[int], widths: list[int], end: int) -> Strip:
    return Strip(tuple(crops), tuple(starts), tuple(widths[i] for i in crops), max(end, PROBE_WIDTH))


# (v - 127.5) / 127.5 for every uint8 v, in float32: a table look-up gives the same floats as the
# arithmetic in one pass (3.4x faster on the crops of a dense page).
_LEVELS = (np.arange(256, dtype=np.float32) - np.float32(127.5)) * np.float32(1 / 127.5)


def normalized(crop: np.ndarray) -> np.ndarray:
    """uint8 RGB (h, w, 3) -> float32 BGR (3, h, w) in [-1, 1], as crop_to_mat gives ncnn."""
    return np.ascontiguousarray(np.take(_LEVELS, crop.transpose(2, 0, 1)[::-1]))


def prepare(crop: np.ndarray, rec: RecParams) -> np.ndarray:
    """A line crop as a strip takes it: padded to the minimum width, normalized (3, h, w)."""
    return normalized(pad_to_min_width(crop, rec))


def joined_index(parts: np.ndarray) -> np.ndarray:
    """The fp16 tail's (3, steps) [probability; index // RADIX; index % RADIX] as (2, steps)."""
    high, low = np.rint(parts[1]), np.rint(parts[2])
    return np.stack([parts[0].astype(np.float32), (high * INDEX_RADIX + low).astype(np.float32)])


class StripRecognizer:
    """The recogniser's batch graph, loaded once; `run` returns per crop either its logits
    (steps, classes) or, with top1, its (2, steps) [probability; class index]."""

    def __init__(self, files: NetFiles, options: RuntimeOptions, params: BatchParams, top1: bool,
                 split_index: bool | None = None, load: bool = True):
        """split_index: the fp16 form of the top-1 tail (default: with top1 on a GPU in fp16).
        load=False leaves the net to the caller: `load()`, or `use_net` with `graph.text` loaded
        with `options` (a device owner loads it jointly with its detector: joint_net.py)."""
        self.files = files
        self.options = options
        self.params = params
        layers = read_layers(files.param)
        softmax_in = next(l for l in layers if l.type == "Softmax").inputs[0]
        attention_in = [l.inputs[0] for l in layers if l.type == "MultiHeadAttention"]
        spatial = [l.inputs[0] for l in layers
                   if l.type in ("Convolution", "ConvolutionDepthWise") and l.geti("1") > 1]
        pooled = [l.inputs[0] for l in layers if l.type in ("Pooling", "Reduction")]
        watched = sorted({softmax_in, *attention_in, *spatial, *pooled})
        shapes, self.maps = cached_probe(files, watched, PROBE_WIDTHS, lambda: probe(files, watched))
        keys = {blob: (m.base, m.per_align) for blob, m in self.maps.items()}
        # In fp16 the top-1 tail gives the class index in two parts (each exact in fp16).
        if split_index is None:
            split_index = options.gpu and options.fp16
        self.graph: BatchGraph = build(files.param, shapes, top1, keys, split_index=top1 and split_index)
        self.steps = self.maps[softmax_in]
        self.tokens = self.maps[attention_in[0]] if attention_in else None
        self.net: NcnnNet | None = None
        if load:
            self.load()

    def load(self) -> None:
        """Load the graph as a net of its own."""
        self.net = NcnnNet(self.files, self.options, param_text=self.graph.text)

    def use_net(self, net: NcnnNet) -> None:
        """The net that runs `graph.text` (loaded by the caller, with `options`)."""
        self.net = net

    @property
    def top1(self) -> bool:
        return self.graph.top1 is not None

    def run(self, crops: list[np.ndarray], rec: RecParams) -> list[np.ndarray]:
        """Scores of each uint8 RGB line crop, in order."""
        prepared = [prepare(crop, rec) for crop in crops]
        results: list[np.ndarray | None] = [None] * len(crops)
        for strip, scores in self.iter_prepared(prepared):
            for index, part in zip(strip.crops, scores):
                results[index] = part
        return results  # type: ignore[return-value]

    def iter_prepared(self, prepared: list[np.ndarray]) -> Iterator[tuple[Strip, list[np.ndarray]]]:
        """Strip by strip, in the order given: the strip and the scores of its crops (`prepared`
        as `prepare` gives them; the device owner merges several feeders' crops this way)."""
        for strip in plan_strips([p.shape[2] for p in prepared], self.steps, self.params):
            if self.params.fixed_width:
                strip = self._padded(strip)
            yield strip, self._run_strip(strip, prepared)

    def _padded(self, strip: Strip) -> Strip:
        """The strip widened with gap to the width of max_steps time steps (if it is narrower)."""
        width = strip.width
        while self.steps(width + ALIGN) <= self.params.max_steps:
            width += ALIGN
        return Strip(strip.crops, strip.starts, strip.widths, max(width, strip.width))

    def _run_strip(self, strip: Strip, prepared: list[np.ndarray]) -> list[np.ndarray]:
        net = self.net
        if net is None:
            raise EngineError("the strip recogniser's graph is not loaded (use_net)")
        image = np.zeros((3, RecParams.height, strip.width), np.float32)
        for index, x in zip(strip.crops, strip.starts):
            crop = prepared[index]
            image[:, :, x:x + crop.shape[2]] = crop
        inputs: dict[str, np.ndarray] = {self.graph.input: image}
        for site in self.graph.pools:
            inputs[site.matrix], inputs[site.spread] = self._pool_matrices(strip, self.maps[site.probe_blob])
        for mask in self.graph.masks:
            inputs[mask.input] = self._column_mask(strip, self.maps[mask.probe_blob])
        if self.graph.segment_inputs and self.tokens is not None:
            ids = self._segments(strip, self.tokens)
            inputs[self.graph.segment_inputs[0]] = ids[:, None]
            inputs[self.graph.segment_inputs[1]] = ids[None, :]
        if self.graph.top1:
            index = np.arange(self.graph.classes, dtype=np.float32)
            if self.graph.ramp_low is None:
                inputs[self.graph.ramp] = -index.reshape(1, 1, -1)
                out = net.run_inputs(inputs, self.graph.top1)
            else:
                inputs[self.graph.ramp] = -(index // INDEX_RADIX).reshape(1, 1, -1)
                inputs[self.graph.ramp_low] = -(index % INDEX_RADIX).reshape(1, 1, -1)
                out = joined_index(net.run_inputs(inputs, self.graph.top1))
        else:
            out = net.run_inputs(inputs, self.graph.logits)
        return self._split(strip, out)

    def _split(self, strip: Strip, out: np.ndarray) -> list[np.ndarray]:
        parts = []
        for x, width in zip(strip.starts, strip.widths):
            start, count = self.steps.offset(x), self.steps(width)
            parts.append(out[:, start:start + count] if self.graph.top1 else out[start:start + count])
        return parts

    @staticmethod
    def _pool_matrices(strip: Strip, cols: WidthMap) -> tuple[np.ndarray, np.ndarray]:
        total = cols(strip.width)
        spread = np.zeros((len(strip.crops), total), np.float32)
        for row, (x, width) in enumerate(zip(strip.starts, strip.widths)):
            spread[row, cols.offset(x):cols.offset(x) + cols(width)] = 1.0
        mean = (spread / spread.sum(axis=1, keepdims=True)).T
        return np.ascontiguousarray(mean), spread

    @staticmethod
    def _column_mask(strip: Strip, cols: WidthMap) -> np.ndarray:
        mask = np.zeros((1, 1, cols(strip.width)), np.float32)
        for x, width in zip(strip.starts, strip.widths):
            mask[0, 0, cols.offset(x):cols.offset(x) + cols(width)] = 1.0
        return mask

    @staticmethod
    def _segments(strip: Strip, tokens: WidthMap) -> np.ndarray:
        ids = np.full(tokens(strip.width), -1.0, np.float32)  # gap tokens: one segment of their own
        for number, (x, width) in enumerate(zip(strip.starts, strip.widths)):
            ids[tokens.offset(x):tokens.offset(x) + tokens(width)] = number
        return ids
