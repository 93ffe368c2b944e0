"""Margin-based scoring (Artetxe & Schwenk 2019, "Margin-based Parallel Corpus Mining with
Multilingual Sentence Embeddings", and the LASER paper).

For candidates x, y with k nearest neighbours NN_k:
    a = cos(x, y),  b = sum_{z in NN_k(x)} cos(x, z)/2k + sum_{z in NN_k(y)} cos(y, z)/2k
    ratio:    a / b
    distance: a - b
    absolute: a           (no margin; plain cosine)
"""
from __future__ import annotations

import numpy as np

from xlingua.similarity.cosine import cosine_matrix, normalize_rows, paired_cosine

MARGINS = ("ratio", "distance", "absolute")


def knn_mean(sim: np.ndarray, k: int) -> np.ndarray:
    """Mean of the k largest values in each row of a similarity matrix."""
    k = min(k, sim.shape[1])
    if k <= 0:
        raise ValueError("k must be at least 1")
    top = np.partition(sim, sim.shape[1] - k, axis=1)[:, -k:]
    return top.mean(axis=1)


def apply_margin(a: np.ndarray, x_mean: np.ndarray, y_mean: np.ndarray, margin: str = "ratio") -> np.ndarray:
    """Margin of cosine(s) `a` given each side's mean similarity to its k neighbours.
    Shapes broadcast: a may be (n, m) with x_mean (n, 1) and y_mean (1, m), or all (n,)."""
    b = (x_mean + y_mean) / 2.0
    if margin == "ratio":
        return a / b
    if margin == "distance":
        return a - b
    if margin == "absolute":
        return a
    raise ValueError(f"unknown margin {margin!r}; choose one of {MARGINS}")


def margin_matrix(x: np.ndarray, y: np.ndarray, k: int = 4, margin: str = "ratio") -> np.ndarray:
    """Dense (n, m) margin scores between all rows of x and y (fine up to ~10^4 x 10^4)."""
    sim = cosine_matrix(x, y)
    x_mean = knn_mean(sim, k)[:, None]
    y_mean = knn_mean(sim.T, k)[None, :]
    return apply_margin(sim, x_mean, y_mean, margin)


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
    return apply_margin(paired_cosine(x, y), x_mean, y_mean, margin)
