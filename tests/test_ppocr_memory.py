"""A PP-OCRv5 CPU run's memory (docs/benchmarks.md, stop 18): detector turns across workers,
recogniser pools that hold one crop's worth, logits read in place, the detector's input handed
over. None of it may change a line."""

import ctypes
import platform
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from model_cache.engine import EngineError, EngineOptions
from model_cache.ppocr.assets import load_model_set
from model_cache.ppocr.crops import rectify
from model_cache.ppocr.engine import PPOCREngine, _det_turns, to_rgb
from model_cache.ppocr.recognition import crop_to_mat, recognize
from runner.job import RunConfig, make_executor


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]


def _heap_in_use() -> float:
    """MiB malloc has handed out (heap and mmapped chunks): ncnn's pools are part of it."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 2 ** 20


needs_glibc = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc"
                                 or not hasattr(ctypes.CDLL("libc.so.6"), "mallinfo2"),
                                 reason="mallinfo2 is glibc's")


# These engines keep the class head in the net (rec_head=ncnn): the tests below are about ncnn's
# pools and the head run in pieces inside it. Numpy's head: tests/test_class_head.py.
NCNN_HEAD = (("rec_head", "ncnn"),)


@pytest.fixture(scope="module")
def v5_one_thread():
    return PPOCREngine(EngineOptions(threads=1, model="ppocr-v5-mobile", extra=NCNN_HEAD))


@pytest.fixture
def phototest_crops(v5_one_thread, eval_dir):
    rgb = to_rgb(Image.open(eval_dir / "scans" / "phototest.tif"))
    boxes = v5_one_thread._detect_boxes(rgb)
    return [rectify(rgb, box.quad, v5_one_thread.params.rec) for box in boxes]


def test_v5_asks_for_detector_turns_and_v6_tiny_does_not():
    v5, v6 = (load_model_set(None, name).defaults for name in ("ppocr-v5-mobile", "ppocr-v6-tiny"))
    assert _det_turns(EngineOptions(), v5) and not _det_turns(EngineOptions(), v6)
    assert not _det_turns(EngineOptions(extra=(("det_turns", "off"),)), v5)
    assert _det_turns(EngineOptions(extra=(("det_turns", "on"),)), v6)
    with pytest.raises(EngineError, match="det_turns"):
        _det_turns(EngineOptions(extra=(("det_turns", "maybe"),)), v5)


def test_a_runs_cpu_workers_share_turns_files_in_pairs_in_its_store():
    out = Path("/nonexistent")
    shared = make_executor(RunConfig([], out, workers=2, threads=1))
    assert [c.engine_options.turns for c in shared.configs] == [str(out / ".pagerunner" / "detector.turns.0")] * 2
    five = make_executor(RunConfig([], out, workers=5, threads=1))  # in pairs: half of them detect at once
    assert [Path(c.engine_options.turns).name[-1] for c in five.configs] == list("00112")
    assert five.workers == 5
    assert make_executor(RunConfig([], out, workers=1, threads=2)).config.engine_options.turns is None
    assert {c.engine_options.turns for c in make_executor(
        RunConfig([], out, workers=2, threads=1, engine="hunyuan")).configs} == {None}


def test_turns_change_no_text_and_report_the_wait(v5_one_thread, eval_dir, tmp_path):
    page = Image.open(eval_dir / "scans" / "phototest.tif")
    lock = tmp_path / "detector.turns"
    taking = PPOCREngine(EngineOptions(threads=1, model="ppocr-v5-mobile", turns=str(lock), extra=NCNN_HEAD))
    ours, theirs = taking.ocr(page), v5_one_thread.ocr(page)
    assert ours.text == theirs.text and ours.blocks == theirs.blocks
    assert lock.exists() and ours.timings["detect_wait"] >= 0
    assert "detect_wait" not in theirs.timings


def test_crops_read_widest_first_give_each_crop_its_own_result(v5_one_thread, phototest_crops):
    engine = v5_one_thread
    alone = [recognize(engine.rec, crop, engine.dictionary, engine.params.rec, engine.rec_logits)
             for crop in phototest_crops]
    together = engine._rec_many(phototest_crops)
    assert [r.text for r in together] == [r.text for r in alone]
    assert [r.conf for r in together] == [r.conf for r in alone]
    assert all(np.array_equal(a.char_probs, b.char_probs) for a, b in zip(alone, together))


@pytest.fixture(scope="module")
def v5_numpy_head():
    return PPOCREngine(EngineOptions(threads=1, model="ppocr-v5-mobile"))  # the default: numpy's head


@needs_glibc
@pytest.mark.parametrize("head", ["ncnn", "numpy"])
def test_the_recognisers_pools_hold_about_one_widest_crop(head, v5_one_thread, v5_numpy_head):
    # Crops of growing widths, as a page's lines come: read one by one in that order, ncnn's
    # pools kept buffers for each new width: 102 MiB against 66 for the widest crop alone.
    engine = v5_one_thread if head == "ncnn" else v5_numpy_head
    assert (engine.class_head is None) == (head == "ncnn")
    rng = np.random.default_rng(0)
    crops = [rng.integers(0, 255, (48, w, 3), dtype=np.uint8) for w in (200, 400, 700, 1000, 1400, 1800)]

    def held(run) -> float:
        engine.rec.release()
        before = _heap_in_use()
        run()
        grown = _heap_in_use() - before
        engine.rec.release()
        return grown

    widest = held(lambda: engine._rec_many(crops[-1:]))
    page = held(lambda: engine._rec_many(crops))
    assert page < 1.3 * widest, (page, widest)


def test_logits_read_in_place_equal_the_copied_ones(v5_one_thread, phototest_crops):
    net, crop = v5_one_thread.rec, phototest_crops[0]
    mat = lambda: crop_to_mat(crop, v5_one_thread.params.rec)  # noqa: E731
    copied = net.run(mat(), v5_one_thread.rec_logits)
    assert net.run(mat(), v5_one_thread.rec_logits, lambda blob: np.array_equal(blob, copied))
    inputs = {net.files.input: mat()}
    handed = net.run_inputs(inputs, v5_one_thread.rec_logits, consume=True)
    assert inputs == {} and np.array_equal(handed, copied)


@pytest.fixture(scope="module")
def v6_one_thread():
    return PPOCREngine(EngineOptions(threads=1, model="ppocr-v6-tiny", extra=NCNN_HEAD))


@pytest.mark.parametrize("model", ["v5", "v6"])
def test_the_class_head_run_in_pieces_gives_the_same_bits(model, v5_one_thread, v6_one_thread,
                                                          phototest_crops):
    engine = v5_one_thread if model == "v5" else v6_one_thread
    wide = np.random.default_rng(1).integers(0, 255, (48, 2346, 3), dtype=np.uint8)  # 293 steps on v5
    assert engine.rec_head is not None
    for crop in [*phototest_crops, wide]:
        args = (engine.rec, crop, engine.dictionary, engine.params.rec, engine.rec_logits)
        whole, pieces = recognize(*args), recognize(*args, engine.rec_head)
        assert (pieces.text, pieces.conf, pieces.chars, pieces.frames) == (whole.text, whole.conf,
                                                                            whole.chars, whole.frames)
        assert np.array_equal(pieces.char_probs, whole.char_probs)


@needs_glibc
def test_a_wide_lines_class_head_in_pieces_needs_a_fraction_of_the_buffers(v5_one_thread):
    # Measured: a 2346 px crop's pools grow 86.5 MiB with the head run whole (its 293 x 18385
    # logits and the Gemm's buffers), 66.0 with the head run 64 steps at a time.
    engine = v5_one_thread
    crop = np.random.default_rng(2).integers(0, 255, (48, 2346, 3), dtype=np.uint8)

    def held(head: str | None) -> float:
        engine.rec.release()
        before = _heap_in_use()
        recognize(engine.rec, crop, engine.dictionary, engine.params.rec, engine.rec_logits, head)
        grown = _heap_in_use() - before
        engine.rec.release()
        return grown

    whole, pieces = held(None), held(engine.rec_head)
    assert pieces < whole - 12, (pieces, whole)
