"""Threshold calibration on a gold set, as BUCC does with its training split: the F1-best
score threshold over the ranked candidates, with its precision and recall."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def read_gold(path) -> set[tuple[str, str]]:
    """Gold pairs `src-id<TAB>tgt-id`, one a line (ids, or 1-based line numbers when the
    corpora have no ids)."""
    pairs = set()
    for no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise ValueError(f"{path}:{no}: expected src-id<TAB>tgt-id")
        pairs.add((parts[0].strip(), parts[1].strip()))
    if not pairs:
        raise ValueError(f"{path}: no gold pairs")
    return pairs


def prf(n_pred: int, n_true: int, n_gold: int) -> dict:
    p = n_true / n_pred if n_pred else 0.0
    r = n_true / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f, "predicted": n_pred, "correct": n_true,
            "gold": n_gold}


def best_threshold(scores: np.ndarray, correct: np.ndarray, n_gold: int) -> dict:
    """F1-best threshold over candidates sorted by descending score. Cuts fall only between
    different scores, so `score >= threshold` selects exactly the counted candidates."""
    scores = np.asarray(scores)
    if len(scores) == 0:
        return {"threshold": None, **prf(0, 0, n_gold)}
    tp = np.cumsum(correct)
    n = np.arange(1, len(scores) + 1)
    last_of_run = np.append(scores[1:] != scores[:-1], True)
    f1 = np.where(last_of_run, 2 * tp / (n + n_gold), -1.0)
    best = int(np.argmax(f1))
    return {"threshold": float(scores[best]), **prf(int(n[best]), int(tp[best]), n_gold)}


def evaluate(pairs: list[tuple[str, str]], gold: set[tuple[str, str]]) -> dict:
    return prf(len(pairs), sum(p in gold for p in pairs), len(gold))
