"""Where the ppocr model files live and how they are checked.

Every shipped model and any user folder passed as --model-dir share one layout: a
manifest.json (model_cache.manifest) whose "nets" table names each net's .param/.bin and blob
names, whose "dictionary" names the recognition dictionary, and whose optional "defaults" are
the engine settings the model was measured with (det_limit_side, det_thresh, ...).

The PP-OCRv5 mobile folder (models/) is the base: a model that ships only some roles (PP-OCRv6
tiny ships det and rec) and any user folder take the other roles from it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_cache.manifest import Manifest, ModelVerificationError, verify_folder

ENGINE_NAME = "ppocr"
MODEL_NAME = "ppocr-v5-mobile"  # the base model (folder models/)
DICT_FILE = "ppocr_keys_v5.txt"
ROLES = ("det", "rec", "cls")
# Shipped models: name -> folder under models/ ("" is models/ itself).
BUNDLED_MODELS = {"ppocr-v5-mobile": "", "ppocr-v6-tiny": "ppocr-v6-tiny"}
DEFAULT_MODEL = "ppocr-v5-mobile"

_verified: dict[Path, Manifest] = {}
_lock = threading.Lock()


def default_model_dir() -> Path:
    """The converted PP-OCRv5 files shipped inside the package (the base model)."""
    return Path(__file__).resolve().parent / "models"


def resolve_model(name: str | None) -> str:
    """A shipped model's name (None: the default); raises ModelVerificationError naming the
    choices for anything else."""
    name = name or DEFAULT_MODEL
    if name not in BUNDLED_MODELS:
        raise ModelVerificationError(default_model_dir(), [
            f"no shipped ppocr model {name!r} (choose from {', '.join(BUNDLED_MODELS)})"])
    return name


def bundled_model_dir(name: str | None = None) -> Path:
    return default_model_dir() / BUNDLED_MODELS[resolve_model(name)]


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
            "nets": sorted(manifest.meta.get("nets", {})),
            "languages": manifest.meta.get("languages", ""),
            "defaults": dict(manifest.meta.get("defaults", {}))}


def describe_model(folder: Path) -> dict[str, Any] | None:
    """describe() for a ppocr folder, None for another engine's or an unreadable one."""
    try:
        manifest = Manifest.load(folder)
    except ModelVerificationError:
        return None
    return describe(folder) if manifest.engine == ENGINE_NAME else None


FIGURES_FILE = Path(__file__).resolve().parent / "figures.json"


def measured_figures() -> dict[str, Any]:
    """The committed speed/accuracy figures (benchmarks/model_figures.py writes them); {} if absent."""
    import json
    try:
        return json.loads(FIGURES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


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
    name: str = MODEL_NAME
    defaults: dict[str, Any] = field(default_factory=dict)  # the manifests' "defaults", later folders win


def _nets_of(folder: Path, manifest: Manifest) -> dict[str, NetFiles]:
    return {role: NetFiles(folder / spec["param"], folder / spec["bin"], dict(spec))
            for role, spec in manifest.meta["nets"].items()}


@dataclass
class _Layers:
    nets: dict[str, NetFiles]
    dictionary: Path
    folders: list[Path]
    defaults: dict[str, Any]

    def overlay(self, folder: Path) -> None:
        """`folder`'s roles, dictionary and defaults take precedence over those so far."""
        folder = Path(folder).resolve()
        manifest = verified(folder)
        self.nets.update(_nets_of(folder, manifest))
        if manifest.meta.get("dictionary", {}).get("file"):
            self.dictionary = folder / manifest.meta["dictionary"]["file"]
        elif "rec" in manifest.meta["nets"]:
            raise ModelVerificationError(folder, ["a rec net needs its 'dictionary' in the manifest"])
        self.defaults.update(manifest.meta.get("defaults", {}))
        self.folders.append(folder)


def load_model_set(user_dir: Path | None = None, model: str | None = None) -> ModelSet:
    """Verify the base folder, the chosen shipped model's folder (and `user_dir`), and pick each
    role's files; the model's roles override the base's, and a user folder's override both."""
    name = resolve_model(model)
    base_dir = default_model_dir().resolve()
    base = verified(base_dir)
    layers = _Layers(_nets_of(base_dir, base), base_dir / base.meta["dictionary"]["file"],
                     [base_dir], dict(base.meta.get("defaults", {})))
    if BUNDLED_MODELS[name]:
        layers.overlay(bundled_model_dir(name))
    if user_dir is not None:
        layers.overlay(user_dir)
    nets = layers.nets
    return ModelSet(nets["det"], nets["rec"], nets["cls"], layers.dictionary, tuple(layers.folders),
                    name, layers.defaults)
