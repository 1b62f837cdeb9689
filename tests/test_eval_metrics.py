"""The eval metrics on hand-made cases, and against the evaluation kit's reference normaliser."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.evaluation.diff import aligned_diff, hunk_lines
from runner.evaluation.metrics import (bag_f1, cer, cjk_share, is_cjk_text, levenshtein, normalize,
                                       score_text, tokenize_words)

from tests._eval_shared import eval_kit, reference_normalizer


def _dp_distance(a, b) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


# --- hand-made cases -------------------------------------------------------------------------

def test_identical_text_scores_perfectly():
    score = score_text("The quick brown fox\njumps over the lazy dog.", "The quick brown fox\njumps over the lazy dog.")
    assert (score.cer, score.wer, score.bag_f1) == (0.0, 0.0, 1.0)
    assert not score.cjk


def test_one_substitution():
    score = score_text("hello world", "hellx world")
    assert score.counts.char_edits == 1
    assert score.cer == pytest.approx(1 / 11)
    assert score.wer == pytest.approx(1 / 2)
    assert score.bag_f1 == pytest.approx(10 / 11)


def test_line_breaks_and_space_runs_do_not_count_on_latin_pages():
    score = score_text("two  lines\nof text", "two lines of\ttext ")
    assert score.cer == 0.0 and score.wer == 0.0


def test_cjk_page_ignores_whitespace():
    ref = "这是一个中文测试页面，用于检查空格。"
    hyp = "这是 一个中文 测试页面,用于检查 空 格。"  # OCR puts spaces between characters; ASCII comma
    score = score_text(ref, hyp)
    assert score.cjk
    assert score.cer == 0.0  # NFKC maps the full-width comma to ',' on both sides
    assert score.wer == 0.0


def test_cjk_substitution_counts_one_character_and_one_word():
    score = score_text("中文测试页面内容", "中文测式页面内容")
    assert score.counts.char_edits == 1 and score.counts.word_edits == 1
    assert score.cer == pytest.approx(1 / 8) and score.wer == pytest.approx(1 / 8)


def test_reordered_lines_have_high_cer_but_perfect_bag_f1():
    ref = "\n".join(["first line of the page", "second line is here", "third and last line"])
    hyp = "\n".join(["third and last line", "first line of the page", "second line is here"])
    score = score_text(ref, hyp)
    assert score.cer > 0.3
    assert score.bag_f1 == pytest.approx(1.0)


def test_misread_page_scores_badly_on_both():
    score = score_text("recognition errors everywhere", "rec0gn1t10n err0rs everywh3re")
    assert score.cer > 0.15 and score.bag_f1 < 0.9


def test_empty_reference():
    both_empty = score_text("", "")
    assert (both_empty.cer, both_empty.bag_f1) == (0.0, 1.0)
    only_hyp = score_text("", "abc")
    assert only_hyp.cer == 3.0  # edits / max(1, len(ref)), as the kit's cer()
    assert only_hyp.bag_f1 == 0.0
    only_ref = score_text("abc", "")
    assert only_ref.cer == 1.0 and only_ref.wer == 1.0 and only_ref.bag_f1 == 0.0


def test_normalisation_conventions():
    assert normalize("Main\x02tainers") == "Main-tainers"
    assert normalize("hy\u00adphen") == "hyphen"
    assert normalize("Contents . . . . . . 7") == "Contents ...7"
    assert normalize("Chapter 1 ........ 3") == "Chapter 1 ...3"
    assert normalize("ﬁle\u00a0name") == "file name"  # ligature split, NBSP is a space
    assert normalize("（全角）", cjk=True) == "(全角)"
    assert normalize(" a \r\n b ", cjk=True) == "ab"


def test_cjk_decision_by_share():
    assert is_cjk_text("这是中文。")
    assert not is_cjk_text("Plain English text only.")
    assert cjk_share("") == 0.0
    mixed = "安装 " + "x" * 30  # 2 CJK of 32 non-space characters: 6 %
    assert not is_cjk_text(mixed)
    assert is_cjk_text("安装软件包 " + "x" * 30)  # 5 of 35: 14 %


def test_cjk_words_are_characters():
    assert tokenize_words("我们 use Python3 代码", cjk=True) == ["我", "们", "use", "Python3", "代", "码"]
    assert tokenize_words("我们 use Python3", cjk=False) == ["我们", "use", "Python3"]


# --- edit distance -----------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcd ", max_size=40), st.text(alphabet="abcd ", max_size=40))
def test_levenshtein_matches_dynamic_programming(a, b):
    assert levenshtein(a, b) == _dp_distance(a, b) == levenshtein(b, a)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["the", "a", "word", "ocr", "中"]), max_size=25),
       st.lists(st.sampled_from(["the", "a", "word", "ocr", "中"]), max_size=25))
def test_levenshtein_on_word_lists(a, b):
    assert levenshtein(a, b) == _dp_distance(a, b)


def test_levenshtein_long_page_against_dp():
    rng = random.Random(7)
    a = "".join(rng.choice("abcdefgh \n") for _ in range(700))
    b = list(a)
    for _ in range(60):
        b[rng.randrange(len(b))] = rng.choice("xyz")
    del b[100:130]
    b = "".join(b)
    assert levenshtein(a, b) == _dp_distance(a, b)


# --- aligned diff -----------------------------------------------------------------------------

def test_aligned_diff_marks_the_changes():
    ref = "The quick brown fox jumps over the lazy dog."
    hyp = "The quick hrown fox jumps ovr the lazy dog."
    hunks = aligned_diff(ref, hyp)
    assert len(hunks) == 1
    ref_line, hyp_line = hunk_lines(hunks[0])
    assert "[b]rown" in ref_line and "[h]rown" in hyp_line
    assert "ov[e]r" in ref_line and "ov[]r" in hyp_line
    assert aligned_diff(ref, ref) == []


def test_aligned_diff_is_short_for_long_changes():
    hunks = aligned_diff("a" * 20 + "b" * 500 + "c" * 20, "a" * 20 + "c" * 20, max_hunks=2)
    ref_line, _ = hunk_lines(hunks[0])
    assert len(ref_line) < 100 and "…" in ref_line


# --- the evaluation kit's reference implementation --------------------------------------------

def _kit_texts() -> list[tuple[str, str]]:
    kit = eval_kit()
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(kit.rglob("*.gt.txt"))]


def test_normalisation_matches_the_kit_on_its_ground_truth():
    ref = reference_normalizer()
    texts = _kit_texts()
    assert len(texts) >= 70
    for name, text in texts:
        for cjk in (False, True):
            assert normalize(text, cjk) == ref.normalize(text, cjk), name


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .\t\n\r\u00a0\u00ad\x02…中。，ﬁ①Ａ")), max_size=40),
       st.booleans())
def test_normalisation_matches_the_kit_on_tricky_text(text, cjk):
    assert normalize(text, cjk) == reference_normalizer().normalize(text, cjk)


def test_cer_and_bag_f1_match_the_kit():
    ref = reference_normalizer()
    lines = [text for name, text in _kit_texts() if name[:4].isdigit()]
    pairs = list(zip(lines, lines[1:] + lines[:1]))
    rng = random.Random(3)
    pairs += [(t, "".join(c for c in t if rng.random() > 0.1)) for t in lines]
    for a, b in pairs:
        na, nb = normalize(a), normalize(b)
        assert cer(na, nb) == pytest.approx(ref.cer(na, nb))
        assert bag_f1(na, nb) == pytest.approx(ref.bag_f1(na, nb))


def test_cjk_decision_on_the_kit_pdfs():
    pdfs = eval_kit() / "pdfs"
    for gt in sorted(pdfs.glob("*.gt.txt")):
        expected = not gt.name.startswith("maint-guide")  # zhlipsum and packaging-tutorial.zh_CN
        assert is_cjk_text(gt.read_text(encoding="utf-8")) == expected, gt.name
