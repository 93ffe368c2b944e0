"""Candidate scores of a bitext pair (x, y) from its cosine and one statistic of each side.

Margin scoring (Artetxe & Schwenk 2019, "Margin-based Parallel Corpus Mining with Multilingual
Sentence Embeddings", and the LASER paper), with k nearest neighbours NN_k:
    a = cos(x, y),  b = sum_{z in NN_k(x)} cos(x, z)/2k + sum_{z in NN_k(y)} cos(y, z)/2k
    ratio:    a / b
    distance: a - b
    absolute: a           (no margin; plain cosine)
    csls:     2a - 2b     (Conneau et al. 2018, "Word Translation Without Parallel Data"),
                          2 x distance: the same ranking
    inbatch:  a - alpha (mean_j cos(x, y_j) + mean_i cos(x_i, y))   (OneAligner, Niu et al.
              2022, at inference: its global term shifts every score alike, see inbatch.py)
The statistic of a side is its mean cosine to its k nearest neighbours on the other side, or
for inbatch its mean cosine to the whole other side. Every score is symmetric in (x, y).
"""
from __future__ import annotations

import numpy as np

from xlingua.similarity.cosine import cosine_matrix, normalize_rows, paired_cosine

SCORES = ("ratio", "distance", "absolute", "csls", "inbatch")


def check_score(score: str) -> str:
    if score not in SCORES:
        raise ValueError(f"unknown score {score!r}; choose one of {SCORES}")
    return score


def knn_mean(sim: np.ndarray, k: int) -> np.ndarray:
    """Mean of the k largest values in each row of a similarity matrix."""
    k = min(k, sim.shape[1])
    if k <= 0:
        raise ValueError("k must be at least 1")
    top = np.partition(sim, sim.shape[1] - k, axis=1)[:, -k:]
    return top.mean(axis=1)


def pair_scores(cos: np.ndarray, x_stat: np.ndarray, y_stat: np.ndarray, score: str = "ratio",
                alpha: float = 0.5) -> np.ndarray:
    """Scores of cosine(s) `cos` given each side's statistic. Shapes broadcast: cos may be
    (n, m) with x_stat (n, 1) and y_stat (1, m), or all (n,)."""
    if score == "inbatch":
        return cos - alpha * (x_stat + y_stat)
    b = (x_stat + y_stat) / 2.0
    if score == "ratio":
        return cos / b
    if score == "distance":
        return cos - b
    if score == "csls":
        return 2.0 * (cos - b)
    if score == "absolute":
        return cos
    raise ValueError(f"unknown score {score!r}; choose one of {SCORES}")


def score_matrix(x: np.ndarray, y: np.ndarray, score: str = "ratio", k: int = 4,
                 alpha: float = 0.5) -> np.ndarray:
    """Dense (n, m) scores between all rows of x and y (fine up to ~10^4 x 10^4)."""
    check_score(score)
    sim = cosine_matrix(x, y)
    if score == "inbatch":
        return pair_scores(sim, sim.mean(axis=1, keepdims=True), sim.mean(axis=0, keepdims=True),
                           score, alpha)
    return pair_scores(sim, knn_mean(sim, k)[:, None], knn_mean(sim.T, k)[None, :], score)


def side_knn_means(x: np.ndarray, y: np.ndarray, k: int = 4, chunk: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Each row's mean cosine to its k nearest rows of the other side, (n,) and (m,), exact,
    a block of rows at a time (memory: chunk x other side)."""
    xn, yn = normalize_rows(x), normalize_rows(y)

    def means(a, b):
        return np.concatenate([knn_mean(a[i : i + chunk] @ b.T, k) for i in range(0, len(a), chunk)]
                              or [np.zeros(0, np.float32)])

    return means(xn, yn), means(yn, xn)


def pair_margin(x: np.ndarray, y: np.ndarray, k: int = 4, margin: str = "ratio") -> np.ndarray:
    """(n,) margin of each given pair (x[i], y[i]), the neighbours taken within x and y."""
    x_mean, y_mean = side_knn_means(x, y, k)
    return pair_scores(paired_cosine(x, y), x_mean, y_mean, margin)
