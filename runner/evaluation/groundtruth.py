"""Finding the ground-truth text for an input page.

Conventions (those of the evaluation kit, and of most OCR training sets):
- a single-page input `name.png` goes with `name.gt.txt` (also accepted: `name.png.gt.txt`);
- page N of a multi-page input `doc.pdf` goes with `doc.pNN.gt.txt` (any zero padding: p1, p01, p001);
- a multi-page input with only `doc.gt.txt` has one transcription for the whole document.
GT files are looked for in GTDIR mirroring the input's place under its input folder, then
directly in GTDIR, then beside the input file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable
from pathlib import Path, PurePosixPath

GT_SUFFIX = ".gt.txt"


@dataclass(frozen=True)
class GroundTruthFiles:
    pages: dict[int, Path]  # 1-based page number -> GT file
    document: Path | None  # one transcription for the whole document


def search_folders(input_path: Path, relname: str, gt_dir: Path | None) -> list[Path]:
    folders: list[Path] = []
    if gt_dir is not None:
        parent = PurePosixPath(relname).parent
        if str(parent) not in ("", "."):
            folders.append(gt_dir / Path(*parent.parts))
        folders.append(gt_dir)
    folders.append(input_path.parent)
    unique: list[Path] = []
    for folder in folders:
        if folder not in unique:
            unique.append(folder)
    return unique


class GroundTruthFinder:
    """Looks GT files up for many inputs, listing each folder once (a folder of 10 000 scans
    must not be listed 10 000 times)."""

    def __init__(self, gt_dir: Path | None) -> None:
        self.gt_dir = gt_dir
        self._listings: dict[Path, frozenset[str]] = {}

    def find(self, input_path: Path, relname: str, page_count: int) -> GroundTruthFiles:
        return find_ground_truth(input_path, relname, page_count, self.gt_dir, self._listing)

    def _listing(self, folder: Path) -> frozenset[str]:
        if folder not in self._listings:
            self._listings[folder] = list_gt_files(folder)
        return self._listings[folder]


def find_ground_truth(input_path: Path, relname: str, page_count: int, gt_dir: Path | None,
                      listing_of: Callable[[Path], frozenset[str]] | None = None) -> GroundTruthFiles:
    """The GT files for every page of one input; the first folder that has any wins."""
    name = PurePosixPath(relname).name
    bases = _base_names(name)
    for folder in search_folders(input_path, relname, gt_dir):
        listing = (listing_of or list_gt_files)(folder)
        if not listing:
            continue
        pages = _page_files(folder, listing, bases, page_count)
        whole = next((folder / f"{b}{GT_SUFFIX}" for b in bases if f"{b}{GT_SUFFIX}" in listing), None)
        if page_count == 1 and whole is not None:
            pages.setdefault(1, whole)
            whole = None
        if pages or whole is not None:
            return GroundTruthFiles(pages=pages, document=whole)
    return GroundTruthFiles(pages={}, document=None)


def read_ground_truth(path: Path) -> str:
    """GT text as written; a UTF-8 BOM is dropped, line ends are left to normalisation."""
    return path.read_text(encoding="utf-8-sig")


def _base_names(name: str) -> list[str]:
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return [stem, name] if stem != name else [name]


def _page_files(folder: Path, listing: frozenset[str], bases: list[str],
                page_count: int) -> dict[int, Path]:
    pages: dict[int, Path] = {}
    for base in bases:
        pattern = re.compile(re.escape(base) + r"\.p(\d{1,6})" + re.escape(GT_SUFFIX))
        for entry in sorted(listing):
            match = pattern.fullmatch(entry)
            if match:
                number = int(match.group(1))
                if 1 <= number <= page_count:
                    pages.setdefault(number, folder / entry)
    return pages


def list_gt_files(folder: Path) -> frozenset[str]:
    try:
        return frozenset(p.name for p in folder.iterdir() if p.name.endswith(GT_SUFFIX))
    except OSError:
        return frozenset()
