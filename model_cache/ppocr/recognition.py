"""Text-line recognition: a line crop (crops.py) padded and normalized for the CTC recogniser,
run, and greedy-decoded with the dictionary (index 0 = blank, last = space)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import ncnn
import numpy as np

from model_cache.ppocr.runtime import NcnnNet

REC_HEIGHT = 48


@dataclass(frozen=True)
class RecParams:
    height: int = REC_HEIGHT
    min_width: int = 64  # very short crops are padded to this width (grey)
    max_width: int = 4096  # a longer crop is squeezed horizontally
    vertical_ratio: float = 1.5  # h/w at which a crop is taken as vertical text and turned
    squeeze: float = 1.0  # horizontal scale of the crop: rec time is linear in its width


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
    best = scores.argmax(axis=1)
    keep = _emitted(best)
    idx = best[keep]
    if logits:
        rows = scores[keep]  # one copy, worked in place: a wide line emits ~150 rows of 18385
        top = rows[np.arange(len(idx)), idx]
        rows -= top[:, None]
        p = 1.0 / np.exp(rows, out=rows).sum(axis=1) if len(idx) else np.zeros(0)
    else:
        p = scores[np.arange(len(best)), best][keep]
    return _result(best, keep, p, dictionary)


def ctc_decode_top1(top1: np.ndarray, dictionary: list[str]) -> RecResult:
    """Greedy CTC from (2, steps) = [probability; class index] of each step's best class
    (what the batch graph's top-1 tail computes on the device)."""
    best = np.rint(top1[1]).astype(np.int64)
    keep = _emitted(best)
    return _result(best, keep, top1[0][keep], dictionary)


def _emitted(best: np.ndarray) -> np.ndarray:
    """Steps that emit a character: not blank (0), not a repeat of the step before."""
    keep = best != 0
    if len(best) > 1:
        keep[1:] &= best[1:] != best[:-1]
    return keep


def _result(best: np.ndarray, keep: np.ndarray, p: np.ndarray, dictionary: list[str]) -> RecResult:
    idx = best[keep]
    chars = tuple(dictionary[i] if i < len(dictionary) else "" for i in idx)
    conf = float(p.mean()) if len(p) else 0.0
    return RecResult("".join(chars).strip(), conf, p.astype(np.float32), chars,
                     np.flatnonzero(keep), len(best))


def softmax_input(param: Path, output: str) -> str | None:
    """The blob feeding the final Softmax that produces `output`, if the net ends that way."""
    for line in reversed(param.read_text(encoding="utf-8").splitlines()):
        fields = line.split()
        if len(fields) >= 6 and fields[0] == "Softmax" and fields[5] == output:
            return fields[4]
    return None


def recognize(net: NcnnNet, crop: np.ndarray, dictionary: list[str], params: RecParams,
              logits_blob: str | None = None) -> RecResult:
    """Run the recogniser; with `logits_blob` (see softmax_input) the 18385-way softmax of
    every time step is skipped."""
    return net.run(crop_to_mat(crop, params), logits_blob,  # decoded in place: no copy of the logits
                   lambda scores: ctc_decode(scores.reshape(-1, scores.shape[-1]), dictionary,
                                             logits=bool(logits_blob)))
