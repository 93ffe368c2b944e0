"""The mining haystack: gold pairs hidden among real lines, no translation across sides."""
import pytest

from xlingua.data.haystack import build_haystack, normalized

# a toy multi-parallel corpus: English sentences with translations, two of them (e0, e1)
# translated into many languages, one chain through a French pivot (f5 - x5 - e5)
PAIRS = ([(f"de{i}", f"e{i}") for i in range(40)] + [(f"fr{i}", f"e{i}") for i in range(40)]
         + [(f"ja{i}", f"e{i}") for i in range(2)] + [("x5", "f5"), ("f5", "e5")]
         + [("E3.", "e3")])  # equal to e3 after normalization: one line
GOLD = [(f"de{i}", f"e{i}") for i in range(30, 34)]


def _group_of(line):
    return normalized(line).lstrip("abcdefghijklmnopqrstuvwxyz")


def test_no_translation_crosses_sides():
    hay = build_haystack(PAIRS, GOLD, n=20, seed=1)
    assert len(hay.src) == len(hay.tgt) == 20 and hay.short == 0
    gold_rows = set(hay.gold)
    src_groups = {_group_of(l) for i, l in enumerate(hay.src, 1) if all(i != a for a, _ in gold_rows)}
    tgt_groups = {_group_of(l) for j, l in enumerate(hay.tgt, 1) if all(j != b for _, b in gold_rows)}
    assert not src_groups & tgt_groups
    # a gold pair's other translations are on neither side
    for i in range(30, 34):
        assert f"fr{i}" not in hay.src + hay.tgt


def test_gold_rows_point_at_the_gold_pairs():
    hay = build_haystack(PAIRS, GOLD, n=20, seed=1)
    assert sorted((hay.src[a - 1], hay.tgt[b - 1]) for a, b in hay.gold) == sorted(GOLD)


def test_same_seed_same_haystack_and_another_seed_another():
    a, b = build_haystack(PAIRS, GOLD, 20, seed=3), build_haystack(PAIRS, GOLD, 20, seed=3)
    assert (a.src, a.tgt, a.gold) == (b.src, b.tgt, b.gold)
    assert build_haystack(PAIRS, GOLD, 20, seed=4).src != a.src


def test_a_line_equal_after_normalization_is_one_line():
    hay = build_haystack(PAIRS, [], n=60, seed=0)
    lines = hay.src + hay.tgt
    assert len({normalized(l) for l in lines}) == len(lines)


def test_too_few_lines_are_reported_not_hidden():
    hay = build_haystack(PAIRS[:10], [], n=50, seed=0)
    assert hay.short > 0


def test_gold_that_cannot_fit_is_refused():
    with pytest.raises(ValueError, match="do not fit"):
        build_haystack(PAIRS, GOLD, n=3)


def test_every_line_is_one_line_without_a_tab():
    pairs = PAIRS + [("a\tb", "tab"), ("c\u2028d", "ls"), ("e\r\nf", "crlf")]
    hay = build_haystack(pairs, GOLD, n=60, seed=0)
    text = "".join(l + "\n" for l in hay.src + hay.tgt)
    assert len(text.splitlines()) == len(hay.src) + len(hay.tgt)
    assert "\t" not in text and "a b" in hay.src + hay.tgt
