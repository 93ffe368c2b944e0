"""Eigen-similarity of the embedding spaces of two languages (Søgaard et al. 2018, "On the
Limitations of Unsupervised Bilingual Dictionary Induction"), as mUSE (Yang et al. 2020,
sec. 5) uses it on sentence embeddings: N = 1,000 random samples of K = 10 parallel
sentences; for each sample, a graph per language over the K sentences, its Laplacian's
eigenvalues, and

    delta = sum_{i < k} (lambda1_i - lambda2_i)^2,  k = the smallest number of top eigenvalues
                                                       holding 90% of the sum, in both graphs.

Lower is more alike (0 = isospectral). Graphs here are complete and weighted by cosine
similarity clipped at 0 (with K = 10 a k-NN graph would be too coarse). Data: Tatoeba (the
same sentences as the tatoeba task, so its cached embeddings are reused)."""
from __future__ import annotations

import numpy as np

from xlingua.data.benchmarks import read_tatoeba, tatoeba_langs
from xlingua.evaluation.base import EvalContext, Task, TaskResult, mean
from xlingua.evaluation.registry import register
from xlingua.evaluation.tasks.tatoeba import subset_langs
from xlingua.similarity import cosine_matrix


def laplacian_spectrum(x: np.ndarray) -> np.ndarray:
    """Eigenvalues (descending) of the Laplacian of the cosine-weighted complete graph."""
    a = np.clip(cosine_matrix(x, x), 0.0, None)
    np.fill_diagonal(a, 0.0)
    lap = np.diag(a.sum(axis=1)) - a
    return np.sort(np.linalg.eigvalsh(lap))[::-1]


def _k90(ev: np.ndarray) -> int:
    total = ev.sum()
    if total <= 0:
        return len(ev)
    return int(np.searchsorted(np.cumsum(ev), 0.9 * total) + 1)


def eigen_similarity(x: np.ndarray, y: np.ndarray) -> float:
    e1, e2 = laplacian_spectrum(x), laplacian_spectrum(y)
    k = min(_k90(e1), _k90(e2))
    return float(np.sum((e1[:k] - e2[:k]) ** 2))


def sampled_eigen_similarity(x: np.ndarray, y: np.ndarray, samples: int = 1000, size: int = 10,
                             seed: int = 0) -> float:
    """Mean eigen-similarity over `samples` random subsets of `size` aligned rows."""
    if len(x) != len(y) or len(x) < size:
        raise ValueError(f"need at least {size} aligned rows, got {len(x)} and {len(y)}")
    rng = np.random.default_rng(seed)
    return float(np.mean([eigen_similarity(x[idx], y[idx])
                          for idx in (rng.choice(len(x), size, replace=False) for _ in range(samples))]))


@register
class Eigen(Task):
    name = "eigen"
    description = "eigen-similarity of xx and en embedding graphs (mUSE sec. 5), N=1000 samples of K=10, Tatoeba"
    data = "tatoeba/tatoeba.xxx-eng.{xxx,eng}"
    default_options = {"subset": "tatoeba36", "samples": 1000, "size": 10, "seed": 0}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        langs, missing = subset_langs(str(opt["subset"]), tatoeba_langs(ctx.data_dir))
        res = TaskResult(self.name, config={**opt, "graph": "complete, cosine weights clipped at 0"})
        for lang in ctx.track(langs, "eigen"):
            xx, en = read_tatoeba(lang, ctx.data_dir)
            x, y = ctx.embed(ctx.head(xx), lang), ctx.embed(ctx.head(en), "en")
            res.rows[lang] = {"eigen-similarity": sampled_eigen_similarity(
                x, y, int(opt["samples"]), int(opt["size"]), int(opt["seed"])), "n": len(x)}
        res.summary["eigen-similarity"] = mean(r["eigen-similarity"] for r in res.rows.values())
        if missing:
            res.notes.append(f"absent from the data: {' '.join(missing)}")
        res.notes.append("lower = the two languages' spaces are more alike")
        return res
