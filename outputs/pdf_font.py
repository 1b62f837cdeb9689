"""The glyph-less Type0 font objects of a searchable PDF (one per document).

Identity-H encoding: every character of the text layer is a two-byte CID (outputs.pdf_text.CidMap);
CIDToGIDMap sends them all to the font's one empty glyph; ToUnicode maps each back to its
Unicode text (UTF-16BE, surrogate pairs for characters outside the BMP), so extraction,
search and copy give the recognised text in any script.
"""

from __future__ import annotations

import zlib

import pikepdf
from pikepdf import Array, Dictionary, Name

from outputs.glyphless import ADVANCE, ASCENT, DESCENT, FONT_NAME, glyphless_ttf
from outputs.pdf_text import CidMap

_CMAP_HEAD = """/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
"""
_CMAP_TAIL = """endcmap
CMapName currentdict /CMap defineresource pop
end
end
"""


def to_unicode_cmap(cids: CidMap) -> bytes:
    """The ToUnicode CMap program (PDF 32000 9.10.3) for the document's CIDs."""
    entries = sorted((cid, char) for char, cid in cids.cids.items())
    parts = [_CMAP_HEAD]
    for start in range(0, len(entries), 100):  # at most 100 entries per bfchar block
        chunk = entries[start:start + 100]
        parts.append(f"{len(chunk)} beginbfchar\n")
        parts.extend(f"<{cid:04X}> <{char.encode('utf-16-be').hex().upper()}>\n" for cid, char in chunk)
        parts.append("endbfchar\n")
    parts.append(_CMAP_TAIL)
    return "".join(parts).encode("ascii")


class GlyphlessFont:
    """The font dictionary, made once per document; its CMap and CID map are filled in by
    `finish` once every page's text is known."""

    def __init__(self, pdf: pikepdf.Pdf):
        self.cids = CidMap()
        self._to_unicode = pikepdf.Stream(pdf, b"")
        self._cid_to_gid = pikepdf.Stream(pdf, b"")
        descriptor = Dictionary(
            Type=Name.FontDescriptor, FontName=Name("/" + FONT_NAME), Flags=5,
            FontBBox=Array([0, DESCENT, ADVANCE, ASCENT]), ItalicAngle=0, Ascent=ASCENT,
            Descent=DESCENT, CapHeight=ASCENT, StemV=80,
            FontFile2=pikepdf.Stream(pdf, glyphless_ttf()))
        cid_font = Dictionary(
            Type=Name.Font, Subtype=Name.CIDFontType2, BaseFont=Name("/" + FONT_NAME),
            CIDSystemInfo=Dictionary(Registry=pikepdf.String("Adobe"),
                                     Ordering=pikepdf.String("Identity"), Supplement=0),
            FontDescriptor=pdf.make_indirect(descriptor), DW=ADVANCE,
            CIDToGIDMap=self._cid_to_gid)
        self.obj = pdf.make_indirect(Dictionary(
            Type=Name.Font, Subtype=Name.Type0, BaseFont=Name("/" + FONT_NAME),
            Encoding=Name("/Identity-H"), DescendantFonts=Array([pdf.make_indirect(cid_font)]),
            ToUnicode=self._to_unicode))

    def finish(self) -> None:
        self._to_unicode.write(zlib.compress(to_unicode_cmap(self.cids)), filter=Name.FlateDecode)
        gids = b"\x00\x00" + b"\x00\x01" * len(self.cids.cids)  # CID 0 -> .notdef, the rest -> blank
        self._cid_to_gid.write(zlib.compress(gids), filter=Name.FlateDecode)
