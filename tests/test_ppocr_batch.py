"""Batched recognition (model_cache/ppocr/batch_graph.py, batch_rec.py): line crops packed into
strips give the text of one crop at a time."""

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from model_cache.ppocr.assets import load_model_set
from model_cache.ppocr.batch_graph import INDEX_RADIX, Unbatchable, build
from model_cache.ppocr.batch_rec import (ALIGN, BatchParams, StripRecognizer, WidthMap, joined_index, plan_strips,
                                         probe)
from model_cache.ppocr.detection import detect
from model_cache.ppocr.engine import to_rgb
from model_cache.ppocr.crops import rectify
from model_cache.ppocr.recognition import (RecParams, ctc_decode, ctc_decode_top1, load_dictionary,
                                           recognize, softmax_input)
from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions, gpu_available
from tests.ppocr_helpers import ppocr_engine  # noqa: F401 (fixture)

REC = RecParams()
CPU = RuntimeOptions(threads=2, direct_conv=True)


def page_crops(engine, image: Image.Image) -> list[np.ndarray]:
    rgb = to_rgb(image)
    return [rectify(rgb, box.quad, REC) for box in detect(engine.det, rgb, engine.params.det)]


def line_crops(folder: Path, count: int) -> list[np.ndarray]:
    """The kit's single-line images, each read as one crop."""
    crops = []
    for path in sorted(folder.glob("*.png"))[:count]:
        rgb = to_rgb(Image.open(path))
        h, w = rgb.shape[:2]
        quad = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        crops.append(rectify(rgb, quad, REC))
    return crops


def one_at_a_time(crops: list[np.ndarray], model: str | None = None) -> list:
    models = load_model_set(model=model)
    net = NcnnNet(models.rec, CPU)
    dictionary = load_dictionary(models.dictionary)
    logits = softmax_input(models.rec.param, models.rec.output)
    return [recognize(net, crop, dictionary, REC, logits) for crop in crops]


def in_strips(crops: list[np.ndarray], params: BatchParams, options: RuntimeOptions = CPU,
              top1: bool = False, model: str | None = None) -> list:
    models = load_model_set(model=model)
    dictionary = load_dictionary(models.dictionary)
    strips = StripRecognizer(models.rec, options, params, top1=top1)
    scores = strips.run(crops, REC)
    if top1:
        return [ctc_decode_top1(s, dictionary) for s in scores]
    return [ctc_decode(s, dictionary, logits=True) for s in scores]


def test_strips_give_the_text_of_one_crop_at_a_time(ppocr_engine, eval_dir):  # noqa: F811
    crops = page_crops(ppocr_engine, Image.open(eval_dir / "scans" / "phototest.tif"))
    crops += line_crops(eval_dir / "lines", 8)
    single = one_at_a_time(crops)
    batched = in_strips(crops, BatchParams(max_steps=256))
    assert len(crops) > 10
    assert [r.text for r in batched] == [r.text for r in single]
    for a, b in zip(single, batched):
        assert abs(a.conf - b.conf) < 1e-3
        assert list(a.steps) == list(b.steps) and a.frames == b.frames


@pytest.mark.slow
def test_strips_on_the_kit(ppocr_engine, eval_dir):  # noqa: F811
    """>= 99.5 % of lines identical on a dense PDF page, a scan and the kit's text lines (in
    practice all of them, as the rewrite is exact up to rounding)."""
    import pypdfium2 as pdfium
    pdf = pdfium.PdfDocument(str(eval_dir / "pdfs" / "maint-guide.en.p5-9.pdf"))
    crops = page_crops(ppocr_engine, pdf[0].render(scale=200 / 72).to_pil())
    crops += page_crops(ppocr_engine, Image.open(eval_dir / "scans" / "eurotext.tif"))
    crops += line_crops(eval_dir / "lines", 60)
    single = [r.text for r in one_at_a_time(crops)]
    for params in (BatchParams(), BatchParams(max_steps=96, gap=32)):
        batched = [r.text for r in in_strips(crops, params)]
        same = sum(a == b for a, b in zip(single, batched))
        assert same >= 0.995 * len(crops), [(a, b) for a, b in zip(single, batched) if a != b]


def test_top1_tail_equals_decoding_the_logits(ppocr_engine, eval_dir):  # noqa: F811
    crops = line_crops(eval_dir / "lines", 6)
    logits = in_strips(crops, BatchParams())
    top1 = in_strips(crops, BatchParams(), top1=True)
    assert [r.text for r in top1] == [r.text for r in logits]
    for a, b in zip(logits, top1):
        np.testing.assert_allclose(a.char_probs, b.char_probs, atol=1e-4)


def test_split_index_tail_equals_the_fp32_tail(eval_dir):
    """The fp16 form of the top-1 tail (class index as index // 128 and index % 128) gives, run
    in fp32 on the CPU, exactly the probabilities and indices of the one-index tail."""
    models = load_model_set()
    crops = [c for c in line_crops(eval_dir / "lines", 6)]
    one = StripRecognizer(models.rec, CPU, BatchParams(), top1=True)
    split = StripRecognizer(models.rec, CPU, BatchParams(), top1=True, split_index=True)
    assert one.graph.ramp_low is None and split.graph.ramp_low is not None
    a, b = one.run(crops, REC), split.run(crops, REC)
    assert max(int(x[1].max()) for x in a) > INDEX_RADIX  # indices that need both parts
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x[1], y[1])
        np.testing.assert_allclose(x[0], y[0], rtol=1e-6)


def test_joined_index():
    parts = np.array([[0.5, 0.9, 1.0], [0, 143, 1], [7, 81, 0]], np.float32)
    expected = np.array([[0.5, 0.9, 1.0], [7, 143 * 128 + 81, 128]], np.float32)
    np.testing.assert_array_equal(joined_index(parts), expected)


def test_strip_plan():
    steps = WidthMap(base=(8, 8, 8, 8, 8, 9, 9, 9), per_align=1, axis=0)  # PP-OCRv5: ~w / 8
    widths = [64, 900, 70, 3000, 65, 64, 100]
    strips = plan_strips(widths, steps, BatchParams(max_steps=160, gap=16))
    assert [i for s in strips for i in s.crops] == list(range(len(widths)))  # order kept
    for strip in strips:
        assert all(x % ALIGN == 0 for x in strip.starts)
        ends = [x + w for x, w in zip(strip.starts, strip.widths)]
        assert all(end + 16 <= nxt for end, nxt in zip(ends, strip.starts[1:]))  # gaps kept
        assert len(strip.crops) == 1 or steps(strip.width) <= 160  # a long crop may stand alone
    assert any(len(s.crops) > 1 for s in strips)


def test_a_graph_that_mixes_crops_unknowingly_is_refused(tmp_path):
    param = tmp_path / "maxpool.param"
    param.write_text("7767517\n3 3\nInput in0 0 1 in0\nPooling gmax 1 1 in0 p 0=0 4=1\n"
                     "Softmax sm 1 1 p out0 0=0\n", encoding="utf-8")
    with pytest.raises(Unbatchable):
        build(param, probe_shapes_stub())


def probe_shapes_stub():
    from model_cache.ppocr.batch_graph import Shapes
    return Shapes({"in0": (3, 48, 64), "p": (3,)})


def test_the_batch_graph_has_no_host_layers_on_a_gpu():
    """Squeeze (no Vulkan kernel) sits in the shipped recogniser; the batch graph replaces it."""
    if not gpu_available():
        pytest.skip("ncnn sees no Vulkan device")
    models = load_model_set()
    shapes, _ = probe(models.rec, [])
    gpu = RuntimeOptions(gpu=True, fp16=False)
    assert NcnnNet(models.rec, gpu).host_layers == ["Squeeze"]
    assert NcnnNet(models.rec, gpu, param_text=build(models.rec.param, shapes, top1=True).text).host_layers == []


@pytest.mark.gpu
def test_gpu_strips_with_the_top1_tail_match_the_cpu(eval_dir):
    if not gpu_available():
        pytest.skip("ncnn sees no Vulkan device")
    crops = line_crops(eval_dir / "lines", 4)
    gpu = in_strips(crops, BatchParams(), RuntimeOptions(threads=2, gpu=True, fp16=False), top1=True)
    assert [r.text for r in gpu] == [r.text for r in one_at_a_time(crops)]


@pytest.mark.gpu
def test_gpu_strips_in_fp16_read_what_the_cpu_reads(eval_dir):
    """rec_precision=fp16: the net in fp16 storage and arithmetic, the index in two parts
    (on lavapipe, 8/8 of the kit's first line images as the CPU reads them)."""
    if not gpu_available():
        pytest.skip("ncnn sees no Vulkan device")
    crops = line_crops(eval_dir / "lines", 4)
    gpu = in_strips(crops, BatchParams(), RuntimeOptions(threads=2, gpu=True, fp16=True), top1=True)
    assert [r.text for r in gpu] == [r.text for r in one_at_a_time(crops)]


@pytest.mark.gpu
def test_gpu_strips_of_the_gpu_default_length_read_what_the_cpu_reads(eval_dir):
    """The GPU's own strip shape (2048 steps, fixed width: mostly gap for 4 lines) changes no text.
    PP-OCRv6 tiny: PP-OCRv5's attention over 2048 steps takes minutes on lavapipe."""
    if not gpu_available():
        pytest.skip("ncnn sees no Vulkan device")
    from model_cache.ppocr.nets import strip_steps

    crops = line_crops(eval_dir / "lines", 4)
    params = BatchParams(max_steps=strip_steps(gpu=True), fixed_width=True)
    gpu = in_strips(crops, params, RuntimeOptions(threads=2, gpu=True, fp16=False), top1=True,
                    model="ppocr-v6-tiny")
    assert [r.text for r in gpu] == [r.text for r in one_at_a_time(crops, "ppocr-v6-tiny")]
