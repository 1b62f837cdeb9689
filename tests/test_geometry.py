"""Absurd page geometry and hostile image headers are refused at once, before anything is allocated.

Every hostile file is generated here and stays a few hundred bytes on disk: the sizes live in
headers (a PDF MediaBox, a PNG IHDR, a JPEG SOF, a TIFF IFD), never in pixel data.
"""

import io
import json
import struct
import time
import zlib
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image

from jobs.sources import MIN_RENDER_SIDE, RenderOptions, SourceError, open_source
from model_cache.ppocr.detection import DetParams, input_size
from outputs.model import ErrorCode
from tests.conftest import FAKE_ENGINE, run_cli


def pdf_with_mediabox(path: Path, box: tuple[float, float, float, float]) -> Path:
    doc = pdfium.PdfDocument.new()
    page = doc.new_page(595, 842)
    pdfium_c.FPDFPage_SetMediaBox(page.raw, *box)
    page.close()
    doc.save(str(path))
    doc.close()
    return path


def render_error(path: Path, **options) -> SourceError:
    source = open_source(path)
    try:
        with pytest.raises(SourceError) as info:
            source.render(1, RenderOptions(**options))
    finally:
        source.close()
    return info.value


def test_a_595_by_2_billion_point_page_is_image_too_large_at_once(tmp_path):
    path = pdf_with_mediabox(tmp_path / "tall.pdf", (0, 0, 595, 2147483648.0))
    assert path.stat().st_size < 1000
    for options in ({}, {"want_image": False, "want_text_layer": True}):  # the text-layer probe too
        start = time.perf_counter()
        error = render_error(path, **options)
        assert time.perf_counter() - start < 1.0
        assert error.code == ErrorCode.IMAGE_TOO_LARGE
        assert "too small to read" in error.message and "595 x 2147483648 pt" in error.message


def test_the_tall_page_in_a_batch_is_one_failed_page_not_a_dead_worker(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    pdf_with_mediabox(inputs / "tall.pdf", (0, 0, 595, 2147483648.0))
    pdf_with_mediabox(inputs / "normal.pdf", (0, 0, 595, 842))
    out = tmp_path / "out"
    start = time.perf_counter()
    proc = run_cli("run", str(inputs), "-o", str(out), "--engine", FAKE_ENGINE, "-q")
    assert proc.returncode == 1, proc.stderr
    assert time.perf_counter() - start < 60
    records = {r["source"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert records["tall.pdf"]["error"]["code"] == "image_too_large"
    assert records["normal.pdf"]["status"] == "ok"


def test_a_very_long_but_readable_page_is_rendered_downscaled_and_says_so(tmp_path):
    path = pdf_with_mediabox(tmp_path / "scroll.pdf", (0, 0, 595, 200_000))  # 336:1, a 70 m scroll
    source = open_source(path)
    page = source.render(1, RenderOptions(max_pixels=4_000_000))
    source.close()
    assert page.width * page.height <= 4_000_000 and min(page.width, page.height) >= MIN_RENDER_SIDE
    assert any("instead of 200" in note for note in page.warnings)


def test_a_sliver_of_a_page_is_refused(tmp_path):
    path = pdf_with_mediabox(tmp_path / "sliver.pdf", (0, 0, 1e-9, 842))
    error = render_error(path)
    assert error.code == ErrorCode.PAGE_LOAD_FAILED and "nothing to read" in error.message


@pytest.mark.parametrize("box", [(0, 0, 0, 0), (0, 0, 595, -842), (0, 0, -595, 842), (0, 0, 1e30, 842)])
def test_zero_negative_and_overflowing_media_boxes_render_as_pdfium_reads_them(tmp_path, box):
    """PDFium turns an empty or overflowing MediaBox into Letter and a negative one into its size."""
    source = open_source(pdf_with_mediabox(tmp_path / "odd.pdf", box))
    page = source.render(1, RenderOptions(dpi=72))
    source.close()
    assert (page.width, page.height) in ((612, 792), (595, 842))


def test_non_finite_or_non_positive_sizes_are_invalid():
    from jobs.sources import _check_page_geometry
    for width, height in ((float("nan"), 842.0), (595.0, float("inf")), (0.0, 842.0), (-1.0, 842.0)):
        with pytest.raises(SourceError) as info:
            _check_page_geometry(1, width, height, 200 / 72, RenderOptions())
        assert info.value.code == ErrorCode.PAGE_LOAD_FAILED


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_header_only(path: Path, width: int, height: int) -> Path:
    """A PNG whose IHDR declares width x height (1-bit) but whose data is a single tiny IDAT."""
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr)
                     + _png_chunk(b"IDAT", zlib.compress(b"\x00\x00")) + _png_chunk(b"IEND", b""))
    return path


def test_a_png_header_of_a_one_pixel_wide_100_million_pixel_strip_is_refused_before_decoding(tmp_path):
    path = png_header_only(tmp_path / "strip.png", 1, 100_000_000)  # under Pillow's bomb limit
    assert path.stat().st_size < 100
    start = time.perf_counter()
    error = render_error(path)
    assert time.perf_counter() - start < 1.0
    assert error.code == ErrorCode.IMAGE_TOO_LARGE and "too small to read" in error.message


def test_a_png_header_beyond_the_bomb_limit_is_refused_on_open(tmp_path):
    with pytest.raises(SourceError) as info:
        open_source(png_header_only(tmp_path / "bomb.png", 100_000, 100_000))
    assert info.value.code == ErrorCode.IMAGE_TOO_LARGE


def test_a_jpeg_header_of_65535_squared_is_refused_on_open(tmp_path):
    buffer = io.BytesIO()
    Image.new("L", (8, 8), 255).save(buffer, "JPEG")
    data = bytearray(buffer.getvalue())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", 65535, 65535)  # height, width
    path = tmp_path / "huge.jpg"
    path.write_bytes(bytes(data))
    with pytest.raises(SourceError) as info:
        open_source(path)
    assert info.value.code == ErrorCode.IMAGE_TOO_LARGE


def test_a_tiff_whose_second_frame_declares_a_huge_size_fails_that_frame_only(tmp_path):
    path = tmp_path / "frames.tif"
    frames = [Image.new("L", (64, 64), 255), Image.new("L", (64, 64), 255)]
    frames[0].save(path, save_all=True, append_images=frames[1:])
    data = bytearray(path.read_bytes())
    assert data[:4] == b"II*\x00"
    first = struct.unpack_from("<I", data, 4)[0]
    second = struct.unpack_from("<I", data, first + 2 + 12 * struct.unpack_from("<H", data, first)[0])[0]
    for index in range(struct.unpack_from("<H", data, second)[0]):
        entry = second + 2 + 12 * index
        tag, kind = struct.unpack_from("<HH", data, entry)
        if tag in (256, 257):  # ImageWidth, ImageLength
            struct.pack_into("<H" if kind == 3 else "<I", data, entry + 8, 65535 if kind == 3 else 400_000)
    path.write_bytes(bytes(data))
    source = open_source(path)
    try:
        assert source.page_count == 2
        assert source.render(1, RenderOptions()).width == 64
        with pytest.raises(SourceError) as info:
            source.render(2, RenderOptions())
        assert info.value.code == ErrorCode.IMAGE_TOO_LARGE
    finally:
        source.close()


@pytest.mark.parametrize("size", [(1, 2339), (4, 40_000), (3, 1_000_000), (1_000_000, 3), (1, 1)])
def test_the_detector_input_never_exceeds_a_limit_side_square(size):
    params = DetParams()
    width, height = input_size(*size, params)
    assert width % 32 == 0 and height % 32 == 0
    assert width * height <= params.limit_side ** 2


def test_ordinary_detector_sizes_are_unchanged():
    params = DetParams()
    assert input_size(1654, 2339, params) == (1120, 1600)
    assert input_size(30, 1500, params) == (64, 3200)  # a text-line image still upscales
    assert input_size(640, 480, params) == (640, 480)
