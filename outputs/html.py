"""The HTML review pages: one per document and one per run, self-contained (no external assets).

Each page shows its image (a data URI, downscaled) with the line boxes drawn over it as SVG,
shaded by confidence (red = doubtful, green = sure), and the text beside it; hovering a box or a
line highlights both, clicking shows the line's text, confidence and box. Pure functions of
PageResults plus the page images the caller rendered (or the reason it could not).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from html import escape
from typing import Collection, Iterable, Iterator, Protocol, Sequence

from outputs.model import Line, PageResult

FINGERPRINT_META = "pagerunner-review"  # <meta name=...>: skip rewriting an unchanged review page
SHOW_WIDTH, SHOW_HEIGHT = 900, 4000  # px: a page is shown at most this wide and this tall
DOUBTFUL = 0.8  # lines under this confidence are marked in the text column


@dataclass(frozen=True)
class PageImage:
    """A page picture for the review: a data URI, or the reason there is none."""
    data_uri: str | None
    note: str = ""


class PagePictureSource(Protocol):
    """Where a review gets a page's picture (None: the page has none to draw)."""
    def picture(self, page: PageResult) -> PageImage | None: ...


@dataclass(frozen=True)
class DocumentLink:
    """A row of the run page's document index."""
    relname: str
    href: str
    pages: int
    failed: int
    mean_conf: float | None
    shared: bool


def page_confidence(page: PageResult) -> float | None:
    """Mean line confidence weighted by characters; None for a page with no lines (or failed)."""
    weighted = total = 0.0
    for line in _lines(page):
        size = max(1, len(line.text))
        weighted += line.conf * size
        total += size
    return weighted / total if total else None


def display_scale(width: int, height: int) -> float:
    return min(1.0, SHOW_WIDTH / width, SHOW_HEIGHT / height)


def fingerprint(*parts: object) -> str:
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def fingerprint_of_list(kind: str, title: str, records: Iterable[object]) -> str:
    """fingerprint(kind, title, list(records)), the records serialised one at a time (the same
    bytes: json.dumps writes a list as its items joined by ", ")."""
    def dump(value: object) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    digest = hashlib.sha256(f"[{dump(kind)}, {dump(title)}, [".encode("utf-8"))
    for k, record in enumerate(records):
        digest.update(((", " if k else "") + dump(record)).encode("utf-8"))
    digest.update(b"]]")
    return digest.hexdigest()[:32]


def document_review(title: str, pages: Collection[PageResult], images: PagePictureSource,
                    stamp: str) -> Iterator[str]:
    """The review page of one document: its failures first, then every page in order (`pages`
    is read twice; `images.picture(page)` gives a page's picture, made when asked for)."""
    yield _head(f"{title}: OCR review", stamp)
    failed = [p for p in pages if p.status == "failed"]
    conf = [c for c in map(page_confidence, pages) if c is not None]
    yield (f"<header><h1>{escape(title)}</h1><p>{len(pages)} page(s), {len(failed)} failed"
           + (f", mean confidence {_pct(sum(conf) / len(conf))}" if conf else "") + "</p></header>\n")
    if failed:
        yield _failure_table([(title, p.page, p.error.code.value if p.error else "", p.error.message if p.error else "",
                               f"#p{p.page}") for p in failed])
    for page in pages:
        yield page_section(page, images.picture(page), anchor=f"p{page.page}")
    yield _TAIL


def run_review(summary: str, failures: Iterable[tuple[str, int | None, str, str, str]],
               doubtful: Sequence[tuple[PageResult, str]], images: dict[tuple[str, int], PageImage],
               documents: Sequence[DocumentLink], stamp: str) -> Iterator[str]:
    """The run's review page: failures, then the least confident pages in full, then every document."""
    yield _head("pagerunner: OCR review", stamp)
    yield f"<header><h1>OCR review</h1><p>{escape(summary)}</p></header>\n"
    failures = list(failures)
    if failures:
        yield _failure_table(failures)
    else:
        yield "<h2>Failures</h2><p>none</p>\n"
    if doubtful:
        yield f"<h2>The {len(doubtful)} least confident page(s)</h2>\n"
        for page, href in doubtful:
            yield page_section(page, images.get((page.source, page.page)), anchor=None, link=href)
    yield "<h2>Documents</h2>\n<table class=\"docs\"><tr><th>document</th><th>pages</th><th>failed</th>" \
          "<th>mean confidence</th></tr>\n"
    for doc in documents:
        note = " <span class=\"shared\" title=\"identical bytes to another input: OCR'd once\">(shared)</span>" \
            if doc.shared else ""
        name = f"<a href=\"{escape(doc.href)}\">{escape(doc.relname)}</a>" if doc.href else escape(doc.relname)
        yield (f"<tr><td>{name}{note}</td><td>{doc.pages}</td>"
               f"<td>{doc.failed}</td><td>{_pct(doc.mean_conf) if doc.mean_conf is not None else '-'}</td></tr>\n")
    yield "</table>\n" + _TAIL


def page_section(page: PageResult, image: PageImage | None, anchor: str | None, link: str | None = None) -> str:
    conf = page_confidence(page)
    title = f"{escape(page.source)} page {page.page}"
    if link:
        title = f"<a href=\"{escape(link)}\">{title}</a>"
    facts = [_MODES.get(page.mode, page.mode).format(engine=page.engine)]
    if conf is not None:
        facts.append(f"confidence {_pct(conf)}")
    head = f"<h3>{title} <small>{escape(' · '.join(facts))}</small></h3>"
    notes = [*(page.warnings or [])]
    if page.status == "failed" and page.error is not None:
        notes.insert(0, f"failed: {page.error.code.value}: {page.error.message}")
    if image is not None and image.note:
        notes.append(image.note)
    note_html = "".join(f"<p class=\"note\">{escape(n)}</p>" for n in notes)
    ident = f" id=\"{anchor}\"" if anchor else ""
    if page.status == "failed" or page.width <= 0 or page.height <= 0:
        return f"<section class=\"page failed\"{ident}>{head}{note_html}</section>\n"
    key = f"{page.source}\x00{page.page}"
    prefix = "l" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return (f"<section class=\"page\"{ident}>{head}{note_html}<div class=\"row\">"
            f"{_sheet(page, image, prefix)}{_text_column(page, prefix)}</div></section>\n")


def _sheet(page: PageResult, image: PageImage | None, prefix: str) -> str:
    width, height = page.width, page.height
    shown = display_scale(width, height)
    style = f"width:{width * shown:.0f}px;height:{height * shown:.0f}px"
    picture = (f"<img alt=\"page image\" src=\"{image.data_uri}\">" if image is not None and image.data_uri
               else "<div class=\"noimage\">no image</div>")
    shapes = []
    for index, line in enumerate(_lines(page)):
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in line.box)
        shapes.append(f"<polygon id=\"{prefix}b{index}\" data-k=\"{prefix}{index}\" points=\"{points}\" "
                      f"style=\"{_shade(line.conf)}\" data-text=\"{escape(line.text)}\" "
                      f"data-conf=\"{line.conf:.3f}\"><title>{escape(line.text)} ({_pct(line.conf)})</title>"
                      "</polygon>")
    svg = (f"<svg viewBox=\"0 0 {width} {height}\" preserveAspectRatio=\"none\">{''.join(shapes)}</svg>")
    return f"<div class=\"sheet\" style=\"{style}\">{picture}{svg}</div>"


def _text_column(page: PageResult, prefix: str) -> str:
    items = []
    index = 0
    for block in page.blocks:
        rows = []
        for line in block.lines:
            doubt = " doubt" if line.conf < DOUBTFUL else ""
            rows.append(f"<li id=\"{prefix}t{index}\" data-k=\"{prefix}{index}\" class=\"ln{doubt}\" "
                        f"data-text=\"{escape(line.text)}\" data-conf=\"{line.conf:.3f}\">"
                        f"<span class=\"c\">{round(100 * line.conf)}</span>{escape(line.text)}</li>")
            index += 1
        if rows:
            items.append(f"<ol class=\"block {escape(block.kind)}\">{''.join(rows)}</ol>")
    body = "".join(items) or "<p class=\"note\">no text on this page</p>"
    return f"<div class=\"text\">{body}</div>"


_MODES = {"ocr": "OCR ({engine})", "textlayer": "from the PDF's text layer", "none": "not OCR'd"}


def _failure_table(rows: Iterable[tuple[str, int | None, str, str, str]]) -> str:
    out = ["<h2>Failures</h2>\n<table class=\"failures\"><tr><th>input</th><th>page</th><th>code</th>"
           "<th>message</th></tr>\n"]
    for source, page, code, message, href in rows:
        name = f"<a href=\"{escape(href)}\">{escape(source)}</a>" if href else escape(source)
        out.append(f"<tr><td>{name}</td><td>{page if page else '-'}</td><td><code>{escape(code)}</code></td>"
                   f"<td>{escape(message)}</td></tr>\n")
    out.append("</table>\n")
    return "".join(out)


def _lines(page: PageResult) -> Iterator[Line]:
    for block in page.blocks:
        yield from block.lines


def _shade(conf: float) -> str:
    """Red for doubtful lines, green for sure ones; the less sure, the stronger the tint."""
    sure = min(1.0, max(0.0, (conf - 0.5) / 0.5))
    hue = round(120 * sure)
    alpha = 0.18 + 0.4 * (1.0 - sure)
    return f"fill:hsla({hue},90%,45%,{alpha:.2f});stroke:hsl({hue},90%,32%)"


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _head(title: str, stamp: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"{FINGERPRINT_META}\" content=\"{escape(stamp)}\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{escape(title)}</title>"
            f"<style>{_CSS}</style></head><body>\n<div id=\"inspector\" hidden></div>\n")


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:12px;color:#222;background:#f4f4f4}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:18px 0 6px}h3{font-size:15px;margin:0 0 6px}
h3 small{font-weight:normal;color:#666}header p{margin:0;color:#555}
table{border-collapse:collapse;background:#fff}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
.failures td{background:#fff0f0}.shared{color:#666}
.page{background:#fff;border:1px solid #ddd;margin:10px 0;padding:8px}.page.failed{background:#fff0f0}
.note{margin:2px 0;color:#8a5a00}.row{display:flex;gap:12px;align-items:flex-start}
.sheet{position:relative;flex:none;outline:1px solid #3366cc;background:#fafafa}
.sheet img,.sheet svg{position:absolute;left:0;top:0;width:100%;height:100%}
.noimage{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;color:#999}
polygon{stroke-width:1.5px;vector-effect:non-scaling-stroke;cursor:pointer}
polygon.hot{stroke:#000;stroke-width:3px;fill:hsla(210,100%,50%,.35)}
.text{flex:1;min-width:240px;font-family:ui-monospace,monospace;font-size:13px}
.text ol{list-style:none;margin:0 0 10px;padding:0}.ln{padding:1px 4px;cursor:pointer;white-space:pre-wrap}
.ln .c{display:inline-block;width:2.4em;color:#888;font-size:11px}.ln.doubt{background:#fff1e0}
.ln.hot{background:#d6e6ff}
#inspector{position:fixed;right:12px;bottom:12px;max-width:40em;background:#222;color:#fff;padding:8px 10px;
border-radius:4px;font:13px/1.4 ui-monospace,monospace;white-space:pre-wrap;z-index:9}
"""

_SCRIPT = """
(function(){
  function both(k){return document.querySelectorAll('[data-k="'+k+'"]');}
  function mark(e,on){var t=e.target.closest('[data-k]');if(!t)return;
    both(t.getAttribute('data-k')).forEach(function(n){n.classList.toggle('hot',on);});}
  document.addEventListener('mouseover',function(e){mark(e,true);});
  document.addEventListener('mouseout',function(e){mark(e,false);});
  document.addEventListener('click',function(e){var t=e.target.closest('[data-k]'),box=document.getElementById('inspector');
    if(!t){box.hidden=true;return;}
    box.textContent=t.getAttribute('data-text')+'\\nconfidence '+(100*parseFloat(t.getAttribute('data-conf'))).toFixed(1)+' %';
    box.hidden=false;});
})();
"""

_TAIL = f"<script>{_SCRIPT}</script>\n</body></html>\n"
