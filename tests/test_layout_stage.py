"""The layout stage's contract: typed lines in, ordered typed blocks out (model_cache/layout)."""

from __future__ import annotations

import pytest

from model_cache.layout import LayoutLine, from_line, layout_page
from outputs.model import Line

W, H = 1654, 2339  # an A4 page at 200 dpi


def line(text: str, x0: float, y0: float, x1: float, h: float = 30, **notes) -> LayoutLine:
    return LayoutLine(text, 0.99, [[x0, y0], [x1, y0], [x1, y0 + h], [x0, y0 + h]], **notes)


def order(blocks) -> list[str]:
    return [ln.text for b in blocks for ln in b.lines]


@pytest.mark.parametrize("mark", ["•", "▶", "■", "◦", "-"])
def test_every_bullet_starts_a_list_item(mark):
    """The bullet sets had drifted: three "•" lines made 3 blocks, the same lines with "▶" made 1."""
    lines = [from_line(Line(f"{mark} item {k}", 0.99, line("", 100, 200 + 40 * k, 700).box))
             for k in range(3)]
    blocks = layout_page(lines, W, H)
    assert [(b.kind, b.text) for b in blocks] == [("list", f"{mark} item {k}") for k in range(3)]


def test_a_bullet_found_in_the_pixels_is_the_same_as_one_read():
    read = [from_line(Line(f"▶ item {k}", 0.99, line("", 100, 200 + 40 * k, 700).box)) for k in range(3)]
    found = [line(f"item {k}", 100, 200 + 40 * k, 700, bullet="▶") for k in range(3)]
    assert [b.text for b in layout_page(read, W, H)] == [b.text for b in layout_page(found, W, H)]
