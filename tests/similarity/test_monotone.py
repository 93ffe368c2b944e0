"""Monotone (Vecalign) alignment on toys with a known answer: 1-1, merges both ways, a sentence
with no counterpart on either side, empty documents, the size limit."""
from __future__ import annotations

import numpy as np
import pytest

from xlingua.similarity import monotone
from xlingua.similarity.monotone import Bead, monotone_align

RNG = np.random.default_rng(0)
WORDS = {f"w{i}": RNG.standard_normal(64) for i in range(40)}


def bag(text: str) -> np.ndarray:
    """A text's vector: the sum of its words' (a translation shares the words)."""
    return np.sum([WORDS[w] for w in text.split()], axis=0)


def spans(sents):
    one = np.array([bag(s) for s in sents])
    two = np.array([bag(f"{a} {b}") for a, b in zip(sents, sents[1:])]).reshape(-1, 64)
    return one, two


def test_one_to_one_merges_and_skips_are_recovered():
    # w30.. and w35.. have no translation; a sentence of their 4 words merged with a neighbour
    # would cost 2 (1 - 1/sqrt(5)) = 1.1 > the skip penalty (~0.9 on these random vectors).
    a = ["w0", "w1", "w2 w3", "w4", "w5", "w30 w31 w32 w33", "w6", "w7 w8", "w9", "w10"]
    b = ["w0", "w1", "w2", "w3", "w4 w5", "w6", "w7", "w8", "w35 w36 w37 w38", "w9", "w10"]
    beads = monotone_align(*spans(a), *spans(b))
    got = [(bd.a, bd.b) for bd in beads]
    assert got == [((0, 1), (0, 1)), ((1, 2), (1, 2)), ((2, 3), (2, 4)), ((3, 5), (4, 5)),
                   ((5, 6), (5, 5)), ((6, 7), (5, 6)), ((7, 8), (6, 8)), ((8, 8), (8, 9)),
                   ((8, 9), (9, 10)), ((9, 10), (10, 11))]
    for bd in beads:
        assert (bd.score is None) == (bd.a[0] == bd.a[1] or bd.b[0] == bd.b[1])
    assert beads[0].score == pytest.approx(1.0)


def test_every_sentence_is_covered_once_in_order():
    a = [f"w{i}" for i in range(12)]
    b = [f"w{i}" for i in range(12) if i % 4] + ["w39"]
    beads = monotone_align(*spans(a), *spans(b))
    assert np.concatenate([np.arange(*bd.a) for bd in beads]).tolist() == list(range(12))
    assert np.concatenate([np.arange(*bd.b) for bd in beads]).tolist() == list(range(len(b)))


def test_empty_side_leaves_everything_unaligned():
    one, two = spans(["w0", "w1"])
    empty = np.zeros((0, 64))
    assert monotone_align(one, two, empty, empty) == [Bead((0, 1), (0, 0), None), Bead((1, 2), (0, 0), None)]


def test_too_long_documents_fail_in_one_line(monkeypatch):
    monkeypatch.setattr(monotone, "MAX_CELLS", 20)
    one, two = spans([f"w{i}" for i in range(5)])
    with pytest.raises(ValueError, match="documents of 5 and 5 sentences are too long"):
        monotone_align(one, two, one, two)
