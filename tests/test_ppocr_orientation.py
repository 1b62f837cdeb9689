"""Whole-page orientation on the kit's rotated scans, and the geometry helpers."""

import dataclasses

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from model_cache.ppocr.detection import detect
from model_cache.ppocr.orientation import line_piece, rotate_boxes, rotate_image, rotate_quad, upside_down

from tests.ppocr_helpers import kit_cer, ppocr_engine  # noqa: F401  (fixture)


@pytest.mark.parametrize("name,rotation", [
    ("phototest.tif", 0), ("phototest-rotated-L.png", 90), ("phototest-rotated-R.png", 270),
    ("phototest-rotated-180.png", 180)])
def test_rotated_scans_come_out_upright(ppocr_engine, eval_dir, name, rotation):
    result = ppocr_engine.ocr(Image.open(eval_dir / "scans" / name))
    assert result.rotation == rotation
    assert (result.width, result.height) == (640, 480)
    assert kit_cer(eval_dir / "scans" / "phototest.gt.txt", result.text) < 0.02
    first = result.blocks[0].lines[0]
    assert first.text.startswith("This is a lot of 12 point text")
    assert max(p[1] for p in first.box) < 150  # boxes in the upright image: the first line is on top


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_rotate_quad_matches_rotate_image(degrees):
    img = np.zeros((60, 100, 3), dtype=np.uint8)
    img[10:20, 30:70] = 255
    quad = np.array([[30, 10], [70, 10], [70, 20], [30, 20]], dtype=np.float32)
    turned = rotate_image(img, degrees)
    q = rotate_quad(quad, degrees, 100, 60)
    ys, xs = np.nonzero(turned[..., 0])
    assert (xs.min(), ys.min()) == pytest.approx(tuple(q.min(0)), abs=1)
    assert (xs.max() + 1, ys.max() + 1) == pytest.approx(tuple(q.max(0)), abs=1)


def _repetitive_page() -> np.ndarray:
    """Eight long lines of "very very ..." over one ordinary line (eqexpl's example page)."""
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", 28)
    image = Image.new("RGB", (1700, 900), "white")
    draw = ImageDraw.Draw(image)
    for row in range(8):
        draw.text((150, 80 + 40 * row), " ".join(["very"] * 15), font=font, fill="black")
    draw.text((150, 430), "Then write an equation and describe the variables", font=font, fill="black")
    return np.asarray(image)


def test_long_repetitive_lines_do_not_turn_an_upright_page(ppocr_engine):
    # Squeezed whole into the classifier's 160 x 80, these lines vote "turned" with p ~ 1 (and
    # the turned page "upright"); a piece eight heights long reads the right way.
    rgb = _repetitive_page()
    boxes = detect(ppocr_engine.det, rgb, ppocr_engine.params.det)
    turned, turned_boxes = rotate_image(rgb, 180), rotate_boxes(boxes, 180, rgb.shape[1], rgb.shape[0])
    params = ppocr_engine.params.orient
    assert not upside_down(ppocr_engine.cls, rgb, boxes, params)
    assert upside_down(ppocr_engine.cls, turned, turned_boxes, params)
    whole = dataclasses.replace(params, piece_aspect=float("inf"))
    assert upside_down(ppocr_engine.cls, rgb, boxes, whole)  # what the vote did on whole lines


def test_line_piece_keeps_the_start_of_a_long_line():
    quad = np.array([[10, 100], [1010, 110], [1010, 140], [10, 130]], dtype=np.float32)
    piece = line_piece(quad, 8.0)
    assert piece[0] == pytest.approx(quad[0]) and piece[3] == pytest.approx(quad[3])
    assert piece[1][0] - piece[0][0] == pytest.approx(240, abs=3)  # 8 heights of 30 px
    assert piece[1][1] == pytest.approx(100 + 10 * 0.24, abs=0.5)  # along the line's slope
    short = quad.copy()
    short[1:3, 0] = 200
    assert line_piece(short, 8.0) is short


def _page_with_an_axis_title(title: str, angle: int) -> Image.Image:
    """Two lines of text and a title set vertically, turned by `angle` (90: read bottom to top,
    as a chart's vertical axis title is)."""
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 30)
    image = Image.new("RGB", (1200, 900), "white")
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(["Efficiency of defect detection on noisy images", "measured over forty samples each"]):
        draw.text((250, 100 + 45 * row), line, font=font, fill="black")
    tag = Image.new("RGB", (420, 40), "white")
    ImageDraw.Draw(tag).text((5, 2), title, font=font, fill="black")
    image.paste(tag.rotate(angle, expand=True), (100, 300))
    return image


@pytest.mark.parametrize("angle", [90, -90])
def test_a_line_set_vertically_is_read_whichever_way_it_runs(angle):
    # The v6 tiny recogniser read a bottom-to-top title, turned top to bottom, as
    # "suolneIΛea pepueis" with a confidence above the threshold for reading it the other way too.
    from model_cache.engine import EngineOptions
    from model_cache.ppocr.engine import PPOCREngine

    engine = PPOCREngine(EngineOptions(threads=1, model="ppocr-v6-tiny"))
    result = engine.ocr(_page_with_an_axis_title("Standard Deviations", angle))
    assert "Standard Deviations" in [line.text for block in result.blocks for line in block.lines]


def _one_line(quad_width: int = 600) -> list:
    from model_cache.ppocr.detection import TextBox
    quad = np.array([[100, 100], [100 + quad_width, 100], [100 + quad_width, 140], [100, 140]], dtype=np.float32)
    return [TextBox(quad, 0.9)]


@pytest.mark.parametrize("votes,turned", [((0.93,), False), ((0.995,), True), ((0.93, 0.93), True),
                                          ((0.02,), False)])
def test_a_page_turns_on_one_line_only_when_its_vote_is_near_certain(monkeypatch, votes, turned):
    # reledpar p6: one line of Greek on an upright page voted "turned" at 0.93 and the page was
    # read upside down; turned Latin lines alone on a page vote 0.99 or more.
    from model_cache.ppocr import orientation
    from model_cache.ppocr.orientation import OrientParams

    answers = iter(votes)
    monkeypatch.setattr(orientation, "flip_probability", lambda *args: next(answers))
    boxes = _one_line() * len(votes)
    assert upside_down(None, np.zeros((300, 900, 3), np.uint8), boxes, OrientParams()) is turned


@pytest.mark.parametrize("text", ["Received on 12 March 2024", "Appendix B: Tables of constants"])
def test_a_turned_page_of_one_line_is_read_upright(ppocr_engine, text):
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", 34)
    image = Image.new("RGB", (1700, 2200), "white")
    ImageDraw.Draw(image).text((300, 1000), text, font=font, fill="black")
    result = ppocr_engine.ocr(image.rotate(180))
    assert result.rotation == 180
    assert result.text.strip() == text
