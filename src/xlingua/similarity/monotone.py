"""Monotone alignment of two ordered sentence sequences by dynamic programming (Thompson &
Koehn 2019, "Vecalign: Improved Sentence Alignment in Linear Time and Space").

Steps 1-1, 1-2, 2-1 (a sentence with the concatenation of two), 1-0 and 0-1 (a sentence left
unaligned). The cost of aligning spans x and y is Vecalign's:
    c(x, y) = (1 - cos(x, y)) * n(x) * n(y) / ((r_B(x) + r_A(y)) / 2)
where n is the number of sentences in the span (the merge penalty) and r_B(x) is the mean of
1 - cos(x, b) over sampled sentences b of the other document, so that a sentence close to
everything (short, generic) does not win cheaply. A 1-0 or 0-1 step costs a fixed penalty:
the `skip_quantile` quantile of all 1-1 costs (Vecalign's del_percentile_frac, 0.2).

Full dynamic programming, O(n m) time and memory (Vecalign's coarse-to-fine search is not
needed at the document sizes served here; `MAX_CELLS` bounds it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlingua.similarity.cosine import normalize_rows

STEPS = ((1, 1), (1, 2), (2, 1), (1, 0), (0, 1))
MAX_CELLS = 25_000_000


@dataclass(frozen=True)
class Bead:
    """Sentences a[0]:a[1] of A aligned with b[0]:b[1] of B (half-open; an empty range for a
    1-0 / 0-1 step); score: cosine of the two spans' embeddings, None for an empty side."""

    a: tuple[int, int]
    b: tuple[int, int]
    score: float | None


def _norms(x: np.ndarray, other: np.ndarray, samples: int, rng) -> np.ndarray:
    """Mean of 1 - cos(x_i, o) over sampled rows o of `other`."""
    if len(other) == 0 or len(x) == 0:
        return np.ones(len(x))
    pick = rng.choice(len(other), size=min(samples, len(other)), replace=False)
    return np.maximum((1.0 - x @ other[pick].T).mean(axis=1), 1e-6)


def monotone_align(a1: np.ndarray, a2: np.ndarray, b1: np.ndarray, b2: np.ndarray,
                   skip_quantile: float = 0.2, samples: int = 50, seed: int = 0) -> list[Bead]:
    """Align A and B given embeddings of their sentences (a1: n rows) and of each pair of
    consecutive sentences (a2: n-1 rows, row i = sentences i and i+1); same for B."""
    a1, b1 = normalize_rows(a1).astype(np.float64), normalize_rows(b1).astype(np.float64)
    a2 = normalize_rows(a2).astype(np.float64) if len(a2) else np.zeros((0, a1.shape[1] if a1.ndim == 2 else 0))
    b2 = normalize_rows(b2).astype(np.float64) if len(b2) else np.zeros((0, b1.shape[1] if b1.ndim == 2 else 0))
    n, m = len(a1), len(b1)
    if (n + 1) * (m + 1) > MAX_CELLS:
        raise ValueError(f"documents of {n:,} and {m:,} sentences are too long to align in one piece "
                         f"(limit {MAX_CELLS:,} sentence pairs); split them into chapters")
    if n == 0 or m == 0:
        return [Bead((i, i + 1), (0, 0), None) for i in range(n)] + \
               [Bead((0, 0), (j, j + 1), None) for j in range(m)]
    rng = np.random.default_rng(seed)
    ra1, ra2 = _norms(a1, b1, samples, rng), _norms(a2, b1, samples, rng)
    rb1, rb2 = _norms(b1, a1, samples, rng), _norms(b2, a1, samples, rng)
    cos11 = a1 @ b1.T
    cost11 = (1.0 - cos11) / ((ra1[:, None] + rb1[None, :]) / 2)
    cost12 = 2 * (1.0 - a1 @ b2.T) / ((ra1[:, None] + rb2[None, :]) / 2)  # (n, m-1)
    cost21 = 2 * (1.0 - a2 @ b1.T) / ((ra2[:, None] + rb1[None, :]) / 2)  # (n-1, m)
    skip = float(np.quantile(cost11, skip_quantile))

    cols = np.arange(m + 1)
    D = np.full((n + 1, m + 1), np.inf)
    back = np.full((n + 1, m + 1), -1, dtype=np.int8)
    D[0] = cols * skip
    back[0, 1:] = 4
    for i in range(1, n + 1):
        e = D[i - 1] + skip  # 1-0
        bp = np.full(m + 1, 3, dtype=np.int8)
        _relax(e, bp, 1, D[i - 1, :-1] + cost11[i - 1], 0)
        if m >= 2:
            _relax(e, bp, 2, D[i - 1, :-2] + cost12[i - 1], 1)
        if i >= 2:
            _relax(e, bp, 1, D[i - 2, :-1] + cost21[i - 2], 2)
        # 0-1 steps within the row: D[i, j] = min_j' (e[j'] + (j - j') skip), a running minimum.
        t = e - cols * skip
        best = np.minimum.accumulate(t)
        D[i] = best + cols * skip
        bp[best < t] = 4
        back[i] = bp
    return _trace(back, cos11, a1, a2, b1, b2)


def _relax(e: np.ndarray, bp: np.ndarray, start: int, cand: np.ndarray, step: int) -> None:
    better = cand < e[start:]
    e[start:][better] = cand[better]
    bp[start:][better] = step


def _trace(back, cos11, a1, a2, b1, b2) -> list[Bead]:
    i, j = back.shape[0] - 1, back.shape[1] - 1
    beads = []
    while i > 0 or j > 0:
        di, dj = STEPS[back[i, j]]
        if di and dj:
            x = a1[i - 1] if di == 1 else a2[i - 2]
            y = b1[j - 1] if dj == 1 else b2[j - 2]
            score = float(cos11[i - 1, j - 1]) if di == dj == 1 else float(x @ y)
        else:
            score = None
        beads.append(Bead((i - di, i), (j - dj, j), score))
        i, j = i - di, j - dj
    return beads[::-1]
