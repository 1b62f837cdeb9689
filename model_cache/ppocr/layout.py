"""Reading order: text lines -> columns -> paragraph-sized blocks.

1. Cut the page into horizontal strips wherever no line crosses a y position.
2. Each strip gets its free vertical bands (gutters); consecutive strips whose gutters
   overlap are merged, so a two-column body made of many aligned rows becomes one region
   while a full-width title or footer stays its own strip.
3. A region with a gutter is read left part first, then right part (recursively), unless
   its two sides are row-aligned with short items on one side (tables of contents, table
   rows, label/value lists): those are read row by row.
4. A region without a gutter is read row by row; rows are split into blocks at larger
   vertical gaps, size changes, indented first lines and lines that end short.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from model_cache.ppocr.leaders import LEADER_TEXT
from outputs.model import Block, Line


@dataclass(frozen=True)
class LayoutParams:
    gutter: float = 0.6  # minimum column gutter, in median line heights (0.25 in at 10 pt is ~1.3)
    row_overlap: float = 0.5  # y-overlap (share of the smaller height) for two boxes to share a row
    aligned_share: float = 0.7  # rows-not-columns: share of short-side items with a partner
    short_item: float = 6.0  # rows-not-columns: median width of the short side, in line heights
    para_gap: float = 0.8  # a vertical gap above this (line heights) starts a new block
    size_change: float = 1.3  # a height ratio above this starts a new block
    indent: float = 1.0  # first-line indent, in line heights
    short_line: float = 3.0  # slack (quarter line heights) on top of the next line's first word
    margin_band: float = 0.07  # header/footer: single line within this share of the page height
    join_gap: float = 2.5  # boxes of one row closer than this (line heights) are one line
    note_width: float = 0.4  # margin notes: a side column this narrow relative to the body...
    note_share: float = 0.6  # ...with at most this many lines per body line


@dataclass
class Item:
    line: Line
    x0: float
    y0: float
    x1: float
    y1: float
    h: float

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


@dataclass
class Region:
    items: list[Item]
    gutters: list[tuple[float, float]] = field(default_factory=list)


def page_skew(lines: list[Line]) -> float:
    """Median baseline angle (radians) of the longer lines, weighted by length."""
    angles, weights = [], []
    for line in lines:
        pts = np.asarray(line.box, dtype=np.float64)
        dx, dy = pts[1] - pts[0]
        height = np.linalg.norm(pts[3] - pts[0])
        if dx > 4 * max(height, 1.0):
            angles.append(np.arctan2(dy, dx))
            weights.append(dx)
    if not angles:
        return 0.0
    order = np.argsort(angles)
    cum = np.cumsum(np.asarray(weights)[order])
    return float(np.asarray(angles)[order][np.searchsorted(cum, cum[-1] / 2)])


def make_item(line: Line, skew: float = 0.0) -> Item:
    """Geometry of a line in the page's deskewed frame (the line keeps its real box), so
    rows and columns of a slightly rotated scan line up as on the original."""
    pts = np.asarray(line.box, dtype=np.float64)
    if skew:
        c, s = np.cos(-skew), np.sin(-skew)
        pts = pts @ np.array([[c, s], [-s, c]])
    h = float((np.linalg.norm(pts[3] - pts[0]) + np.linalg.norm(pts[2] - pts[1])) / 2)
    x0, y0 = pts.min(0)
    x1, y1 = pts.max(0)
    return Item(line, float(x0), float(y0), float(x1), float(y1), max(h, 1.0))


def median_height(items: list[Item]) -> float:
    return float(np.median([it.h for it in items])) if items else 1.0


def horizontal_strips(items: list[Item]) -> list[list[Item]]:
    """Split at y positions no box crosses (boxes overlapping in y stay together)."""
    strips: list[list[Item]] = []
    bottom = -np.inf
    for it in sorted(items, key=lambda i: i.y0):
        # a small tolerance: skewed neighbours touching by a pixel or two are still separate rows
        if strips and it.y0 < bottom - 0.15 * it.h:
            strips[-1].append(it)
            bottom = max(bottom, it.y1)
        else:
            strips.append([it])
            bottom = it.y1
    return strips


def free_bands(items: list[Item], lo: float, hi: float, min_width: float) -> list[tuple[float, float]]:
    """x-intervals of [lo, hi] that no box covers, at least min_width wide (edges included)."""
    bands, reach = [], lo
    for x0, x1 in sorted((it.x0, it.x1) for it in items):
        if x0 - reach >= min_width:
            bands.append((reach, x0))
        reach = max(reach, x1)
    if hi - reach >= min_width:
        bands.append((reach, hi))
    return bands


def intersect_bands(a: list[tuple[float, float]], b: list[tuple[float, float]],
                    min_width: float) -> list[tuple[float, float]]:
    out = []
    for a0, a1 in a:
        for b0, b1 in b:
            lo, hi = max(a0, b0), min(a1, b1)
            if hi - lo >= min_width:
                out.append((lo, hi))
    return out


def interior(bands: list[tuple[float, float]], items: list[Item]) -> list[tuple[float, float]]:
    """The bands with boxes on both sides: column gutters, not margins."""
    return [(lo, hi) for lo, hi in bands
            if any(it.x1 <= lo for it in items) and any(it.x0 >= hi for it in items)]


def merged_regions(items: list[Item], gutter: float, h: float) -> list[Region]:
    """Strips joined while they keep a common gutter (or while neither has one). A strip with
    text on one side only joins a gutter region only if it follows closely: after a gap it
    is more likely a full-width section's heading than the rest of one column."""
    lo, hi = min(it.x0 for it in items), max(it.x1 for it in items)
    regions: list[Region] = []
    bands_of: list[list[tuple[float, float]]] = []
    for strip in horizontal_strips(items):
        bands = free_bands(strip, lo, hi, gutter)
        if regions:
            region = regions[-1]
            common = intersect_bands(bands_of[-1], bands, gutter)
            joined = region.items + strip
            had_gutter = bool(region.gutters) or bool(interior(bands, strip))
            gutters = interior(common, joined)
            one_sided = bool(region.gutters) and not interior(bands, strip)
            gap = min(it.y0 for it in strip) - max(it.y1 for it in region.items)
            if one_sided and gap > 0.8 * h:
                gutters = []
            if gutters or not had_gutter:
                region.items, region.gutters, bands_of[-1] = joined, gutters, common
                continue
        regions.append(Region(list(strip), interior(bands, strip)))
        bands_of.append(bands)
    return regions


def is_row_structured(left: list[Item], right: list[Item], params: LayoutParams) -> bool:
    """Do the two sides of a gutter pair up row by row with short items (TOC, table, form)?"""
    short, other = (left, right) if len(left) <= len(right) else (right, left)
    if not short:
        return True
    h = median_height(short + other)
    paired = sum(1 for it in short if any(_same_row(it, o, params) for o in other))
    narrow = min(np.median([it.x1 - it.x0 for it in side]) for side in (left, right))
    few_rows = max(len(left), len(right)) <= 3  # too few lines to tell columns from a table
    return paired >= params.aligned_share * len(short) and (narrow < params.short_item * h or few_rows)


def _same_row(a: Item, b: Item, params: LayoutParams) -> bool:
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return overlap >= params.row_overlap * min(a.y1 - a.y0, b.y1 - b.y0)


def ordered_blocks(items: list[Item], params: LayoutParams, h: float) -> list[Block]:
    """Blocks in reading order: regions top to bottom, columns left to right; a narrow,
    sparse side column (margin notes) is woven in after the body block each note sits by."""
    if not items:
        return []
    blocks: list[Block] = []
    for region in merged_regions(items, params.gutter * h, h):
        split = _column_split(region, params)
        if split is None:
            blocks.extend(leaf_blocks(region.items, params))
            continue
        left, right = split
        notes, body = _margin_notes(left, right, params)
        if notes is None:
            blocks.extend(ordered_blocks(left, params, h))
            blocks.extend(ordered_blocks(right, params, h))
        else:
            blocks.extend(_weave(ordered_blocks(body, params, h), _note_blocks(notes, params, h)))
    return blocks


def _extent(items: list[Item]) -> float:
    return max(it.x1 for it in items) - min(it.x0 for it in items)


def _margin_notes(left: list[Item], right: list[Item],
                  params: LayoutParams) -> tuple[list[Item] | None, list[Item]]:
    for notes, body in ((left, right), (right, left)):
        if (_extent(notes) < params.note_width * _extent(body)
                and len(notes) <= params.note_share * len(body)):
            return notes, body
    return None, left + right


def _note_blocks(notes: list[Item], params: LayoutParams, h: float) -> list[Block]:
    """Each vertically separate group of note lines is its own block."""
    groups: list[list[Item]] = []
    for it in sorted(notes, key=lambda i: i.y0):
        if groups and it.y0 - max(g.y1 for g in groups[-1]) <= params.para_gap * h:
            groups[-1].append(it)
        else:
            groups.append([it])
    return [Block(lines=[it.line for row in rows_of(g, params) for it in join_row(row, params)])
            for g in groups]


def _block_top(block: Block) -> float:
    return min(p[1] for line in block.lines for p in line.box)


def _block_bottom(block: Block) -> float:
    return max(p[1] for line in block.lines for p in line.box)


def _weave(body: list[Block], notes: list[Block]) -> list[Block]:
    """Put each note after the last body block that starts above the note's bottom (the
    paragraph the note stands beside)."""
    out: list[tuple[float, int, Block]] = []
    for k, block in enumerate(body):
        out.append((float(k), 0, block))
    for note in notes:
        bottom = _block_bottom(note)
        anchor = max((k for k, b in enumerate(body) if _block_top(b) < bottom), default=-1)
        out.append((anchor + 0.5, 1, note))
    return [block for _, _, block in sorted(out, key=lambda t: (t[0], t[1]))]


def _column_split(region: Region, params: LayoutParams) -> tuple[list[Item], list[Item]] | None:
    for lo, hi in region.gutters:  # leftmost gutter first; the right part recurses
        cut = (lo + hi) / 2
        left = [it for it in region.items if it.x1 <= cut]
        right = [it for it in region.items if it.x0 >= cut]
        if left and right and not is_row_structured(left, right, params):
            return left, right
    return None


def rows_of(items: list[Item], params: LayoutParams) -> list[list[Item]]:
    """Group items into rows against each row's first (reference) item, so one tall box
    (a merged table cell, a vertical label) cannot chain two rows together."""
    rows: list[list[Item]] = []
    for it in sorted(items, key=lambda i: i.cy):
        ref = rows[-1][0] if rows else None
        if ref is not None and _same_row(it, ref, params) and ref.y0 <= it.cy <= ref.y1:
            rows[-1].append(it)
        else:
            rows.append([it])
    return [sorted(r, key=lambda i: i.x0) for r in rows]


def _row_box(row: list[Item]) -> tuple[float, float, float, float, float]:
    return (min(i.x0 for i in row), min(i.y0 for i in row), max(i.x1 for i in row),
            max(i.y1 for i in row), float(np.median([i.h for i in row])))


def join_row(row: list[Item], params: LayoutParams) -> list[Item]:
    """Join boxes of one row that are one text line split by the detector (a small gap) or
    that a dot leader connects ("Title ... 29"); table cells further apart stay apart."""
    out = [row[0]]
    for it in row[1:]:
        prev = out[-1]
        unit = max(prev.h, it.h)
        leader = LEADER_TEXT in (prev.line.text, it.line.text)
        if leader or it.x0 - prev.x1 < params.join_gap * unit:
            out[-1] = _joined(prev, it)
        else:
            out.append(it)
    return out


def _joined(a: Item, b: Item) -> Item:
    la, lb = a.line, b.line
    words = [t for t in (la.text, lb.text)]
    weights = [0 if t == LEADER_TEXT else len(t) for t in words]
    confs = [la.conf, lb.conf]
    conf = sum(w * c for w, c in zip(weights, confs)) / sum(weights) if sum(weights) else min(confs)
    box = [list(la.box[0]), list(lb.box[1]), list(lb.box[2]), list(la.box[3])]
    line = Line(" ".join(words), conf, box)
    return Item(line, min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1),
                max(a.h, b.h))


def leaf_blocks(items: list[Item], params: LayoutParams) -> list[Block]:
    rows = [join_row(row, params) for row in rows_of(items, params)]
    left_edge = min(i.x0 for i in items)
    right_edge = max(i.x1 for i in items)
    blocks: list[list[list[Item]]] = []
    for k, row in enumerate(rows):
        if not blocks or _starts_block(rows, k, left_edge, right_edge, params):
            blocks.append([row])
        else:
            blocks[-1].append(row)
    return [_to_block(rows_in) for rows_in in blocks]


def _starts_block(rows: list[list[Item]], k: int, left_edge: float, right_edge: float,
                  params: LayoutParams) -> bool:
    px0, py0, px1, py1, ph = _row_box(rows[k - 1])
    x0, y0, x1, y1, h = _row_box(rows[k])
    unit = max(ph, h)
    if y0 - py1 > params.para_gap * unit:
        return True
    if max(ph, h) > params.size_change * min(ph, h):
        return True
    if (len(rows[k]) > 1) != (len(rows[k - 1]) > 1):  # table rows vs running text
        return True
    if right_edge - px1 > _first_word_width(rows[k]) + params.short_line * unit * 0.25:
        return True  # the next line's first word would have fitted: the paragraph ended
    if _is_bullet(rows[k][0].line.text):
        return True
    if _is_bullet(_block_start(rows, k, params).line.text):
        return False  # hanging indent of a list item
    indented = x0 - left_edge > params.indent * unit and px0 - left_edge <= params.indent * unit
    nxt = _row_box(rows[k + 1]) if k + 1 < len(rows) else None
    back_to_margin = nxt is not None and nxt[0] - left_edge <= params.indent * unit
    return indented and back_to_margin


BULLETS = "•●▪◦‣■□➢►✓-–*·"


def _is_bullet(text: str) -> bool:
    text = text.lstrip()
    return len(text) > 1 and text[0] in BULLETS and (text[1] == " " or text[0] not in "-–*·")


def _block_start(rows: list[list[Item]], k: int, params: LayoutParams) -> Item:
    """The first item of the block row k-1 belongs to (walk up while rows touch)."""
    j = k - 1
    while j > 0 and not _is_bullet(rows[j][0].line.text):
        above, here = _row_box(rows[j - 1]), _row_box(rows[j])
        if here[1] - above[3] > params.para_gap * max(above[4], here[4]):
            break
        j -= 1
    return rows[j][0]


def _first_word_width(row: list[Item]) -> float:
    """Estimated width of the first word of a row (CJK without spaces: two characters)."""
    first = row[0]
    text = first.line.text.strip()
    if not text:
        return 0.0
    char_w = (first.x1 - first.x0) / len(text)
    word = text.split(" ", 1)[0]
    n = len(word) if len(word) <= 20 and word.isascii() else 2
    return n * char_w


def _to_block(rows: list[list[Item]]) -> Block:
    lines = [it.line for row in rows for it in row]
    table = sum(1 for row in rows if len(row) > 1) >= 2
    return Block(lines=lines, kind="table" if table else "text")


def build_blocks(lines: list[Line], page_height: int, params: LayoutParams | None = None) -> list[Block]:
    """Group recognised lines into paragraph-sized blocks in reading order."""
    params = params or LayoutParams()
    kept = [line for line in lines if line.text.strip()]
    skew = page_skew(kept)
    items = [make_item(line, skew) for line in kept]
    if not items:
        return []
    h = median_height(items)
    blocks = ordered_blocks(items, params, h)
    _mark_margins(blocks, page_height, h, params)
    return blocks


def _mark_margins(blocks: list[Block], page_height: int, h: float, params: LayoutParams) -> None:
    """A lone single-line block, no taller than body text, in the top/bottom band of the page
    is a running head/foot (a big title up there is not)."""
    if len(blocks) < 3:
        return
    band = params.margin_band * page_height
    first, last = blocks[0], blocks[-1]
    if _lone_small(first, h) and max(p[1] for p in first.lines[0].box) < band:
        first.kind = "header"
    if _lone_small(last, h) and min(p[1] for p in last.lines[0].box) > page_height - band:
        last.kind = "footer"


def _lone_small(block: Block, h: float) -> bool:
    return len(block.lines) == 1 and make_item(block.lines[0]).h <= 1.15 * h
