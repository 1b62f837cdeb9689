"""A table block's grid: its rows' cells assigned to columns, where the columns are clear."""

from __future__ import annotations

from model_cache.layout.geometry import Item


def column_bands(rows: list[list[Item]]) -> list[tuple[float, float]]:
    """x-intervals that cells of different rows share: overlapping cell spans merged."""
    spans = sorted((it.x0, it.x1) for row in rows for it in row)
    bands: list[list[float]] = []
    for x0, x1 in spans:
        if bands and x0 < bands[-1][1]:
            bands[-1][1] = max(bands[-1][1], x1)
        else:
            bands.append([x0, x1])
    return [(a, b) for a, b in bands]


def table_grid(rows: list[list[Item]], max_columns: int = 12) -> list[list[str]] | None:
    """Cell texts row by row, one column per band, or None where the grid is not clear: a cell
    spanning two bands merges them, so a table whose cells do not line up ends with one column
    (or a row with two cells in one band), and then it is left as rows of text."""
    bands = column_bands(rows)
    if not 2 <= len(bands) <= max_columns:
        return None
    grid = []
    for row in rows:
        cells = [""] * len(bands)
        for it in row:
            col = next(k for k, (a, b) in enumerate(bands) if a <= it.x0 < b or it.x0 == a)
            if cells[col]:
                return None
            cells[col] = it.line.output_text
        grid.append(cells)
    filled = sum(1 for cells in grid if sum(1 for c in cells if c) >= 2)
    return grid if len(grid) >= 2 and filled >= 0.6 * len(grid) else None
