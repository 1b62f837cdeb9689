"""Text as XML 1.0 allows it: characters XML cannot carry (C0 controls other than tab, newline
and carriage return, surrogates, U+FFFE/U+FFFF) become U+FFFD, so a stray control character in
a PDF's text layer cannot make an hOCR or ALTO file unwritable."""

from __future__ import annotations

import re

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)
