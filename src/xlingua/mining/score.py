"""Step 5: score the kNN candidates of both directions and keep each sentence's best.

Margins come from xlingua.similarity, with the k-neighbour means taken from the FAISS
results (no dense matrix):
  ratio | distance | absolute   apply_margin(cos, mean_k(x), mean_k(y))
  csls                         2 cos - r(x) - r(y) = 2 x distance margin
  inbatch                      OneAligner: cos - alpha (mean_j cos(x, y_j) + mean_i cos(x_i, y));
                               on unit vectors mean_j cos(x, y_j) = x . mean(Y), so the
                               corpus-wide means are exact at O(n d).
Scores are symmetric in (x, y), so a pair found in both directions gets the same score.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from xlingua.mining.cache import Step, save_npz
from xlingua.similarity import apply_margin

SCORES = ("ratio", "distance", "absolute", "csls", "inbatch")


@dataclasses.dataclass(frozen=True)
class ScoreConfig:
    fwd_key: str
    bwd_key: str
    src_embed_key: str
    tgt_embed_key: str
    margin: str = "ratio"
    k: int = 4
    alpha: float = 0.5


def pair_scores(cos: np.ndarray, x_stat: np.ndarray, y_stat: np.ndarray, margin: str,
                alpha: float = 0.5) -> np.ndarray:
    """Score of candidate cosines given each side's statistic (kNN mean, or mean cosine to the
    whole other side for inbatch); arrays broadcast like apply_margin's."""
    if margin in ("ratio", "distance", "absolute"):
        return apply_margin(cos, x_stat, y_stat, margin)
    if margin == "csls":
        return 2.0 * apply_margin(cos, x_stat, y_stat, "distance")
    if margin == "inbatch":
        return cos - alpha * (x_stat + y_stat)
    raise ValueError(f"unknown score {margin!r}; choose one of {SCORES}")


def side_means(steps_knn, n_shards: int, k: int) -> np.ndarray:
    """Mean cosine of every query to its k nearest neighbours, from the kNN files."""
    return np.concatenate([steps_knn.load(i)[0][:, :k].mean(axis=1, dtype=np.float64)
                           for i in range(n_shards)]).astype(np.float32)


def mean_vector(embed_step, n_shards: int) -> np.ndarray:
    total, count = None, 0
    for i in range(n_shards):
        x = embed_step.load(i).astype(np.float64)
        total = x.sum(axis=0) if total is None else total + x.sum(axis=0)
        count += len(x)
    return (total / count).astype(np.float32)


def side_batch_means(embed_step, n_shards: int, other_mean: np.ndarray) -> np.ndarray:
    """mean_j cos(x_i, y_j) = x_i . mean(Y) for every row x_i."""
    return np.concatenate([embed_step.load(i) @ other_mean for i in range(n_shards)])


class ScoreStep(Step):
    """Best candidate per source (forward) and per target (backward) with its score."""

    name = "score"

    def run(self, fwd, bwd, src_emb, tgt_emb, n_src_shards: int, n_tgt_shards: int) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        if cfg.margin == "inbatch":
            x_stat = side_batch_means(src_emb, n_src_shards, mean_vector(tgt_emb, n_tgt_shards))
            y_stat = side_batch_means(tgt_emb, n_tgt_shards, mean_vector(src_emb, n_src_shards))
        else:
            x_stat = side_means(fwd, n_src_shards, cfg.k)
            y_stat = side_means(bwd, n_tgt_shards, cfg.k)
        f_score, f_idx = self._best(fwd, n_src_shards, x_stat, y_stat, forward=True)
        b_score, b_idx = self._best(bwd, n_tgt_shards, y_stat, x_stat, forward=False)
        save_npz(self.dir / "best.npz", fwd_score=f_score, fwd_tgt=f_idx, bwd_score=b_score,
                 bwd_src=b_idx)
        return self.finish({"margin": cfg.margin, "k": cfg.k, "src": len(f_score),
                            "tgt": len(b_score)})

    def _best(self, knn, n_shards, q_stat, db_stat, forward: bool):
        scores, best, start = [], [], 0
        for i in range(n_shards):
            d, idx = knn.load(i)
            q = q_stat[start : start + len(d)][:, None]
            db = db_stat[idx]
            s = (pair_scores(d, q, db, self.config.margin, self.config.alpha) if forward
                 else pair_scores(d, db, q, self.config.margin, self.config.alpha))
            j = np.argmax(s, axis=1)  # first of equal scores = nearest neighbour first
            rows = np.arange(len(d))
            scores.append(s[rows, j].astype(np.float32))
            best.append(idx[rows, j].astype(np.int64))
            start += len(d)
        return np.concatenate(scores), np.concatenate(best)

    def load(self) -> dict:
        with np.load(self.dir / "best.npz") as z:
            return {name: z[name] for name in z.files}
