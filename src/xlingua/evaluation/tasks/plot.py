"""PCA picture of 1,000 parallel sentences in three languages, coloured by language: an
encoder whose points cluster by language (three blobs) separates languages; one whose
translations overlap aligns meaning. Data: Multi30k test 2016 (line-aligned en, de, fr).
Also reports the silhouette score of the language labels (cosine, full space): near 1 means
clusters by language, near 0 or below means languages are mixed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score

from xlingua.data.benchmarks import read_multi30k
from xlingua.evaluation.base import EvalContext, Task, TaskResult
from xlingua.evaluation.registry import register
from xlingua.io import atomic_open


def pca_plot(vectors: dict[str, np.ndarray], path, title: str) -> np.ndarray:
    """Scatter of the first two principal components of all vectors; returns those points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = list(vectors)
    pts = PCA(n_components=2, random_state=0).fit_transform(np.concatenate([vectors[l] for l in langs]))
    fig, ax = plt.subplots(figsize=(6, 6), dpi=120)
    start = 0
    for lang in langs:
        n = len(vectors[lang])
        ax.scatter(pts[start:start + n, 0], pts[start:start + n, 1], s=4, alpha=0.5, label=lang)
        start += n
    ax.set_title(title)
    ax.set_xlabel("PC1")
    ax.set_ylabel("PC2")
    ax.legend(markerscale=4)
    fig.tight_layout()
    with atomic_open(path, "wb") as f:
        fig.savefig(f, format="png")
    plt.close(fig)
    return pts


@register
class Plot(Task):
    name = "plot"
    description = "PCA PNG of 1,000 parallel Multi30k sentences in en, de, fr coloured by language + silhouette"
    data = "multi30k/test_2016_flickr.{en,de,fr}"
    default_options = {"subset": "en,de,fr", "n": 1000}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        langs = str(opt["subset"]).split(",")
        n = int(opt["n"]) if ctx.limit is None else min(int(opt["n"]), ctx.limit)
        vecs = {l: ctx.embed(read_multi30k(l, data_dir=ctx.data_dir)[:n], l) for l in langs}
        name = "".join(c if c.isalnum() else "_" for c in ctx.encoder.name)
        path = (ctx.out_dir or Path.cwd()) / f"pca_{name}_{'-'.join(langs)}.png"
        pca_plot(vecs, path, f"{ctx.encoder.name}: PCA of {n} parallel sentences")
        labels = np.concatenate([[i] * len(v) for i, v in enumerate(vecs.values())])
        sil = float(silhouette_score(np.concatenate(list(vecs.values())), labels, metric="cosine"))
        res = TaskResult(self.name, config={**opt, "n": n, "data": "Multi30k test_2016_flickr"},
                         summary={"language silhouette": sil}, files=[str(path)])
        res.notes.append("silhouette of language labels: ~1 clusters by language, <=0 languages mixed (by meaning)")
        return res
