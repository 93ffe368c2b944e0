"""Retrieval accuracy of a score matrix: each row's best column (and each column's best row)
must be its translation, as Tatoeba (Artetxe & Schwenk 2019) and dev evaluation count it."""
from __future__ import annotations

import numpy as np


def retrieval_accuracy(scores: np.ndarray) -> tuple[float, float]:
    """(row->column, column->row) top-1 accuracy x100 of a square score matrix whose
    diagonal holds the true pairs. Ties go to the lowest index."""
    n = len(scores)
    truth = np.arange(n)
    fwd = float(np.mean(scores.argmax(axis=1) == truth)) * 100
    bwd = float(np.mean(scores.argmax(axis=0) == truth)) * 100
    return fwd, bwd
