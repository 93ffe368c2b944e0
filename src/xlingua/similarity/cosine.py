"""Cosine similarity of row vectors."""
from __future__ import annotations

import numpy as np


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """L2-normalize rows; all-zero rows stay zero instead of becoming NaN."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def cosine_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n, m) cosine similarities between rows of x and rows of y."""
    return normalize_rows(x) @ normalize_rows(y).T


def paired_cosine(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n,) cosine of each row pair (x[i], y[i])."""
    if x.shape != y.shape:
        raise ValueError(f"paired_cosine needs equal shapes, got {x.shape} and {y.shape}")
    return np.einsum("ij,ij->i", normalize_rows(x), normalize_rows(y))
