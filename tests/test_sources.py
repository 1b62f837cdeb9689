from pathlib import Path

import pytest
from PIL import Image

from jobs.sources import RenderOptions, SourceError, open_source
from outputs.model import ErrorCode
from tests.conftest import make_page, make_pdf

EDGE_CODES = {
    "bad1.pdf": ErrorCode.CORRUPT_PDF,
    "invalid.pdf": ErrorCode.CORRUPT_PDF,
    "issue-147.pdf": ErrorCode.CORRUPT_PDF,  # carries /Encrypt but is garbage: not a password case
    "empty.pdf": ErrorCode.EMPTY_DOCUMENT,
    "empty.png": ErrorCode.EMPTY_FILE,
    "bomb_60000x60000.png": ErrorCode.IMAGE_TOO_LARGE,
    "r2-user-password.pdf": ErrorCode.PASSWORD_REQUIRED,
    "r6-user-password.pdf": ErrorCode.PASSWORD_REQUIRED,
}


@pytest.mark.parametrize("name,code", sorted(EDGE_CODES.items()))
def test_edge_documents_fail_with_their_code(eval_dir, name, code):
    with pytest.raises(SourceError) as info:
        open_source(eval_dir / "edge" / name)
    assert info.value.code == code


def test_stale_pdfium_error_is_not_trusted(eval_dir):
    """PDFium's last error is global: a password failure must not leak into the next document."""
    with pytest.raises(SourceError) as first:
        open_source(eval_dir / "edge" / "r6-user-password.pdf")
    assert first.value.code == ErrorCode.PASSWORD_REQUIRED
    with pytest.raises(SourceError) as second:
        open_source(eval_dir / "edge" / "empty.pdf")
    assert second.value.code == ErrorCode.EMPTY_DOCUMENT


def test_passwords(eval_dir):
    with pytest.raises(SourceError) as info:
        open_source(eval_dir / "edge" / "r6-user-password.pdf", ("wrong", "also wrong"))
    assert info.value.code == ErrorCode.INCORRECT_PASSWORD
    assert "wrong" not in info.value.message
    source = open_source(eval_dir / "edge" / "r2-user-password.pdf", ("wrong", "asdfzxcv"))
    page = source.render(1, RenderOptions(want_text_layer=True))
    assert "pdf encryption test" in " ".join(line.text for line in page.text_layer.lines)
    source.close()


def test_owner_only_encryption_opens_without_password(eval_dir):
    source = open_source(eval_dir / "edge" / "empty_protected.pdf")
    assert source.page_count == 1
    source.close()


def test_page_level_failure(eval_dir):
    source = open_source(eval_dir / "edge" / "bad34.pdf")
    with pytest.raises(SourceError) as info:
        source.render(1, RenderOptions())
    assert info.value.code == ErrorCode.PAGE_LOAD_FAILED
    source.close()


def test_truncated_jpeg_is_corrupt_image(eval_dir):
    source = open_source(eval_dir / "edge" / "truncated.jpg")
    with pytest.raises(SourceError) as info:
        source.render(1, RenderOptions())
    assert info.value.code == ErrorCode.CORRUPT_IMAGE


def test_huge_page_is_capped_before_rendering(eval_dir):
    source = open_source(eval_dir / "edge" / "hugemono.pdf")
    page = source.render(1, RenderOptions(dpi=300, max_pixels=4_000_000))
    assert page.width * page.height <= 4_000_000
    assert page.warnings and "max-pixels" in page.warnings[0]
    source.close()


def test_pdf_pages_and_dpi(tmp_path):
    pdf = make_pdf(tmp_path / "a.pdf", 3, "x")
    source = open_source(pdf)
    assert source.kind == "pdf" and source.page_count == 3
    page = source.render(2, RenderOptions(dpi=144))
    assert page.image.mode == "RGB" and page.image.size == (800, 600) and page.dpi == 144
    source.close()


def test_tiff_frames_are_pages(tmp_path):
    frames = [make_page(f"f{i}", seed=i) for i in range(3)]
    frames[0].save(tmp_path / "m.tif", save_all=True, append_images=frames[1:])
    source = open_source(tmp_path / "m.tif")
    assert source.page_count == 3
    rendered = [source.render(i, RenderOptions()).image.tobytes() for i in (1, 2, 3)]
    assert len(set(rendered)) == 3
    source.close()


def test_exif_orientation_applied(tmp_path):
    image = Image.new("RGB", (40, 20), "white")
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 CW to display
    image.save(tmp_path / "r.jpg", exif=exif)
    page = open_source(tmp_path / "r.jpg").render(1, RenderOptions())
    assert page.image.size == (20, 40)


def test_image_modes_become_rgb(tmp_path):
    Image.new("1", (30, 30), 1).save(tmp_path / "bw.png")
    Image.new("RGBA", (30, 30), (0, 0, 0, 0)).save(tmp_path / "alpha.png")
    Image.new("I;16", (30, 30), 65535).save(tmp_path / "deep.png")
    for name in ("bw.png", "alpha.png", "deep.png"):
        page = open_source(tmp_path / name).render(1, RenderOptions())
        assert page.image.mode == "RGB"
        assert page.image.getpixel((5, 5)) == (255, 255, 255)


def test_large_image_downscaled(tmp_path):
    Image.new("RGB", (3000, 2000), "white").save(tmp_path / "big.png")
    page = open_source(tmp_path / "big.png").render(1, RenderOptions(max_pixels=1_000_000))
    assert page.width * page.height <= 1_000_000 and page.warnings


def test_bytes_source_equals_path_source(tmp_path):
    pdf = make_pdf(tmp_path / "a.pdf", 2, "y")
    a = open_source(pdf).render(2, RenderOptions()).image.tobytes()
    b = open_source(Path("a.pdf"), data=pdf.read_bytes()).render(2, RenderOptions()).image.tobytes()
    assert a == b
