"""CTC decoding, the dictionary and crop rectification (no model needed)."""

import numpy as np
import pytest

from model_cache.ppocr.assets import default_model_dir
from model_cache.ppocr.crops import rectify
from model_cache.ppocr.recognition import RecParams, ctc_decode, load_dictionary


def _probs(indices: list[int], classes: int = 6, p: float = 0.9) -> np.ndarray:
    out = np.full((len(indices), classes), (1 - p) / (classes - 1), dtype=np.float32)
    out[np.arange(len(indices)), indices] = p
    return out


DICT = ["blank", "a", "b", "l", "o", " "]


def test_greedy_ctc_collapses_repeats_and_drops_blanks():
    # h e l l o pattern: a repeated class collapses, a blank between two equal classes separates them
    result = ctc_decode(_probs([0, 4, 4, 0, 3, 3, 0, 3, 0, 1, 5, 2, 2, 0]), DICT)
    assert result.text == "olla b"
    assert result.conf == pytest.approx(0.9)
    assert len(result.char_probs) == 6


def test_spaces_inside_are_kept_and_ends_stripped():
    assert ctc_decode(_probs([5, 1, 5, 5, 2, 5]), DICT).text == "a b"


def test_empty_and_confidence_is_mean_of_emitted():
    assert ctc_decode(_probs([0, 0, 0]), DICT).text == ""
    probs = _probs([1, 2])
    probs[1, 2] = 0.5
    assert ctc_decode(probs, DICT).conf == pytest.approx(0.7)


def test_shipped_dictionary_layout():
    entries = load_dictionary(default_model_dir() / "ppocr_keys_v5.txt")
    assert len(entries) == 18385
    assert entries[0] == "blank" and entries[-1] == " "


def test_rectify_gives_48_high_crops_and_turns_vertical_lines():
    img = np.full((200, 400, 3), 255, dtype=np.uint8)
    img[90:110, 50:350] = 0
    quad = np.array([[50, 90], [350, 90], [350, 110], [50, 110]], dtype=np.float32)
    crop = rectify(img, quad, RecParams())
    assert crop.shape == (48, 720, 3)
    assert crop.mean() < 10  # all ink
    tall = np.array([[100, 20], [120, 20], [120, 180], [100, 180]], dtype=np.float32)
    assert rectify(img, tall, RecParams()).shape[0] == 48
    assert rectify(img, tall, RecParams()).shape[1] == 384


def test_logits_decode_equals_softmax_decode():
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 3, size=(40, 6)).astype(np.float32)
    logits[::3, 0] += 8  # plenty of blanks, as in real output
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    a, b = ctc_decode(probs, DICT), ctc_decode(logits, DICT, logits=True)
    assert a.text == b.text and a.conf == pytest.approx(b.conf, rel=1e-5)


def test_softmax_input_of_the_shipped_rec_net():
    from model_cache.ppocr.recognition import softmax_input
    param = default_model_dir() / "rec.ncnn.param"
    blob = softmax_input(param, "out0")
    assert blob is not None and blob != "out0"


@pytest.mark.parametrize("logits", [False, True])
def test_steps_handed_in_runs_decode_as_one(logits):
    # A repeat across two runs (steps 3 and 4 both class 2) must not emit twice.
    from model_cache.ppocr.recognition import GreedySteps
    probs = _probs([0, 1, 1, 2, 2, 0, 2, 3, 3, 5, 4, 0])
    scores = np.log(probs) if logits else probs
    whole = ctc_decode(scores, DICT, logits=logits)
    for cut in range(len(scores) + 1):
        steps = GreedySteps(logits)
        for start in range(0, len(scores), max(cut, 1)):
            steps.add(scores[start:start + max(cut, 1)].copy())
        parts = steps.result(DICT)
        assert (parts.text, parts.conf, parts.chars) == (whole.text, whole.conf, whole.chars), cut
        assert np.array_equal(parts.steps, whole.steps) and np.array_equal(parts.char_probs, whole.char_probs)


def test_class_head_input_of_the_shipped_rec_nets():
    from model_cache.ppocr.recognition import class_head_input, softmax_input
    for param, features in ((default_model_dir() / "rec.ncnn.param", "228"),
                            (default_model_dir() / "ppocr-v6-tiny" / "rec.ncnn.param", "95")):
        assert class_head_input(param, softmax_input(param, "out0")) == features
        assert class_head_input(param, None) is None
