"""Where the ppocr model files live and how they are checked.

The shipped folder (models/) and any user folder passed as --model-dir share one layout:
a manifest.json (model_cache.manifest) whose "nets" table names each net's .param/.bin and
blob names, and whose "dictionary" names the recognition dictionary. A user folder may
provide only some roles (e.g. another language's rec net + dictionary); the others come
from the shipped folder.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_cache.manifest import Manifest, ModelVerificationError, verify_folder

ENGINE_NAME = "ppocr"
MODEL_NAME = "ppocr-v5-mobile"
DICT_FILE = "ppocr_keys_v5.txt"
ROLES = ("det", "rec", "cls")

_verified: dict[Path, Manifest] = {}
_lock = threading.Lock()


def default_model_dir() -> Path:
    """The converted PP-OCRv5 files shipped inside the package."""
    return Path(__file__).resolve().parent / "models"


def verify(folder: Path | None = None) -> Manifest:
    """Check every file of `folder` (default: the shipped one) against its manifest.
    Raises ModelVerificationError; `pagerunner models verify` calls this uncached."""
    folder = Path(folder or default_model_dir()).resolve()
    manifest = verify_folder(folder, engine=ENGINE_NAME)
    _check_layout(folder, manifest)
    return manifest


def verified(folder: Path) -> Manifest:
    """verify(), but only once per process and folder (the engine's path)."""
    folder = folder.resolve()
    with _lock:
        if folder not in _verified:
            _verified[folder] = verify(folder)
        return _verified[folder]


def _check_layout(folder: Path, manifest: Manifest) -> None:
    nets = manifest.meta.get("nets")
    if not isinstance(nets, dict) or not nets:
        raise ModelVerificationError(folder, ["manifest has no 'nets' table"])
    problems = []
    for role, spec in nets.items():
        if role not in ROLES:
            problems.append(f"nets: unknown role '{role}' (expected {', '.join(ROLES)})")
            continue
        for key in ("param", "bin"):
            if spec.get(key) not in manifest.files:
                problems.append(f"nets.{role}.{key}: {spec.get(key)!r} is not a listed file")
    dictionary = manifest.meta.get("dictionary", {}).get("file")
    if dictionary is not None and dictionary not in manifest.files:
        problems.append(f"dictionary {dictionary!r} is not a listed file")
    if problems:
        raise ModelVerificationError(folder, problems)


def describe(folder: Path | None = None) -> dict[str, Any]:
    """What `pagerunner models list` shows for a ppocr folder (no hashing: see verify)."""
    folder = Path(folder or default_model_dir()).resolve()
    manifest = Manifest.load(folder)
    size = sum((folder / rel).stat().st_size for rel in manifest.files if (folder / rel).is_file())
    return {"name": manifest.name, "engine": manifest.engine, "path": str(folder),
            "files": len(manifest.files), "bytes": size,
            "source": manifest.meta.get("source", {}).get("package", ""),
            "nets": sorted(manifest.meta.get("nets", {}))}


def write_manifest(folder: Path, name: str, nets: dict[str, dict[str, Any]],
                   dictionary: str | None = None) -> Manifest:
    """Make a user folder usable with --model-dir: e.g. nets={"rec": {"param": "rec.param",
    "bin": "rec.bin"}} and the recogniser's dictionary file (blank first, space last)."""
    from model_cache.manifest import MANIFEST_NAME, build_manifest
    folder = Path(folder)
    meta: dict[str, Any] = {"nets": nets}
    if dictionary is not None:
        meta["dictionary"] = {"file": dictionary}
    manifest = build_manifest(folder, name, ENGINE_NAME, meta)
    (folder / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")
    verify(folder)
    return manifest


@dataclass(frozen=True)
class NetFiles:
    param: Path
    bin: Path
    meta: dict[str, Any]

    @property
    def input(self) -> str:
        return str(self.meta.get("input", "in0"))

    @property
    def output(self) -> str:
        return str(self.meta.get("output", "out0"))


@dataclass(frozen=True)
class ModelSet:
    det: NetFiles
    rec: NetFiles
    cls: NetFiles
    dictionary: Path
    folders: tuple[Path, ...]


def _nets_of(folder: Path, manifest: Manifest) -> dict[str, NetFiles]:
    return {role: NetFiles(folder / spec["param"], folder / spec["bin"], dict(spec))
            for role, spec in manifest.meta["nets"].items()}


def load_model_set(user_dir: Path | None = None) -> ModelSet:
    """Verify the shipped folder (and `user_dir`), and pick each role's files; a user
    folder's roles and dictionary take precedence."""
    base_dir = default_model_dir().resolve()
    base = verified(base_dir)
    nets = _nets_of(base_dir, base)
    dictionary = base_dir / base.meta["dictionary"]["file"]
    folders = [base_dir]
    if user_dir is not None:
        user_dir = Path(user_dir).resolve()
        user = verified(user_dir)
        nets.update(_nets_of(user_dir, user))
        if user.meta.get("dictionary", {}).get("file"):
            dictionary = user_dir / user.meta["dictionary"]["file"]
        elif "rec" in user.meta["nets"]:
            raise ModelVerificationError(user_dir, ["a rec net needs its 'dictionary' in the manifest"])
        folders.append(user_dir)
    return ModelSet(nets["det"], nets["rec"], nets["cls"], dictionary, tuple(folders))
