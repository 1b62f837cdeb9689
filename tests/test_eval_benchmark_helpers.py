"""The benchmark harness's own logic (not timings): seeded simulated scans are reproducible,
docs/benchmarks.md sections are replaced without touching their neighbours, process-tree memory
is measured."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from eval_sets import simulate_scan  # noqa: E402
from procmem import measure  # noqa: E402
from report_md import markdown_table, replace_section  # noqa: E402


def _page() -> Image.Image:
    image = Image.new("RGB", (400, 200), "white")
    ImageDraw.Draw(image).text((20, 80), "simulated scanning test", fill="black")
    return image


def test_simulated_scan_is_deterministic_and_degrades():
    page = _page()
    first, second = simulate_scan(page, 7), simulate_scan(page, 7)
    assert np.array_equal(np.asarray(first), np.asarray(second))
    other = simulate_scan(page, 8)
    assert not np.array_equal(np.asarray(first), np.asarray(other))
    clean = np.asarray(page.convert("L"), dtype=np.float32)
    noisy = np.asarray(first.convert("L"), dtype=np.float32)
    assert first.size == page.size
    assert noisy[clean == 255].std() > 3  # paper is no longer flat white


def test_replace_section_keeps_other_sections(tmp_path):
    doc = tmp_path / "benchmarks.md"
    replace_section("accuracy", "old accuracy", doc)
    replace_section("lead", "figures merged by hand", doc)
    replace_section("accuracy", "new accuracy\n", doc)
    text = doc.read_text(encoding="utf-8")
    assert "new accuracy" in text and "old accuracy" not in text
    assert "<!-- BEGIN lead -->\nfigures merged by hand\n<!-- END lead -->" in text
    assert text.index("BEGIN accuracy") < text.index("BEGIN lead")
    assert text.count("<!-- BEGIN accuracy -->") == 1


def test_markdown_table():
    table = markdown_table(["a", "b"], [["x", "1"]])
    assert table.splitlines() == ["| a | b |", "| --- | ---: |", "| x | 1 |"]


def test_measure_sees_a_child_allocating_memory():
    code = "import time; b = bytearray(120 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.6)"
    result = measure([sys.executable, "-c", code], interval=0.05)
    assert result.returncode == 0
    assert result.process_peak_mib > 100 and result.tree_peak_mib > 100
