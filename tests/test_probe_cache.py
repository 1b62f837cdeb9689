"""The recogniser's shape probe remembered on disk (model_cache/ppocr/probe_cache.py)."""

from model_cache.ppocr.assets import load_model_set
from model_cache.ppocr.batch_graph import Shapes
from model_cache.ppocr.batch_rec import PROBE_WIDTHS, WidthMap
from model_cache.ppocr.probe_cache import cached_probe


def counting_probe(calls: list):
    def probe():
        calls.append(1)
        return Shapes({"a": (1, 8, 96), "b": (3, 48, 64)}), {"a": WidthMap((8, 8, 8, 8, 9, 9, 9, 9), 1, 2)}
    return probe


def test_second_probe_comes_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGERUNNER_CACHE", str(tmp_path))
    rec, calls = load_model_set().rec, []
    first = cached_probe(rec, ["a"], PROBE_WIDTHS, counting_probe(calls))
    second = cached_probe(rec, ["a"], PROBE_WIDTHS, counting_probe(calls))
    assert calls == [1] and first == second
    cached_probe(rec, ["a", "c"], PROBE_WIDTHS, counting_probe(calls))  # other blobs: another key
    assert len(calls) == 2 and len(list(tmp_path.glob("rec-probe-*.json"))) == 2


def test_broken_or_disabled_cache_probes_again(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGERUNNER_CACHE", str(tmp_path))
    rec, calls = load_model_set().rec, []
    cached_probe(rec, ["a"], PROBE_WIDTHS, counting_probe(calls))
    (path,) = tmp_path.glob("rec-probe-*.json")
    path.write_text("{not json")
    assert cached_probe(rec, ["a"], PROBE_WIDTHS, counting_probe(calls))[1]["a"].per_align == 1
    assert len(calls) == 2
    monkeypatch.setenv("PAGERUNNER_CACHE", "off")
    cached_probe(rec, ["a"], PROBE_WIDTHS, counting_probe(calls))
    assert len(calls) == 3


def test_unwritable_cache_still_probes(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("PAGERUNNER_CACHE", str(blocker / "sub"))  # cannot be made a folder
    calls: list = []
    shapes, _ = cached_probe(load_model_set().rec, ["a"], PROBE_WIDTHS, counting_probe(calls))
    assert calls == [1] and shapes.of["a"] == (1, 8, 96)
