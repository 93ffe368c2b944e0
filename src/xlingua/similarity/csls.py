"""Cross-domain similarity local scaling (Conneau et al. 2018, "Word Translation Without
Parallel Data"): CSLS(x, y) = 2 cos(x, y) - r_y(x) - r_x(y), where r is the mean cosine to
the k nearest neighbours in the other language. It equals 2x the distance margin."""
from __future__ import annotations

import numpy as np

from xlingua.similarity.cosine import cosine_matrix
from xlingua.similarity.margin import knn_mean


def csls_matrix(x: np.ndarray, y: np.ndarray, k: int = 10) -> np.ndarray:
    sim = cosine_matrix(x, y)
    return 2 * sim - knn_mean(sim, k)[:, None] - knn_mean(sim.T, k)[None, :]
