"""Pretty-printed XML written a page at a time, byte for byte as lxml writes the whole tree.

A document of thousands of pages (hOCR, ALTO) as one element tree takes memory in proportion to
its words (~1.2 GiB for ALTO of 500 dense pages). Here the tree is serialised once with a marker
where the pages go, the text before and after the marker is written as it is, and each page is
serialised inside a copy of its ancestors (so its indentation and namespaces are those it would
have in the whole tree), between two markers that say where it starts and ends.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from lxml import etree

T = TypeVar("T")
_START, _END = "pagerunner-items-start", "pagerunner-items-end"


def streamed_tree(root: etree._Element, container: etree._Element, items: Iterable[T],
                  add: Callable[[etree._Element, T], None], **options) -> Iterator[bytes]:
    """The bytes of etree.tostring(root, pretty_print=True, **options) with add(container, item)
    done for every item in turn, holding one item's elements at a time. `container` is a
    descendant of `root` without children of its own."""
    it = iter(items)
    first = next(it, None)
    if first is None:
        yield etree.tostring(root, pretty_print=True, **options)
        return
    marker = etree.Comment(_START)
    container.append(marker)
    whole = etree.tostring(root, pretty_print=True, **options)
    container.remove(marker)
    at = whole.index(f"<!--{_START}-->".encode())
    start, end = whole.rfind(b"\n", 0, at) + 1, whole.index(b"\n", at) + 1
    yield whole[:start]
    encoding = options.get("encoding")
    for item in itertools.chain([first], it):
        yield _item_bytes(root, container, item, add, encoding)
    yield whole[end:]


def _item_bytes(root: etree._Element, container: etree._Element, item: T,
                add: Callable[[etree._Element, T], None], encoding: str | None) -> bytes:
    mini = _copy_of_ancestry(root, container)
    mini.append(etree.Comment(_START))
    add(mini, item)
    mini.append(etree.Comment(_END))
    text = etree.tostring(mini.getroottree().getroot(), pretty_print=True, encoding=encoding)
    start = text.index(b"\n", text.index(f"<!--{_START}-->".encode())) + 1
    end = text.rfind(b"\n", 0, text.index(f"<!--{_END}-->".encode())) + 1
    return text[start:end]


def _copy_of_ancestry(root: etree._Element, container: etree._Element) -> etree._Element:
    """A new tree with root's tag and namespaces and the same chain of tags down to a copy of
    `container` (empty); returns that copy."""
    chain = []
    node = container
    while node is not root:
        chain.append(node.tag)
        node = node.getparent()
    copy = etree.Element(root.tag, nsmap=root.nsmap)
    for tag in reversed(chain):
        copy = etree.SubElement(copy, tag)
    return copy
