"""The layout stage shared by every engine: typed lines in, ordered typed blocks out."""

from model_cache.layout.geometry import LayoutParams
from model_cache.layout.kinds import KINDS
from model_cache.layout.lines import LEADER_TEXT, OCR, TEXT_LAYER, LayoutLine, from_line, split_bullet
from model_cache.layout.stage import layout_page, reads_right

__all__ = ["KINDS", "LEADER_TEXT", "OCR", "TEXT_LAYER", "LayoutLine", "LayoutParams", "from_line",
           "layout_page", "reads_right", "split_bullet"]
