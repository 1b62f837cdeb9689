"""Model folders carry a manifest.json listing every file with its sha256.

An engine verifies its folder once per process before first use and refuses altered,
truncated or missing files; `pagerunner models verify` runs the same check.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST_NAME = "manifest.json"


class ModelVerificationError(Exception):
    def __init__(self, folder: Path, problems: list[str]):
        self.folder = folder
        self.problems = problems
        listed = "\n  ".join(problems)
        super().__init__(f"model folder {folder} failed verification:\n  {listed}")


@dataclass
class Manifest:
    name: str
    engine: str
    files: dict[str, str]  # path relative to the folder -> sha256
    meta: dict[str, Any] = field(default_factory=dict)  # engine-specific: config, sources, commands

    def to_json(self) -> str:
        data = {"name": self.name, "engine": self.engine, "files": dict(sorted(self.files.items()))}
        data.update(self.meta)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def load(cls, folder: Path) -> "Manifest":
        path = folder / MANIFEST_NAME
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ModelVerificationError(folder, [f"{MANIFEST_NAME} is missing"]) from None
        except (OSError, ValueError) as exc:
            raise ModelVerificationError(folder, [f"{MANIFEST_NAME} is unreadable: {exc}"]) from None
        if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
            raise ModelVerificationError(folder, [f"{MANIFEST_NAME} has no 'files' table"])
        meta = {k: v for k, v in data.items() if k not in ("name", "engine", "files")}
        return cls(str(data.get("name", folder.name)), str(data.get("engine", "")),
                   dict(data["files"]), meta)


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def build_manifest(folder: Path, name: str, engine: str, meta: dict[str, Any] | None = None,
                   exclude: tuple[str, ...] = (MANIFEST_NAME,)) -> Manifest:
    """List every file under `folder`, except those of a subfolder that is a model of its own
    (has its own manifest: e.g. a second shipped model inside the first one's folder)."""
    nested = [p.parent for p in folder.rglob(MANIFEST_NAME) if p.parent != folder]
    files = {p.relative_to(folder).as_posix(): sha256_file(p)
             for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in exclude
             and not any(n in p.parents for n in nested)}
    return Manifest(name, engine, files, dict(meta or {}))


def verify_folder(folder: Path, engine: str | None = None) -> Manifest:
    """Check every listed file's sha256; raise ModelVerificationError naming each problem."""
    manifest = Manifest.load(folder)
    problems: list[str] = []
    if engine and manifest.engine and manifest.engine != engine:
        problems.append(f"manifest is for engine '{manifest.engine}', not '{engine}'")
    for rel, expected in manifest.files.items():
        path = folder / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            problems.append(f"{rel}: path escapes the model folder")
        elif not path.is_file():
            problems.append(f"{rel}: missing")
        elif (actual := sha256_file(path)) != expected:
            problems.append(f"{rel}: sha256 {actual[:12]}... does not match the manifest's {expected[:12]}...")
    if problems:
        raise ModelVerificationError(folder, problems)
    return manifest
