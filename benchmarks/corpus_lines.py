"""pagerunner's recognised lines before layout, kept per corpus page, and replayed through the layout.

Recording: while benchmarks/accuracy.py --corpus runs pagerunner, the engine's `_orient` and
`_recognize_pages` steps are watched and their result (page rotation, recognised lines with boxes and
confidences) is written to <corpus>/lines/<recognition digest>/<set>/<page>.json.

Replay (benchmarks/corpus_relayout.py): the engine's detector is skipped, `_orient` returns the
recorded rotation and `_recognize_pages` the recorded lines, so `engine.ocr(image)` runs only what comes
after recognition (bullets, leaders, layout, reading order) on the page's real pixels: the layout
code of the checkout it runs from, at a few milliseconds a page instead of seconds.
The recording is keyed by a digest of the files that produce the lines (detector, recogniser,
orientation, spaces, runtime, models), so a change there is noticed and the lines recorded again.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[1]
# The files whose code decides the lines the layout stage is given.
RECOGNITION_FILES = ("detection.py", "recognition.py", "orientation.py", "spacing.py", "runtime.py",
                     "assets.py", "convert.py", "optimize.py")


def recognition_digest(engine: str = "ppocr") -> str:
    folder = REPO / "model_cache" / engine
    digest = hashlib.sha256()
    for name in RECOGNITION_FILES:
        path = folder / name
        if path.exists():
            digest.update(name.encode())
            digest.update(path.read_bytes())
    engine_file = folder / "engine.py"
    if engine_file.exists():  # its _read / _recognize_pages / _orient decide lines too; layout calls do not
        digest.update(_recognition_part(engine_file.read_text(encoding="utf-8")).encode())
    for path in sorted((folder / "models").rglob("*")) if (folder / "models").is_dir() else []:
        if path.is_file() and path.suffix in (".json", ".param", ".txt"):
            digest.update(path.relative_to(folder).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


def _recognition_part(source: str) -> str:
    """engine.py from `def _orient` on (orientation, recognition, reading a crop), not `ocr`."""
    start = source.find("    def _orient")
    return source[start:] if start >= 0 else source


def lines_folder(root: Path) -> Path:
    return root / recognition_digest()


def replay_folder(root: Path, digest: str | None = None) -> tuple[Path, str]:
    """The recorded lines to replay: those of `digest`, else of this checkout's recognition code,
    else (with a warning) the most recent recording."""
    wanted = root / (digest or recognition_digest())
    if wanted.is_dir() or digest:
        return wanted, ""
    recorded = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime) \
        if root.is_dir() else []
    if not recorded:
        return wanted, ""
    return recorded[-1], (f"no lines recorded for this checkout's recognition code "
                          f"({recognition_digest()}); replaying those of {recorded[-1].name}")


def record_path(root: Path, set_name: str, ident: str) -> Path:
    return lines_folder(root) / set_name / f"{ident}.json"


def attach_line_recorder(tool, root: Path) -> None:
    """Make a PagerunnerTool keep every page's pre-layout lines (tool.ocr_page is used by
    corpus_accuracy.recognise_with when present)."""
    engine = tool.engine
    seen: dict[str, object] = {}
    orient, recognize = engine._orient, engine._recognize_pages

    def watched_orient(rgb, boxes, timings):
        rgb, boxes, rotation = orient(rgb, boxes, timings)
        seen["rotation"] = rotation
        seen["shape"] = list(rgb.shape[:2])
        return rgb, boxes, rotation

    def watched_recognize(pages):  # one page per engine.ocr call
        lines = recognize(pages)
        seen["lines"] = [[line.text, float(line.conf), [[float(x), float(y)] for x, y in line.box]]
                         for line in lines[0]]
        return lines

    engine._orient, engine._recognize_pages = watched_orient, watched_recognize

    def ocr_page(image, page, copy: str) -> str:
        seen.clear()
        text = tool.engine.ocr(image).text
        if "lines" in seen:
            path = record_path(root, f"corpus-{page.half}-{copy}", page.ident)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(seen, ensure_ascii=False), encoding="utf-8")
        return text

    tool.ocr_page = ocr_page


def load_record(folder: Path, set_name: str, ident: str) -> dict | None:
    """A page's recording in `folder` (one digest's folder, see replay_folder)."""
    path = folder / set_name / f"{ident}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


@contextmanager
def replaying(engine, record_of: dict) -> Iterator[None]:
    """Within the block, engine.ocr(image) skips detection and recognition and lays out the
    lines in `record_of['record']` (set before each call)."""
    import model_cache.ppocr.engine as engine_module
    from model_cache.ppocr.orientation import rotate_image
    from outputs.model import Line

    detect = engine_module.detect
    orient, recognize = engine._orient, engine._recognize_pages

    def replay_orient(rgb, boxes, timings):
        rotation = record_of["record"]["rotation"]
        return (rotate_image(rgb, rotation) if rotation else rgb), [], rotation

    def replay_recognize(pages):
        return [[Line(text, conf, box) for text, conf, box in record_of["record"]["lines"]] for _ in pages]

    engine_module.detect = lambda *args, **kwargs: []
    engine._orient, engine._recognize_pages = replay_orient, replay_recognize
    try:
        yield
    finally:
        engine_module.detect = detect
        engine._orient, engine._recognize_pages = orient, recognize
