"""A glyph-less TrueType font for invisible OCR text (as Tesseract's and OCRmyPDF's text layers use).

Two glyphs: .notdef and the glyph every character is drawn with: a plain box half an em wide
from the descent to the ascent (never seen: the text is drawn in render mode 3, but PDF readers
take a character's box from its glyph's outline, and drop characters with none); the
PDF maps each character's CID to that glyph and back to its Unicode text through a ToUnicode
CMap (outputs/pdf_font.py). Built with fontTools so the font file is a valid sfnt that PDF
readers and `qpdf --check` accept; nothing is ever drawn with it (text render mode 3).
"""

from __future__ import annotations

import io
from functools import lru_cache

from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen

UNITS_PER_EM = 1000
ADVANCE = 500  # every glyph is half an em wide; the writer scales words to their boxes
ASCENT = 800  # the em box from descent to ascent is the word box's height
DESCENT = -200
FONT_NAME = "GlyphLessFont"
FIXED_TIMESTAMP = 3_786_912_000  # 2024-01-01, in seconds since 1904 (the sfnt epoch)


def _box_glyph():
    pen = TTGlyphPen(None)
    pen.moveTo((0, DESCENT))
    pen.lineTo((0, ASCENT))
    pen.lineTo((ADVANCE, ASCENT))
    pen.lineTo((ADVANCE, DESCENT))
    pen.closePath()
    return pen.glyph()


@lru_cache(maxsize=1)
def glyphless_ttf() -> bytes:
    builder = FontBuilder(UNITS_PER_EM, isTTF=True)
    builder.setupGlyphOrder([".notdef", "blank"])
    builder.setupCharacterMap({})
    builder.setupGlyf({".notdef": TTGlyphPen(None).glyph(), "blank": _box_glyph()})
    builder.setupHorizontalMetrics({".notdef": (ADVANCE, 0), "blank": (ADVANCE, 0)})
    builder.setupHorizontalHeader(ascent=ASCENT, descent=DESCENT)
    builder.setupNameTable({"familyName": FONT_NAME, "styleName": "Regular"})
    builder.setupOS2(sTypoAscender=ASCENT, sTypoDescender=DESCENT, usWinAscent=ASCENT,
                     usWinDescent=-DESCENT)
    builder.setupPost()
    # Fixed timestamps: the same font bytes in every run, so an export repeats a run's PDF exactly.
    builder.font.recalcTimestamp = False
    builder.updateHead(created=FIXED_TIMESTAMP, modified=FIXED_TIMESTAMP)
    out = io.BytesIO()
    builder.save(out)
    return out.getvalue()
