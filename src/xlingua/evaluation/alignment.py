"""Document alignment quality: ordered parallel text with a known alignment, sentences merged
at random to make 1-2 and 2-1 cases, scored by precision / recall / F1 against the gold groups.

Test documents are consecutive rows of a line-aligned parallel corpus (NTREX or newstest keep
each news document's sentences in order). Walking the rows, with probability `merge_prob` two
consecutive sentences of the first side are joined into one line (a 2-1 group), with the same
probability two of the second side (1-2); otherwise the row stays 1-1.

Two scores, as Vecalign reports them:
- strict: a predicted group counts when it equals a gold group exactly (groups with an empty
  side are not counted on either side);
- lax: every predicted group is expanded to its sentence links (i, j); P/R/F1 over links.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlingua.mining.memory import mine_rows
from xlingua.similarity.calibrate import set_prf
from xlingua.similarity.monotone import Bead

Group = tuple[tuple[int, int], tuple[int, int]]


@dataclass
class TestDocument:
    a: list[str]
    b: list[str]
    gold: list[Group]


def make_document(pairs: list[tuple[str, str]], merge_prob: float, rng: np.random.Generator,
                  join_a: str = " ", join_b: str = " ") -> TestDocument:
    """Lines and gold groups from consecutive 1-1 pairs, merging at random (see the module)."""
    a, b, gold = [], [], []
    i = 0
    while i < len(pairs):
        r = rng.random()
        if i + 1 < len(pairs) and r < 2 * merge_prob:
            (a1, b1), (a2, b2) = pairs[i], pairs[i + 1]
            if r < merge_prob:  # two sentences of A in one line: a 1-2 group (line of A, 2 of B)
                gold.append(((len(a), len(a) + 1), (len(b), len(b) + 2)))
                a.append(a1 + join_a + a2)
                b.extend([b1, b2])
            else:
                gold.append(((len(a), len(a) + 2), (len(b), len(b) + 1)))
                a.extend([a1, a2])
                b.append(b1 + join_b + b2)
            i += 2
        else:
            gold.append(((len(a), len(a) + 1), (len(b), len(b) + 1)))
            a.append(pairs[i][0])
            b.append(pairs[i][1])
            i += 1
    return TestDocument(a, b, gold)


def groups(beads: list[Bead]) -> list[Group]:
    """Predicted groups with both sides non-empty."""
    return [(bd.a, bd.b) for bd in beads if bd.a[0] < bd.a[1] and bd.b[0] < bd.b[1]]


def links(gs: list[Group]) -> set[tuple[int, int]]:
    return {(i, j) for (a0, a1), (b0, b1) in gs for i in range(a0, a1) for j in range(b0, b1)}


def alignment_scores(pred: list[Group], gold: list[Group]) -> dict:
    """{"strict": P/R/F1 over exact groups, "lax": P/R/F1 over sentence links}."""
    return {"strict": set_prf(set(pred), set(gold)), "lax": set_prf(links(pred), links(gold))}


def margin_one_to_one(a1: np.ndarray, b1: np.ndarray, k: int = 4) -> list[Group]:
    """The baseline: 1-1 pairs by ratio margin, each sentence used once (mining's max mode,
    the k nearest neighbours as candidates)."""
    _, src, tgt = mine_rows(a1, b1, k=k, margin="ratio", mode="max")
    return sorted(((int(i), int(i) + 1), (int(j), int(j) + 1)) for i, j in zip(src, tgt))
