"""Step 5: score the kNN candidates of both directions and keep each sentence's best
(similarity.bitext, a shard of neighbour lists at a time; no dense matrix). The side
statistics are the kNN means from the same lists, or for inbatch each row's inner product
with the other side's mean vector, exact at O(n d)."""
from __future__ import annotations

import dataclasses

import numpy as np

from xlingua.mining.cache import Step, save_npz
from xlingua.similarity.bitext import batch_stat, best_candidates, knn_stat, mean_row


@dataclasses.dataclass(frozen=True)
class ScoreConfig:
    fwd_key: str
    bwd_key: str
    src_embed_key: str
    tgt_embed_key: str
    margin: str = "ratio"
    k: int = 4
    alpha: float = 0.5


def _stats(knn, n_shards: int, k: int) -> np.ndarray:
    return np.concatenate([knn_stat(knn.load(i)[0], k) for i in range(n_shards)])


def _batch_stats(embed_step, n_shards: int, other_step, n_other: int) -> np.ndarray:
    other_mean = mean_row(other_step.load(i) for i in range(n_other))
    return np.concatenate([batch_stat(embed_step.load(i), other_mean) for i in range(n_shards)])


class ScoreStep(Step):
    """Best candidate per source (forward) and per target (backward) with its score."""

    name = "score"

    def run(self, fwd, bwd, src_emb, tgt_emb, n_src_shards: int, n_tgt_shards: int) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        if cfg.margin == "inbatch":
            x_stat = _batch_stats(src_emb, n_src_shards, tgt_emb, n_tgt_shards)
            y_stat = _batch_stats(tgt_emb, n_tgt_shards, src_emb, n_src_shards)
        else:
            x_stat = _stats(fwd, n_src_shards, cfg.k)
            y_stat = _stats(bwd, n_tgt_shards, cfg.k)
        f_score, f_idx = self._best(fwd, n_src_shards, x_stat, y_stat, query_is_src=True)
        b_score, b_idx = self._best(bwd, n_tgt_shards, y_stat, x_stat, query_is_src=False)
        save_npz(self.dir / "best.npz", fwd_score=f_score, fwd_tgt=f_idx, bwd_score=b_score,
                 bwd_src=b_idx)
        return self.finish({"margin": cfg.margin, "k": cfg.k, "src": len(f_score),
                            "tgt": len(b_score)})

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

    def load(self) -> dict:
        with np.load(self.dir / "best.npz") as z:
            return {name: z[name] for name in z.files}
