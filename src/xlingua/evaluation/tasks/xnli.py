"""Zero-shot cross-lingual NLI on XNLI (Conneau et al. 2018) as LASER (Artetxe & Schwenk 2019)
and mUSE evaluate it: the encoder is frozen; a classifier with one hidden layer on the
features (u, v, |u - v|, u * v) of premise u and hypothesis v is trained on English only and
tested on the test sets of all 15 languages.

English training data: XNLI **en dev** (2,490 pairs), the only English NLI data in
../shared (no MultiNLI train). The papers train on MultiNLI (393k pairs), so absolute
figures here are lower; the spread across languages is what this measures."""
from __future__ import annotations

import numpy as np
from sklearn.neural_network import MLPClassifier

from xlingua.data.benchmarks import read_xnli_split as read_xnli
from xlingua.data.nli import XNLI_LANGS
from xlingua.evaluation.base import EvalContext, Task, TaskResult, mean
from xlingua.evaluation.registry import register
from xlingua.similarity.pair_regressor import pair_features


def embed_pairs(ctx: EvalContext, pairs, lang: str) -> tuple[np.ndarray, np.ndarray]:
    pairs = ctx.head(pairs)
    u = ctx.embed([p.premise for p in pairs], lang)
    v = ctx.embed([p.hypothesis for p in pairs], lang)
    # the encoder's vectors as they are (LASER's are not unit length), as the papers feed them
    return pair_features(u, v, normalize=False), np.array([p.label for p in pairs])


@register
class XNLI(Task):
    name = "xnli"
    description = "XNLI zero-shot: MLP on (u, v, |u-v|, u*v) trained on English (XNLI en dev), tested on 15 test sets"
    data = "xnli/{dev,test}-{lang}.tsv"
    default_options = {"subset": "all", "hidden": 512, "seed": 0}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        langs = self.subset(opt, XNLI_LANGS)
        res = TaskResult(self.name, config={**opt, "train": "XNLI en dev (2,490 pairs)",
                                            "classifier": f"sklearn MLPClassifier, 1 hidden layer of {opt['hidden']}, "
                                                          "adam, early stopping on 10% of the training pairs"})
        x_tr, y_tr = embed_pairs(ctx, read_xnli("en", "dev", ctx.data_dir), "en")
        clf = MLPClassifier(hidden_layer_sizes=(int(opt["hidden"]),), early_stopping=True, validation_fraction=0.1,
                            max_iter=300, random_state=int(opt["seed"]))
        clf.fit(x_tr, y_tr)
        for lang in ctx.track(langs, "xnli"):
            x, y = embed_pairs(ctx, read_xnli(lang, "test", ctx.data_dir), lang)
            res.rows[lang] = {"accuracy": float(np.mean(clf.predict(x) == y)) * 100, "n": len(y)}
        res.summary["accuracy"] = mean(r["accuracy"] for r in res.rows.values())
        res.summary["accuracy non-en"] = mean(r["accuracy"] for k, r in res.rows.items() if k != "en")
        res.notes.append("trained on XNLI en dev only (2,490 pairs, no MultiNLI): papers' figures use MultiNLI "
                         "train and are not directly comparable")
        return res
