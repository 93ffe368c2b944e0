"""Step 5: score the kNN candidates of both directions and keep each sentence's best
(similarity.bitext, a shard of neighbour lists at a time; no dense matrix). The side
statistics are the kNN means from the same lists, or for inbatch each row's inner product
with the other side's mean vector, exact at O(n d)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from xlingua.mining.cache import save_npz
from xlingua.mining.embed import Vectors
from xlingua.mining.knn import Neighbours
from xlingua.mining.step import Output, Step, upstream
from xlingua.similarity.bitext import batch_stat, best_candidates, knn_stat, mean_row


@dataclasses.dataclass(frozen=True)
class ScoreStepConfig:
    fwd: Neighbours = upstream()
    bwd: Neighbours = upstream()
    src_embed: Vectors = upstream()
    tgt_embed: Vectors = upstream()
    margin: str = "ratio"
    k: int = 4
    alpha: float = 0.5


@dataclasses.dataclass(frozen=True)
class Best(Output):
    """Each source sentence's best target and each target's best source, with their scores."""
    margin: str
    k: int
    src: int
    tgt: int

    def load(self) -> dict:
        with np.load(Path(self.dir) / "best.npz") as z:
            return {name: z[name] for name in z.files}


def _stats(knn: Neighbours, n_shards: int, k: int) -> np.ndarray:
    return np.concatenate([knn_stat(knn.load(i)[0], k) for i in range(n_shards)])


def _batch_stats(vectors: Vectors, other: Vectors) -> np.ndarray:
    other_mean = mean_row(other.load(i) for i in range(len(other.sizes)))
    return np.concatenate([batch_stat(vectors.load(i), other_mean) for i in range(len(vectors.sizes))])


class ScoreStep(Step):
    """One item: best.npz with the best candidate per source (forward) and per target (backward)."""

    name = "score"
    output_type = Best
    key_config_name = "ScoreConfig"

    def run(self, item, progress: bool) -> None:
        cfg = self.config
        n_src, n_tgt = len(cfg.src_embed.sizes), len(cfg.tgt_embed.sizes)
        if cfg.margin == "inbatch":
            x_stat = _batch_stats(cfg.src_embed, cfg.tgt_embed)
            y_stat = _batch_stats(cfg.tgt_embed, cfg.src_embed)
        else:
            x_stat = _stats(cfg.fwd, n_src, cfg.k)
            y_stat = _stats(cfg.bwd, n_tgt, cfg.k)
        f_score, f_idx = self._best(cfg.fwd, n_src, x_stat, y_stat, query_is_src=True)
        b_score, b_idx = self._best(cfg.bwd, n_tgt, y_stat, x_stat, query_is_src=False)
        save_npz(self.dir / "best.npz", fwd_score=f_score, fwd_tgt=f_idx, bwd_score=b_score,
                 bwd_src=b_idx)

    def summarize(self) -> Best:
        cfg = self.config
        return self.output({"margin": cfg.margin, "k": cfg.k, "src": int(sum(cfg.src_embed.sizes)),
                            "tgt": int(sum(cfg.tgt_embed.sizes))})

    def _best(self, knn, n_shards, q_stat, db_stat, query_is_src: bool):
        scores, best, start = [], [], 0
        for i in range(n_shards):
            d, idx = knn.load(i)
            s, j = best_candidates(d, idx, q_stat[start : start + len(d)], db_stat,
                                   self.config.margin, self.config.alpha, query_is_src)
            scores.append(s)
            best.append(j)
            start += len(d)
        return np.concatenate(scores), np.concatenate(best)
