"""In-batch normalization of a similarity matrix (Niu et al. 2022, "OneAligner", sec. 3).

A "popular" sentence is similar to many others; subtracting its mean similarity to the batch
removes that bias:
    s_ij = f_ij - alpha * (mean_k f_ik + mean_k f_kj) + (2 alpha - 1) * mean_kl f_kl
The global-mean term is used during training (it keeps the scale of s comparable across
batches); at inference it shifts every score by the same constant, so ranking ignores it.
"""
from __future__ import annotations

import numpy as np


def inbatch_normalize(f, alpha: float = 0.5, global_term: bool = True):
    """Normalize a (n, m) similarity matrix, numpy array or torch tensor."""
    # Checked by module so that numpy-only callers (e.g. Ray mining workers) never import torch.
    if type(f).__module__.startswith("torch"):
        row = f.mean(dim=1, keepdim=True)
        col = f.mean(dim=0, keepdim=True)
        s = f - alpha * (row + col)
        return s + (2 * alpha - 1) * f.mean() if global_term else s
    f = np.asarray(f, dtype=np.float32)
    s = f - alpha * (f.mean(axis=1, keepdims=True) + f.mean(axis=0, keepdims=True))
    return s + (2 * alpha - 1) * f.mean() if global_term else s
