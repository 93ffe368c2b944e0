"""Bitext candidates from neighbour lists, as LASER's mine_bitexts does it: each sentence's
k nearest neighbours on the other side (cosines D and rows I, best first, from any index) are
its candidates; the side statistics come from the same lists; each sentence keeps the
candidate of highest score (margin.pair_scores). Mining (a shard of lists at a time) and the
BUCC task (all in memory) both go through here, so the same k, score and mode mean the same
pairs."""
from __future__ import annotations

import numpy as np

from xlingua.similarity.margin import check_score, pair_scores


def knn_stat(d: np.ndarray, k: int) -> np.ndarray:
    """Mean cosine of every query to its k nearest neighbours, from its sorted list (n, >=k)."""
    return d[:, :k].mean(axis=1, dtype=np.float64).astype(np.float32)


def batch_stat(x: np.ndarray, other_mean: np.ndarray) -> np.ndarray:
    """inbatch's statistic of unit rows x: mean_j cos(x_i, y_j) = x_i . mean(Y), exact at O(n d)."""
    return x @ other_mean


def mean_row(blocks) -> np.ndarray:
    """Mean row of unit-row blocks (one array, or the shards of a side), summed in float64."""
    total, count = None, 0
    for x in blocks:
        part = x.astype(np.float64).sum(axis=0)
        total = part if total is None else total + part
        count += len(x)
    return (total / count).astype(np.float32)


def best_candidates(d: np.ndarray, idx: np.ndarray, query_stat: np.ndarray, db_stat: np.ndarray,
                    score: str = "ratio", alpha: float = 0.5, query_is_src: bool = True):
    """(scores, rows): for each query its best neighbour by score. `query_stat` holds the
    statistic of these queries (n,), `db_stat` that of every database row; `query_is_src`
    says which side the queries are (scores are symmetric; the argument order is kept so the
    floating-point result is the same both ways). Ties go to the nearer neighbour."""
    check_score(score)
    q, db = query_stat[:, None], db_stat[idx]
    s = pair_scores(d, q, db, score, alpha) if query_is_src else pair_scores(d, db, q, score, alpha)
    j = np.argmax(s, axis=1)
    rows = np.arange(len(d))
    return s[rows, j].astype(np.float32), idx[rows, j].astype(np.int64)


def both_directions(fwd: tuple, bwd: tuple, k: int, score: str = "ratio", alpha: float = 0.5,
                    stats: tuple | None = None) -> dict:
    """Best candidate of every source (forward lists) and every target (backward lists), the
    dict `select.select_pairs` takes. `stats` = (src stat, tgt stat) overrides the kNN means
    (inbatch: batch_stat of each side)."""
    (df, i_f), (db_, i_b) = fwd, bwd
    x_stat, y_stat = stats if stats is not None else (knn_stat(df, k), knn_stat(db_, k))
    fs, ft = best_candidates(df, i_f, x_stat, y_stat, score, alpha, query_is_src=True)
    bs, bsrc = best_candidates(db_, i_b, y_stat, x_stat, score, alpha, query_is_src=False)
    return {"fwd_score": fs, "fwd_tgt": ft, "bwd_score": bs, "bwd_src": bsrc}
