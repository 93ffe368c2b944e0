"""Precision, recall and F1, and threshold calibration on a gold set, as BUCC does with its
training split: the F1-best score threshold over the ranked candidates, with its precision and
recall; and the same chosen on one fold of the gold and measured on the other."""
from __future__ import annotations

import numpy as np


def prf(n_pred: int, n_true: int, n_gold: int) -> dict:
    """Precision, recall and F1 of `n_pred` predictions, `n_true` of them right, against
    `n_gold` gold items (0 where a ratio has nothing to divide by)."""
    p = n_true / n_pred if n_pred else 0.0
    r = n_true / n_gold if n_gold else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def set_prf(pred: set, gold: set) -> dict:
    """`prf` of a predicted set against a gold set."""
    return prf(len(pred), len(pred & gold), len(gold))


def _counted(n_pred: int, n_true: int, n_gold: int) -> dict:
    return {**prf(n_pred, n_true, n_gold), "predicted": n_pred, "correct": n_true, "gold": n_gold}


def best_threshold(scores: np.ndarray, correct: np.ndarray, n_gold: int) -> dict:
    """F1-best threshold over candidates sorted by descending score. Cuts fall only between
    different scores, so `score >= threshold` selects exactly the counted candidates."""
    scores = np.asarray(scores)
    if len(scores) == 0:
        return {"threshold": None, **_counted(0, 0, n_gold)}
    tp = np.cumsum(correct)
    n = np.arange(1, len(scores) + 1)
    last_of_run = np.append(scores[1:] != scores[:-1], True)
    f1 = np.where(last_of_run, 2 * tp / (n + n_gold), -1.0)
    best = int(np.argmax(f1))
    return {"threshold": float(scores[best]), **_counted(int(n[best]), int(tp[best]), n_gold)}


def gold_flags(a: np.ndarray, b: np.ndarray, gold: set[tuple[int, int]]) -> np.ndarray:
    """Whether each candidate pair (source row a[i], target row b[i]) is a gold pair."""
    return np.fromiter(((i, j) in gold for i, j in zip(a.tolist(), b.tolist())), dtype=bool, count=len(a))


def best_pair_threshold(scores: np.ndarray, a: np.ndarray, b: np.ndarray, gold: set[tuple[int, int]]) -> dict:
    """`best_threshold` of candidate pairs (scores, source rows, target rows) in any order
    against gold (source row, target row) pairs: how mined pairs are scored at their F1-best
    threshold."""
    scores = np.asarray(scores)
    order = np.argsort(-scores, kind="stable")
    return best_threshold(scores[order], gold_flags(np.asarray(a)[order], np.asarray(b)[order], gold), len(gold))


def at_threshold(scores: np.ndarray, correct: np.ndarray, n_gold: int, threshold: float | None) -> dict:
    """P/R/F1 of the candidates scoring >= threshold (None: no candidate)."""
    keep = np.asarray(scores) >= (np.inf if threshold is None else threshold)
    return _counted(int(keep.sum()), int(np.asarray(correct)[keep].sum()), n_gold)


def two_fold(scores: np.ndarray, correct: np.ndarray, cand_fold: np.ndarray,
             gold_per_fold: tuple[int, int]) -> list[dict]:
    """Threshold F1-best on fold 1, P/R/F1 measured on fold 0, then the other way round.
    `scores` sorted descending; `cand_fold` the fold (0/1) of each candidate."""
    out = []
    for calib, test in ((1, 0), (0, 1)):
        c, t = cand_fold == calib, cand_fold == test
        th = best_threshold(scores[c], correct[c], gold_per_fold[calib])["threshold"]
        out.append({"threshold": th, **at_threshold(scores[t], correct[t], gold_per_fold[test], th)})
    return out
