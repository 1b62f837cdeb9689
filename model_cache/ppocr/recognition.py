"""Text-line recognition: a line crop (crops.py) padded and normalized for the CTC recogniser,
run, and greedy-decoded with the dictionary (index 0 = blank, last = space)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import ncnn
import numpy as np

from model_cache.ppocr.class_head import ClassHead
from model_cache.ppocr.runtime import NcnnNet

REC_HEIGHT = 48
HEAD_STEPS = 64  # time steps per run of the class head in ncnn (recognize)
HEAD_ROWS = 128  # time steps per run of the class head in numpy (decode_features): 9.4 MiB of PP-OCRv5 logits


@dataclass(frozen=True)
class RecParams:
    height: int = REC_HEIGHT
    min_width: int = 64  # very short crops are padded to this width (grey)
    max_width: int = 4096  # a longer crop is squeezed horizontally
    vertical_ratio: float = 1.5  # h/w at which a crop is taken as vertical text and turned
    squeeze: float = 1.0  # horizontal scale of the crop: rec time is linear in its width
    blur: float = 0.0  # Gaussian sigma (crop pixels) applied to the finished crop


@dataclass
class RecResult:
    text: str
    conf: float
    char_probs: np.ndarray  # probability of each emitted character
    chars: tuple[str, ...] = ()  # every emitted character, before the text's ends are stripped
    steps: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # time step of each
    frames: int = 0  # time steps in the whole crop (one per crop_width / frames columns)


def load_dictionary(path: Path) -> list[str]:
    """Lines of the dictionary file; entry 0 is the CTC blank, the last entry a space."""
    entries = path.read_text(encoding="utf-8").split("\n")
    if entries and entries[-1] == "":
        entries.pop()
    return entries


def pad_to_min_width(crop: np.ndarray, params: RecParams) -> np.ndarray:
    """A crop narrower than params.min_width, padded on the right with grey."""
    h, w = crop.shape[:2]
    if w >= params.min_width:
        return crop
    pad = np.full((h, params.min_width, 3), 127, dtype=np.uint8)
    pad[:, :w] = crop
    return pad


def crop_to_mat(crop: np.ndarray, params: RecParams) -> ncnn.Mat:
    crop = np.ascontiguousarray(pad_to_min_width(crop, params))
    h, w = crop.shape[:2]
    mat = ncnn.Mat.from_pixels(crop, ncnn.Mat.PixelType.PIXEL_RGB2BGR, w, h)
    mat.substract_mean_normalize((127.5, 127.5, 127.5), (1 / 127.5,) * 3)
    return mat


def ctc_decode(scores: np.ndarray, dictionary: list[str], logits: bool = False) -> RecResult:
    """Greedy CTC: best class per step, collapse repeats, drop blanks (index 0).
    `scores` are softmax probabilities, or raw logits (then only the emitted steps pay for
    a softmax: the arg-max is the same either way)."""
    steps = GreedySteps(logits)
    steps.add(scores)
    return steps.result(dictionary)


class GreedySteps:
    """Greedy CTC over a crop's time steps handed in one or more runs of consecutive steps: each
    step's best class, and the probability of the steps that emit a character. A run is read
    once, in place (it may be a pool's buffer)."""

    def __init__(self, logits: bool):
        self.logits = logits
        self.best: list[np.ndarray] = []
        self.probs: list[np.ndarray] = []
        self.previous = -1  # the last step's best class: a repeat across runs does not emit

    def add(self, scores: np.ndarray) -> None:
        best = scores.argmax(axis=1)
        keep = _emitted(best, self.previous)
        if len(best):
            self.previous = int(best[-1])
        idx = best[keep]
        if self.logits:
            rows = scores[keep]  # one copy, worked in place: a wide line emits ~150 rows of 18385
            top = rows[np.arange(len(idx)), idx]
            rows -= top[:, None]
            p = 1.0 / np.exp(rows, out=rows).sum(axis=1) if len(idx) else np.zeros(0, scores.dtype)
        else:
            p = scores[np.arange(len(best)), best][keep]
        self.best.append(best)
        self.probs.append(p)

    def result(self, dictionary: list[str]) -> RecResult:
        best = np.concatenate(self.best) if self.best else np.zeros(0, np.int64)
        p = np.concatenate(self.probs) if self.probs else np.zeros(0)
        return _result(best, _emitted(best), p, dictionary)


def ctc_decode_top1(top1: np.ndarray, dictionary: list[str]) -> RecResult:
    """Greedy CTC from (2, steps) = [probability; class index] of each step's best class
    (what the batch graph's top-1 tail computes on the device)."""
    best = np.rint(top1[1]).astype(np.int64)
    keep = _emitted(best)
    return _result(best, keep, top1[0][keep], dictionary)


def _emitted(best: np.ndarray, previous: int = -1) -> np.ndarray:
    """Steps that emit a character: not blank (0), not a repeat of the step before (`previous`:
    the best class of the step before the first, when the steps come in runs)."""
    keep = best != 0
    if len(best):
        keep[0] &= best[0] != previous
        keep[1:] &= best[1:] != best[:-1]
    return keep


def _result(best: np.ndarray, keep: np.ndarray, p: np.ndarray, dictionary: list[str]) -> RecResult:
    idx = best[keep]
    chars = tuple(dictionary[i] if i < len(dictionary) else "" for i in idx)
    conf = float(p.mean()) if len(p) else 0.0
    return RecResult("".join(chars).strip(), conf, p.astype(np.float32), chars,
                     np.flatnonzero(keep), len(best))


def decode_features(features: list[np.ndarray], head: ClassHead, dictionary: list[str]) -> list[RecResult]:
    """Greedy CTC of several crops from their features (steps x K each, as the net ends at the
    class head's input), the head run by numpy over HEAD_ROWS steps at a time across crops: one
    pass over the head's weights serves many crops' steps (43 against 60 us a step on PP-OCRv5
    when each crop ran its own, docs/benchmarks.md)."""
    rows = [f.reshape(-1, f.shape[-1]) for f in features]
    ends = np.cumsum([len(r) for r in rows])
    steps = [GreedySteps(logits=True) for _ in rows]
    if not len(rows) or not ends[-1]:
        return [s.result(dictionary) for s in steps]
    every = np.concatenate(rows)
    out = np.empty((min(HEAD_ROWS, len(every)), head.bias.size), np.float32)
    crop = 0
    for start in range(0, len(every), HEAD_ROWS):
        stop = min(start + HEAD_ROWS, len(every))
        logits = head(every[start:stop], out[:stop - start])
        while crop < len(rows) and ends[crop] <= start:
            crop += 1
        at, k = start, crop
        while k < len(rows) and at < stop:
            end = min(int(ends[k]), stop)
            steps[k].add(logits[at - start:end - start])
            at, k = end, k + 1
    return [s.result(dictionary) for s in steps]


def _layer_making(param: Path, blob: str) -> tuple[str, list[str]] | None:
    """The type and input blobs of the layer of a .param that outputs `blob`."""
    for line in param.read_text(encoding="utf-8").splitlines()[2:]:  # after the magic and the counts
        fields = line.split()
        if len(fields) < 4:
            continue
        inputs, outputs = int(fields[2]), int(fields[3])
        if blob in fields[4 + inputs:4 + inputs + outputs]:
            return fields[0], fields[4:4 + inputs]
    return None


def softmax_input(param: Path, output: str) -> str | None:
    """The blob feeding the final Softmax that produces `output`, if the net ends that way."""
    layer = _layer_making(param, output)
    return layer[1][0] if layer and layer[0] == "Softmax" else None


def class_head_input(param: Path, logits: str | None) -> str | None:
    """The features blob of the per-step class layer that makes `logits` (a Gemm on one input or
    an InnerProduct: each time step's row on its own), if the net ends that way."""
    layer = _layer_making(param, logits) if logits else None
    return layer[1][0] if layer and layer[0] in ("Gemm", "InnerProduct") and len(layer[1]) == 1 else None


def recognize(net: NcnnNet, crop: np.ndarray, dictionary: list[str], params: RecParams,
              logits_blob: str | None = None, head_input: str | None = None) -> RecResult:
    """Run the recogniser; with `logits_blob` (see softmax_input) the 18385-way softmax of
    every time step is skipped. With `head_input` (see class_head_input) the net runs to the
    features, then the class head HEAD_STEPS steps at a time: the logits are the same bits (the
    head reads each step's row on its own), and the pools no longer hold a whole line's logits
    (a 2,346 px line on PP-OCRv5: 66.0 MiB of buffers instead of 86.5). (With numpy's head the
    net ends at the features instead: see decode_features.)"""
    mat = crop_to_mat(crop, params)
    steps = GreedySteps(logits=bool(logits_blob))
    if head_input is None or logits_blob is None:
        net.run(mat, logits_blob, lambda scores: steps.add(scores.reshape(-1, scores.shape[-1])))
        return steps.result(dictionary)
    features = net.run(mat, head_input)  # steps x channels: 140 kB for a 2,300 px line
    features = features.reshape(-1, features.shape[-1])
    for start in range(0, len(features), HEAD_STEPS):
        run = np.ascontiguousarray(features[start:start + HEAD_STEPS])
        net.run_inputs({head_input: run}, logits_blob,
                       lambda scores: steps.add(scores.reshape(-1, scores.shape[-1])))
    return steps.result(dictionary)
