"""Choose pairs from each sentence's best candidate (bitext.both_directions), LASER's
retrieval modes, one meaning each, and order them.

  forward    each source sentence with its best target
  backward   each target sentence with its best source
  intersect  pairs that are each other's best in both directions
  max        LASER's default: all forward and backward candidates by descending score,
             greedily kept while neither sentence is used yet (a 1-1 alignment)
  union      all forward and backward candidates (a pair found twice is kept once; its
             score is the same both ways)

Output order: score descending, then source row, then target row (deterministic)."""
from __future__ import annotations

import numpy as np

MODES = ("forward", "backward", "intersect", "max", "union")


def select_pairs(best: dict, mode: str = "max") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, src rows, tgt rows), sorted; no threshold applied."""
    fs, ft = best["fwd_score"], best["fwd_tgt"]
    bs, bsrc = best["bwd_score"], best["bwd_src"]
    src_rows, tgt_rows = np.arange(len(fs)), np.arange(len(bs))
    if mode == "forward":
        s, a, b = fs, src_rows, ft
    elif mode == "backward":
        s, a, b = bs, bsrc, tgt_rows
    elif mode == "intersect":
        keep = bsrc[ft] == src_rows
        s, a, b = fs[keep], src_rows[keep], ft[keep]
    elif mode in ("max", "union"):
        s, a, b = unique_pairs(np.concatenate([fs, bs]), np.concatenate([src_rows, bsrc]),
                          np.concatenate([ft, tgt_rows]))
        if mode == "max":
            s, a, b = _greedy_one_to_one(*sorted_pairs(s, a, b), len(fs), len(bs))
    else:
        raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
    return sorted_pairs(s, a, b)


def unique_pairs(s, a, b):
    """Each (a, b) pair once, its first occurrence, in the given order."""
    _, first = np.unique(np.stack([a, b], axis=1), axis=0, return_index=True)
    first = np.sort(first)
    return s[first], a[first], b[first]


def sorted_pairs(s, a, b):
    """Score descending, then source row, then target row."""
    order = np.lexsort((b, a, -s.astype(np.float64)))
    return s[order], a[order], b[order]


def _greedy_one_to_one(s, a, b, n_src, n_tgt):
    used_src = np.zeros(n_src, dtype=bool)
    used_tgt = np.zeros(n_tgt, dtype=bool)
    keep = np.zeros(len(s), dtype=bool)
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        if not used_src[x] and not used_tgt[y]:
            used_src[x] = used_tgt[y] = True
            keep[i] = True
    return s[keep], a[keep], b[keep]


def apply_threshold(s, a, b, threshold: float | None):
    if threshold is None:
        return s, a, b
    keep = s >= threshold
    return s[keep], a[keep], b[keep]
