"""Turn command-line inputs (files, folders, globs, '-', @lists) into a list of input files.

Each input file keeps the path it is read from and a *relative name* used for its outputs.
The relative name comes only from the input tree (never from a symlink's target), so an
output path can be made safe from it (see outputs/paths.py).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, TextIO

PDF_SUFFIXES = {".pdf"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp", ".gif", ".jp2", ".pbm",
                  ".pgm", ".ppm"}
SUPPORTED_SUFFIXES = PDF_SUFFIXES | IMAGE_SUFFIXES
GLOB_CHARS = set("*?[")


class InputError(ValueError):
    """An input argument names nothing usable (a usage error, exit code 2)."""


@dataclass(frozen=True)
class InputFile:
    path: Path  # where to read the bytes (absolute)
    relname: str  # name relative to its input root, '/'-separated; used for output names
    explicit: bool = False  # named directly on the command line (not found by walking a folder)

    def __post_init__(self) -> None:
        object.__setattr__(self, "relname", printable_name(self.relname))


def printable_name(name: str) -> str:
    """A file name that is not valid UTF-8 keeps its undecodable bytes visible as \\xNN escapes."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass(frozen=True)
class ExpandOptions:
    recursive: bool = True
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    hidden: bool = False
    skip_dirs: tuple[Path, ...] = ()  # e.g. the output folder when it lies inside an input folder


def expand_inputs(args: Iterable[str], options: ExpandOptions = ExpandOptions(),
                  stdin: TextIO | None = None) -> list[InputFile]:
    """Expand every argument; keep first occurrence of each path; order is stable (sorted per folder)."""
    found: list[InputFile] = []
    seen: set[Path] = set()
    for arg in _arguments(args, stdin):
        for item in _expand_one(arg, options):
            key = item.path
            if key not in seen:
                seen.add(key)
                found.append(item)
    return _distinct_names(found)


def _distinct_names(found: list[InputFile]) -> list[InputFile]:
    """Two inputs with one relative name (x.pdf from two folders) get longer names from their paths."""
    groups: dict[str, list[int]] = {}
    for index, item in enumerate(found):
        groups.setdefault(item.relname, []).append(index)
    result = list(found)
    taken = set(groups)
    for relname, indexes in groups.items():
        if len(indexes) < 2:
            continue
        depth = relname.count("/") + 2
        while True:
            names = ["/".join(found[i].path.parts[-depth:]) for i in indexes]
            longest = all(depth >= len(found[i].path.parts) for i in indexes)
            if len(set(names)) == len(names) and (longest or not (set(names) & (taken - {relname}))):
                break
            if longest:
                names = [f"{name}~{n}" for n, name in enumerate(names, 1)]
                break
            depth += 1
        for i, name in zip(indexes, names):
            result[i] = InputFile(found[i].path, name.lstrip("/"), found[i].explicit)
            taken.add(name)
    return result


def _arguments(args: Iterable[str], stdin: TextIO | None) -> Iterable[str]:
    for arg in args:
        if arg == "-":
            yield from _list_lines((stdin or sys.stdin).read().splitlines(), "standard input")
        elif arg.startswith("@") and len(arg) > 1:
            list_path = Path(arg[1:])
            try:
                text = list_path.read_text(encoding="utf-8", errors="surrogateescape")
            except OSError as exc:
                raise InputError(f"cannot read input list {list_path}: {exc.strerror or exc}") from None
            yield from _list_lines(text.splitlines(), str(list_path))
        else:
            yield arg


def _list_lines(lines: list[str], origin: str) -> Iterable[str]:
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            yield line


def _expand_one(arg: str, options: ExpandOptions) -> list[InputFile]:
    path = Path(os.path.expanduser(arg))  # "~nosuchuser" stays as written, as in a shell (Path.expanduser raises)
    if path.is_dir():
        return _walk_folder(path, options)
    if path.is_file() or path.is_symlink() and path.exists():
        return [InputFile(path.absolute(), path.name, explicit=True)]
    if GLOB_CHARS & set(arg):
        matches = sorted(glob.glob(os.path.expanduser(arg), recursive=True))
        files: list[InputFile] = []
        for match in matches:
            files.extend(_expand_one(match, options) if Path(match).is_dir()
                         else [InputFile(Path(match).absolute(), Path(match).name, explicit=True)])
        if files:
            return files
        raise InputError(f"no files match {arg!r}")
    if path.is_symlink():
        raise InputError(f"{arg}: broken symbolic link")
    raise InputError(f"{arg}: no such file or folder")


def _walk_folder(root: Path, options: ExpandOptions) -> list[InputFile]:
    root_abs = root.absolute()
    skip = {_real(p) for p in options.skip_dirs}
    visited: set[tuple[int, int]] = set()
    found: list[InputFile] = []

    def visit(folder: Path, rel_parts: tuple[str, ...]) -> None:
        try:
            st = folder.stat()
        except OSError:
            return
        if (st.st_dev, st.st_ino) in visited or _real(folder) in skip:
            return  # symlink loop, a folder reached twice, or the output folder
        visited.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if not options.hidden and entry.name.startswith("."):
                continue
            rel = (*rel_parts, entry.name)
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
                is_file = entry.is_file(follow_symlinks=True)
            except OSError:
                continue
            if is_dir:
                if options.recursive:
                    visit(Path(entry.path), rel)
            elif is_file and _wanted("/".join(rel), entry.name, options):
                found.append(InputFile(root_abs / Path(*rel), "/".join(rel)))

    visit(root_abs, ())
    return found


def _wanted(relname: str, name: str, options: ExpandOptions) -> bool:
    if Path(name).suffix.lower() not in SUPPORTED_SUFFIXES:
        return False
    if options.include and not any(_match(relname, name, pat) for pat in options.include):
        return False
    return not any(_match(relname, name, pat) for pat in options.exclude)


def _match(relname: str, name: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(relname, pattern) or fnmatch.fnmatchcase(name, pattern)


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()
