"""Finding `<name>.gt.txt` / `<name>.pNN.gt.txt` beside the inputs or in a mirrored GT folder."""

from __future__ import annotations

from pathlib import Path

from runner.evaluation.groundtruth import GroundTruthFinder, find_ground_truth, read_ground_truth


def _touch(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_beside_the_image(tmp_path):
    image = _touch(tmp_path / "scan.png")
    gt = _touch(tmp_path / "scan.gt.txt")
    found = find_ground_truth(image, "scan.png", 1, None)
    assert found.pages == {1: gt} and found.document is None


def test_full_name_form_is_accepted(tmp_path):
    image = _touch(tmp_path / "scan.tif")
    gt = _touch(tmp_path / "scan.tif.gt.txt")
    assert find_ground_truth(image, "scan.tif", 1, None).pages == {1: gt}


def test_mirrored_folder_wins_over_flat_and_beside(tmp_path):
    image = _touch(tmp_path / "in" / "batch1" / "a.png")
    _touch(tmp_path / "in" / "batch1" / "a.gt.txt", "beside")
    _touch(tmp_path / "gt" / "a.gt.txt", "flat")
    mirrored = _touch(tmp_path / "gt" / "batch1" / "a.gt.txt", "mirrored")
    found = find_ground_truth(image, "batch1/a.png", 1, tmp_path / "gt")
    assert found.pages == {1: mirrored}


def test_flat_gt_folder_then_beside(tmp_path):
    image = _touch(tmp_path / "in" / "sub" / "a.png")
    flat = _touch(tmp_path / "gt" / "a.gt.txt")
    assert find_ground_truth(image, "sub/a.png", 1, tmp_path / "gt").pages == {1: flat}
    other = _touch(tmp_path / "in" / "sub" / "b.png")
    beside = _touch(tmp_path / "in" / "sub" / "b.gt.txt")
    assert find_ground_truth(other, "sub/b.png", 1, tmp_path / "gt").pages == {1: beside}


def test_pdf_pages_with_any_padding(tmp_path):
    pdf = _touch(tmp_path / "doc.v2.pdf")
    p1 = _touch(tmp_path / "doc.v2.p01.gt.txt")
    p3 = _touch(tmp_path / "doc.v2.p3.gt.txt")
    p10 = _touch(tmp_path / "doc.v2.p010.gt.txt")
    _touch(tmp_path / "doc.v2.p11.gt.txt")  # beyond the last page: ignored
    _touch(tmp_path / "doc.p02.gt.txt")  # another document's stem
    found = find_ground_truth(pdf, "doc.v2.pdf", 10, None)
    assert found.pages == {1: p1, 3: p3, 10: p10}
    assert found.document is None


def test_document_level_transcription(tmp_path):
    pdf = _touch(tmp_path / "letter.pdf")
    whole = _touch(tmp_path / "letter.gt.txt")
    found = find_ground_truth(pdf, "letter.pdf", 3, None)
    assert found.pages == {} and found.document == whole
    assert find_ground_truth(pdf, "letter.pdf", 1, None).pages == {1: whole}


def test_nothing_found(tmp_path):
    image = _touch(tmp_path / "a.png")
    found = find_ground_truth(image, "a.png", 1, tmp_path / "missing")
    assert found.pages == {} and found.document is None


def test_finder_lists_each_folder_once(tmp_path, monkeypatch):
    import runner.evaluation.groundtruth as gt_module

    for name in ("a", "b", "c"):
        _touch(tmp_path / f"{name}.png")
        _touch(tmp_path / f"{name}.gt.txt")
    calls: list[Path] = []
    real = gt_module.list_gt_files
    monkeypatch.setattr(gt_module, "list_gt_files", lambda folder: calls.append(folder) or real(folder))
    finder = GroundTruthFinder(None)
    for name in ("a", "b", "c"):
        assert finder.find(tmp_path / f"{name}.png", f"{name}.png", 1).pages
    assert calls == [tmp_path]


def test_bom_is_dropped(tmp_path):
    path = tmp_path / "a.gt.txt"
    path.write_bytes("\ufeffhello\r\n".encode("utf-8"))
    assert read_ground_truth(path) == "hello\n"
