"""End-to-end OCR through the ppocr engine (real models)."""

import pytest
from PIL import Image

from model_cache.engine import EngineError, EngineOptions
from model_cache.ppocr.engine import PPOCREngine, to_rgb
from model_cache.ppocr.runtime import gpu_available
from outputs.model import PageResult

from tests.ppocr_helpers import kit_cer, ppocr_engine  # noqa: F401  (fixture)


def test_phototest_end_to_end(ppocr_engine, eval_dir):
    # Tesseract reads this clean 200 dpi page perfectly (kit README: CER 0.000); we measured
    # 0.000 too. 0.01 leaves room for one or two characters (~3 of 330) across ncnn builds,
    # while a lost line (~40 characters, 0.12) or a wrong line order fails.
    result = ppocr_engine.ocr(Image.open(eval_dir / "scans" / "phototest.tif"))
    assert isinstance(result, PageResult)
    assert result.engine == "ppocr-v5-mobile" and result.rotation == 0
    assert kit_cer(eval_dir / "scans" / "phototest.gt.txt", result.text) < 0.01
    lines = [line for block in result.blocks for line in block.lines]
    assert len(lines) == 8
    assert all(0.8 < line.conf <= 1.0 for line in lines)
    assert "lot of 12 point text" in lines[0].text  # spaces between words are kept
    assert set(result.timings) >= {"detect", "recognize", "total"}


def test_blank_and_tiny_images_give_empty_pages(ppocr_engine):
    blank = ppocr_engine.ocr(Image.new("L", (800, 600), 255))
    assert blank.text == "" and blank.blocks == []
    assert ppocr_engine.ocr(Image.new("RGB", (3, 2), "white")).text == ""


def test_image_modes_are_accepted():
    assert to_rgb(Image.new("1", (4, 3), 1)).shape == (3, 4, 3)
    rgba = Image.new("RGBA", (4, 3), (0, 0, 0, 0))
    assert to_rgb(rgba)[0, 0].tolist() == [255, 255, 255]  # transparent is paper, not ink
    assert to_rgb(Image.new("I;16", (4, 3), 65535)).max() == 255


def test_bad_options_are_refused():
    with pytest.raises(EngineError, match="device"):
        PPOCREngine(EngineOptions(device="tpu"))
    with pytest.raises(EngineError, match="det_limit_side"):
        PPOCREngine(EngineOptions(extra=(("det_limit_side", "big"),)))
    with pytest.raises(EngineError, match="no option det_limit"):
        PPOCREngine(EngineOptions(extra=(("det_limit", "1280"),)))  # a typo is an error, not a no-op
    with pytest.raises(EngineError, match="rec_precision"):  # a GPU setting, checked on a CPU too
        PPOCREngine(EngineOptions(extra=(("rec_precision", "fp8"),)))
    with pytest.raises(EngineError, match="conv"):
        PPOCREngine(EngineOptions(extra=(("conv", "winograd"),)))


def test_conv_picks_ncnns_convolution_kernels():
    def kernels(engine):
        return [(net.net.opt.use_sgemm_convolution, net.net.opt.use_winograd_convolution)
                for net in (engine.det, engine.rec)]
    tiny = (("rec_batch", "off"),)
    assert kernels(PPOCREngine(EngineOptions(threads=1, model="ppocr-v6-tiny", extra=tiny))) == [(False, False)] * 2
    gemm = PPOCREngine(EngineOptions(threads=1, model="ppocr-v6-tiny", extra=(*tiny, ("conv", "gemm"))))
    assert kernels(gemm) == [(True, True)] * 2


def test_engine_is_created_through_the_registry():
    from model_cache.registry import create_engine
    engine = create_engine("ppocr", EngineOptions(threads=1))
    assert engine.name == "ppocr-v5-mobile"


@pytest.mark.gpu
def test_gpu_and_cpu_give_the_same_text(ppocr_engine, eval_dir):
    if not gpu_available():
        pytest.skip("ncnn sees no Vulkan device")
    gpu = PPOCREngine(EngineOptions(threads=2, device="gpu"))
    page = Image.open(eval_dir / "scans" / "phototest.tif")
    assert gpu.ocr(page).text == ppocr_engine.ocr(page).text


@pytest.mark.slow
def test_cardinal_pages_all_come_out_upright_and_alike(ppocr_engine, eval_dir):
    import pypdfium2 as pdfium
    from runner.evaluation.metrics import cer
    doc = pdfium.PdfDocument(str(eval_dir / "edge" / "cardinal.pdf"))
    results = [ppocr_engine.ocr(doc[i].render(scale=200 / 72).to_pil()) for i in range(4)]
    doc.close()
    assert [r.rotation for r in results] == [0, 270, 180, 90]
    base = "".join(results[0].text.split())
    assert len(base) > 500
    for other in results[1:]:
        assert cer(base, "".join(other.text.split())) < 0.05


def test_a_sideways_line_is_detected_again_once_turned(ppocr_engine, eval_dir):
    """The kit's line 1150-010008 is stored turned by 90 degrees: on the sideways image DB finds
    only two pieces of it, so the engine must detect again on the turned image, not reuse them."""
    page = Image.open(eval_dir / "lines" / "1150-010008.png")
    result = ppocr_engine.ocr(page)
    assert result.rotation in (90, 270)
    assert result.text == "[6] R. Nevatia and K. R. Babu. Linear feature extraction and"


@pytest.mark.slow
def test_small_print_survives(ppocr_engine):
    """A4 at 200 dpi filled with 5-pt serif text: the default detector size must still find and
    read it (CER 0.015 at det_limit_side 1920, 0.017 at 1600, 0.018 at 1280, 0.19 at 1024)."""
    import random

    from PIL import ImageDraw, ImageFont

    from runner.evaluation.metrics import cer
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", round(5 / 72 * 200))
    except OSError:
        pytest.skip("DejaVu fonts are not installed")
    rng = random.Random(1)
    words = "the quick brown fox jumps over lazy dog invoice total amount date payment account".split()
    page = Image.new("RGB", (1654, 2339), "white")
    draw = ImageDraw.Draw(page)
    lines = []
    for y in range(150, 2339 - 150, 21):
        line = " ".join(rng.choice(words) for _ in range(14))
        while font.getlength(line) > 1654 - 300:
            line = line.rsplit(" ", 1)[0]
        draw.text((150, y), line, font=font, fill="black")
        lines.append(line)
    assert cer("\n".join(lines), ppocr_engine.ocr(page).text) < 0.03
