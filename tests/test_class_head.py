"""The recogniser's class head run by numpy (model_cache/ppocr/class_head.py): the same arg-max as
ncnn's own head, the same text as one crop at a time inside the net."""

import shutil

import ncnn
import numpy as np
import pytest
from PIL import Image

from model_cache.engine import EngineError, EngineOptions
from model_cache.ppocr import nets
from model_cache.ppocr.assets import load_model_set
from model_cache.ppocr.class_head import graph_to_features, read_class_head
from model_cache.ppocr.recognition import (HEAD_ROWS, RecParams, crop_to_mat, decode_features, load_dictionary,
                                           recognize, softmax_input)
from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions
from tests.ppocr_helpers import ppocr_engine  # noqa: F401 (fixture)
from tests.test_ppocr_batch import line_crops, page_crops

MODELS = ("ppocr-v5-mobile", "ppocr-v6-tiny")
CPU = RuntimeOptions(threads=1, direct_conv=True)


def _head(model: str):
    models = load_model_set(model=model)
    logits = softmax_input(models.rec.param, models.rec.output)
    return models, logits, read_class_head(models.rec.param, models.rec.bin, logits)


def _ncnn_head(models, features_blob: str, logits_blob: str, features: np.ndarray) -> np.ndarray:
    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(str(models.rec.param)) == 0 and net.load_model(str(models.rec.bin)) == 0
    with net.create_extractor() as ex:
        ex.input(features_blob, ncnn.Mat(features))
        _, out = ex.extract(logits_blob)
    return np.array(out).copy()


@pytest.mark.parametrize("model", MODELS)
def test_numpy_head_is_ncnns_head(model):
    models, logits_blob, head = _head(model)
    assert head is not None and head.logits == logits_blob
    depth, classes = head.weight.shape
    features = (np.random.default_rng(7).standard_normal((96, depth)) * 3).astype(np.float32)
    ours, theirs = head(features), _ncnn_head(models, head.features, logits_blob, features)
    assert ours.shape == theirs.shape == (96, classes)
    np.testing.assert_array_equal(ours.argmax(axis=1), theirs.argmax(axis=1))
    assert np.abs(ours - theirs).max() < 1e-4 * np.abs(theirs).max()


@pytest.mark.parametrize("model", MODELS)
def test_the_graph_to_the_features_loads_without_the_head(model):
    models, _, head = _head(model)
    whole = NcnnNet(models.rec, CPU)
    cut = NcnnNet(models.rec, CPU, param_text=graph_to_features(models.rec.param.read_text(), head))
    image = np.random.default_rng(1).random((3, 48, 320)).astype(np.float32)
    np.testing.assert_array_equal(whole.run(image, head.features), cut.run(image, head.features))
    with pytest.raises(Exception):
        cut.run(image, head.logits)  # the head is not in the cut graph


def test_a_bin_whose_end_is_not_the_head_gives_no_numpy_head(tmp_path):
    models, logits_blob, _ = _head("ppocr-v5-mobile")
    bad = tmp_path / "rec.ncnn.bin"
    shutil.copyfile(models.rec.bin, bad)
    with open(bad, "ab") as f:
        f.write(b"\0" * 8)  # eight more bytes: the tags no longer stand where the sizes put them
    assert read_class_head(models.rec.param, bad, logits_blob) is None
    assert read_class_head(models.rec.param, models.rec.bin, "no-such-blob") is None


def test_features_of_many_crops_decode_as_each_crop_alone(ppocr_engine, eval_dir):  # noqa: F811
    """decode_features runs numpy's head across crops (HEAD_ROWS steps at a time); every crop's
    text, step indices and probabilities are those of the crop recognised alone by the whole net."""
    models, logits_blob, head = _head("ppocr-v5-mobile")
    crops = page_crops(ppocr_engine, Image.open(eval_dir / "scans" / "phototest.tif"))
    crops += line_crops(eval_dir / "lines", 8)
    rec, dictionary = RecParams(), load_dictionary(models.dictionary)
    whole = NcnnNet(models.rec, CPU)
    alone = [recognize(whole, crop, dictionary, rec, logits_blob) for crop in crops]
    cut = NcnnNet(models.rec, CPU, param_text=graph_to_features(models.rec.param.read_text(), head))
    features = [cut.run(crop_to_mat(crop, rec), head.features) for crop in crops]
    assert sum(len(f.reshape(-1, f.shape[-1])) for f in features) > 2 * HEAD_ROWS  # runs span crops
    together = decode_features(features, head, dictionary)
    assert len(crops) > 10
    for a, b in zip(alone, together):
        assert a.text == b.text
        assert list(a.steps) == list(b.steps) and a.frames == b.frames
        np.testing.assert_allclose(a.char_probs, b.char_probs, atol=1e-5)


def test_decode_features_of_no_steps():
    _, _, head = _head("ppocr-v6-tiny")
    depth = head.weight.shape[0]
    out = decode_features([np.zeros((0, depth), np.float32)], head, ["", "a"])
    assert out[0].text == "" and out[0].frames == 0


def test_the_option_chooses_where_the_head_runs():
    models = load_model_set()
    auto = nets.recognizer(models, EngineOptions(threads=1))
    kept = nets.recognizer(models, EngineOptions(threads=1, extra=(("rec_head", "ncnn"),)))
    assert auto.class_head is not None and kept.class_head is None
    with pytest.raises(EngineError):
        nets.recognizer(models, EngineOptions(threads=1, extra=(("rec_head", "numpy"),)))


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_a_dense_page_reads_the_same_with_either_head(model, eval_dir):
    """Whole pages through the engine, numpy's head against ncnn's: the same lines, boxes and
    confidences to rounding (the kit's densest page and a scan)."""
    import pypdfium2 as pdfium
    from model_cache.ppocr.engine import create_engine
    pdf = pdfium.PdfDocument(str(eval_dir / "pdfs" / "maint-guide.en.p5-9.pdf"))
    pages = [pdf[2].render(scale=200 / 72).to_pil(), Image.open(eval_dir / "scans" / "eurotext.tif")]
    engines = [create_engine(EngineOptions(model=model, threads=2, extra=(("rec_head", head),)))
               for head in ("auto", "ncnn")]
    assert engines[0].class_head is not None and engines[1].class_head is None
    for page in pages:
        numpy_lines, ncnn_lines = ([line for block in e.ocr(page).blocks for line in block.lines] for e in engines)
        assert len(numpy_lines) > 10
        assert [line.text for line in numpy_lines] == [line.text for line in ncnn_lines]
        for a, b in zip(numpy_lines, ncnn_lines):
            assert abs(a.conf - b.conf) < 1e-4
