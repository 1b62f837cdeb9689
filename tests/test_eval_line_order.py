"""The best line order against a reference, and the CER floor no order goes below."""

import random

import numpy as np

from runner.evaluation.line_order import best_match, character_floor, ordered_cer, reference_order
from runner.evaluation.metrics import bag_f1, cer, normalize

PAGE = ["Reading order on pages", "that were never tuned on", "two columns and a figure",
        "then the caption below", "and a footnote at the end"]


def codes(text: str) -> np.ndarray:
    return np.array([ord(c) for c in text], dtype=np.int64)


def test_best_match_finds_the_cheapest_substring_and_its_end():
    reference = codes("thequickbrownfoxjumps")
    assert (best_match("brown", reference).distance, best_match("brown", reference).end) == (0, 13)
    assert best_match("brwn", reference).distance == 1  # one letter missing
    assert best_match("brXwn", reference).distance == 1  # one letter extra
    assert best_match("fXxjumps", reference) == best_match("fxjumps", reference)
    assert best_match("fxjumps", reference).end == 21


def test_a_shuffled_page_is_put_back_in_order():
    reference = "\n".join(PAGE)
    shuffled = [PAGE[i] for i in (3, 0, 4, 2, 1)]
    assert cer(normalize(reference, cjk=True), normalize("\n".join(shuffled), cjk=True)) > 0.5
    assert ordered_cer(reference, "\n".join(shuffled)) == 0.0


def test_misread_lines_still_find_their_place_and_keep_their_errors():
    reference = "\n".join(PAGE)
    misread = ["and a footnote at the ond", "Reading ordor on pages", "that were never tuned on",
               "two columns and a figure", "then the caption below"]
    assert ordered_cer(reference, "\n".join(misread)) == 2 / len(normalize(reference, cjk=True))


def test_repeated_lines_take_their_own_copies():
    ref = "Section one" + "alpha beta gamma" + "Section one" + "delta epsilon"
    lines = ["deltaepsilon", "Sectionone", "alphabetagamma", "Sectionone"]
    assert "".join(reference_order([normalize(x, cjk=True) for x in lines], normalize(ref, cjk=True))) \
        == normalize(ref, cjk=True)


def test_short_lines_follow_the_line_before_them():
    ref = "secondparagraph" + "firstparagraph" + "7"
    assert reference_order(["firstparagraph", "7", "secondparagraph"], ref) == \
        ["secondparagraph", "firstparagraph", "7"]


def test_ordered_cer_is_never_above_the_page_own_cer():
    rng = random.Random(4)
    for _ in range(20):
        lines = ["".join(rng.choice("abcdef ") for _ in range(rng.randint(1, 12))) for _ in range(6)]
        hypothesis = lines[:]
        rng.shuffle(hypothesis)
        reference = "\n".join(lines)
        own = cer(normalize(reference, cjk=True), normalize("\n".join(hypothesis), cjk=True))
        assert ordered_cer(reference, "\n".join(hypothesis)) <= own


def test_the_floor_charges_missed_and_extra_characters_what_cer_does():
    reference = "abcdefghij"
    assert character_floor(reference, "jihgfedcba") == 0.0  # order alone: no floor
    assert character_floor(reference, "abcdefghijXYZ") == 0.3  # 3 extra
    assert character_floor(reference, "abcdefg") == 0.3  # 3 missed
    assert character_floor(reference, "abcdefgXYZ") == 0.3  # 3 misread
    # bag-F1 charges the misread ones twice as hard as the missed ones
    assert 1.5 * (1 - bag_f1(reference, "abcdefg")) < 0.3 < 1.5 * (1 - bag_f1(reference, "abcdefgXYZ"))


def test_the_floor_is_never_above_cer():
    rng = random.Random(7)
    for _ in range(50):
        reference = "".join(rng.choice("abcd") for _ in range(rng.randint(1, 30)))
        hypothesis = "".join(rng.choice("abcde") for _ in range(rng.randint(0, 30)))
        assert character_floor(reference, hypothesis) <= cer(reference, hypothesis) + 1e-12
