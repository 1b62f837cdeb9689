import pytest
from hypothesis import given, strategies as st

from jobs.pageranges import PageRangeError, PageRanges


@pytest.mark.parametrize("text,count,expected", [
    ("1-3,7,10-", 12, [1, 2, 3, 7, 10, 11, 12]),
    ("2", 5, [2]),
    ("4-", 5, [4, 5]),
    ("-2", 5, [1, 2]),
    ("3-100", 5, [3, 4, 5]),
    ("7", 5, []),
    (" 1 , 1-2 ", 5, [1, 2]),
    (None, 3, [1, 2, 3]),
])
def test_select(text, count, expected):
    assert PageRanges.parse(text).select(count) == expected


@pytest.mark.parametrize("text", ["0", "a", "3-1", "1,,2", "1-2-3", "-", "1.5", "١"])
def test_malformed_is_a_usage_error(text):
    with pytest.raises(PageRangeError):
        PageRanges.parse(text)


@given(st.text(max_size=30), st.integers(min_value=0, max_value=500))
def test_fuzz_only_documented_error(text, count):
    try:
        ranges = PageRanges.parse(text)
    except PageRangeError:
        return
    pages = ranges.select(count)
    assert pages == sorted(set(pages))
    assert all(1 <= p <= count for p in pages)
