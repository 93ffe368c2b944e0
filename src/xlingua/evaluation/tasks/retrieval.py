"""Translation retrieval as mUSE evaluates it (Yang et al. 2020, sec. 4): precision at 1 of
the true translation among itself and 999 distractors drawn at random from the other side of
the same held-out parallel set, by cosine, both directions. Sets: l10n dev (1,000 pairs per
language, never used for training) and Multi30k test 2016 (de, fr, cs vs en). When a set has
exactly 1,000 pairs the distractors are all the other 999 sentences."""
from __future__ import annotations

import numpy as np

from xlingua.data.benchmarks import read_l10n, read_multi30k, require
from xlingua.evaluation.base import EvalContext, Task, TaskResult, mean
from xlingua.evaluation.registry import register
from xlingua.paths import corpora_dir
from xlingua.similarity import cosine_matrix

MULTI30K_LANGS = ("de", "fr", "cs")


def precision_at_1(x: np.ndarray, y: np.ndarray, distractors: int = 999, seed: int = 0) -> float:
    """P@1 x100 of y[i] for query x[i] among y[i] and `distractors` other rows of y
    (all of them when there are no more; otherwise a seeded random sample per query)."""
    n = len(x)
    sim = cosine_matrix(x, y)
    if n - 1 <= distractors:
        return float(np.mean(sim.argmax(axis=1) == np.arange(n))) * 100
    rng = np.random.default_rng(seed)
    hits = 0
    for i in range(n):
        others = rng.choice(n - 1, size=distractors, replace=False)
        others = others + (others >= i)  # skip the true translation
        hits += sim[i, i] > sim[i, others].max()
    return hits / n * 100


def l10n_langs(root=None) -> list[str]:
    root = require(root or corpora_dir() / "l10n", "l10n corpus directory")
    langs = []
    for p in sorted(root.glob("*-en.dev.tsv.gz")):
        if p.stat().st_size > 40:  # sw has an empty dev file (540 pairs in all, no split)
            langs.append(p.name.split("-")[0])
    return langs


@register
class Retrieval(Task):
    name = "retrieval"
    description = "mUSE-style P@1 among 999 random distractors, l10n dev and Multi30k test 2016"
    data = "../corpora/l10n/xx-en.dev.tsv.gz, multi30k/test_2016_flickr.{en,de,fr,cs}"
    default_options = {"subset": "all", "distractors": 999, "seed": 0}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        sets = self.subset(opt, ("l10n", "multi30k"))
        res = TaskResult(self.name, config={**opt, "similarity": "cosine"})
        for name in sets:
            if name == "l10n":
                items = [(f"l10n.{l}", l, *read_l10n(l, "dev")) for l in l10n_langs()]
            elif name == "multi30k":
                en = read_multi30k("en", data_dir=ctx.data_dir)
                items = [(f"multi30k.{l}", l, read_multi30k(l, data_dir=ctx.data_dir), en) for l in MULTI30K_LANGS]
            else:
                raise ValueError(f"unknown retrieval set {name!r}; choose l10n or multi30k")
            for row, lang, xx, ys in ctx.track(items, f"retrieval {name}"):
                if len(xx) != len(ys):
                    raise ValueError(f"{row}: {len(xx)} sentences but {len(ys)} English ones")
                xx, ys = ctx.head(xx), ctx.head(ys)
                x, y = ctx.embed(xx, lang), ctx.embed(ys, "en")
                d, seed = int(opt["distractors"]), int(opt["seed"])
                res.rows[row] = {"p@1 xx-en": precision_at_1(x, y, d, seed),
                                 "p@1 en-xx": precision_at_1(y, x, d, seed), "n": int(len(xx))}
            for d in ("xx-en", "en-xx"):
                res.summary[f"{name} p@1 {d}"] = mean(r[f"p@1 {d}"] for k, r in res.rows.items()
                                                      if k.startswith(name + "."))
        return res
