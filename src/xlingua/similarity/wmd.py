"""Word Mover's Distance (Kusner et al. 2015, "From Word Embeddings To Document Distances")
between two sentences given as token embedding matrices, solved with POT.

Every token weighs 1/L (no stop-word removal, as DuEAM uses it); the ground cost is the
Euclidean distance between token vectors. `method="emd"` solves the exact transport problem
(network simplex); `method="sinkhorn"` uses the entropic approximation with regularization
`reg`, faster on long sentences.
"""
from __future__ import annotations

import numpy as np
import ot

METHODS = ("emd", "sinkhorn")


def wmd(a: np.ndarray, b: np.ndarray, method: str = "emd", reg: float = 0.05) -> float:
    """WMD between token embeddings a (La, d) and b (Lb, d)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or len(a) == 0 or len(b) == 0:
        raise ValueError(f"wmd needs two non-empty (tokens, dim) matrices, got {a.shape} and {b.shape}")
    cost = ot.dist(a, b, metric="euclidean")
    wa = np.full(len(a), 1.0 / len(a))
    wb = np.full(len(b), 1.0 / len(b))
    if method == "emd":
        return float(ot.emd2(wa, wb, cost))
    if method == "sinkhorn":
        return float(ot.sinkhorn2(wa, wb, cost, reg))
    raise ValueError(f"unknown WMD method {method!r}; choose one of {METHODS}")


def wmd_pairs(left: list[np.ndarray], right: list[np.ndarray], method: str = "emd", reg: float = 0.05) -> np.ndarray:
    """WMD of each aligned pair (left[i], right[i])."""
    if len(left) != len(right):
        raise ValueError(f"wmd_pairs needs aligned lists, got {len(left)} and {len(right)}")
    return np.array([wmd(a, b, method, reg) for a, b in zip(left, right)], dtype=np.float32)
