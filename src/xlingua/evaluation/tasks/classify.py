"""SentEval transfer probes (Conneau & Kiela 2018) on frozen embeddings.

Protocol: L2-regularized logistic regression (scikit-learn), C chosen from {0.25, 1, 4, 16}
by inner 5-fold cross-validation on the training part (SentEval's sklearn path tunes the
same way). MR, CR, SUBJ, MPQA: 10-fold cross-validation (stratified, seed 0), mean test
accuracy. TREC: train on train_5500 and test on TREC_10. SST2: train on the 67k phrase-level
train set, test on the 1,821 test sentences. Accuracy x100."""
from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from xlingua.data import benchmarks as B
from xlingua.evaluation.base import EvalContext, Task, TaskResult, mean
from xlingua.evaluation.registry import register

PROBES = ("MR", "CR", "SUBJ", "MPQA", "TREC", "SST2")
C_GRID = [0.25, 1.0, 4.0, 16.0]


def _classifier(seed: int, grid=C_GRID):
    return GridSearchCV(LogisticRegression(max_iter=2000, random_state=seed), {"C": list(grid)}, cv=5)


def cv_accuracy(x: np.ndarray, y: np.ndarray, folds: int = 10, seed: int = 0, grid=C_GRID) -> float:
    """Mean test accuracy x100 over stratified folds, C tuned inside each training part."""
    accs = []
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=seed).split(x, y):
        clf = _classifier(seed, grid).fit(x[tr], y[tr])
        accs.append(np.mean(clf.predict(x[te]) == y[te]))
    return float(np.mean(accs)) * 100


def split_accuracy(x_tr, y_tr, x_te, y_te, seed: int = 0) -> float:
    return float(np.mean(_classifier(seed).fit(x_tr, y_tr).predict(x_te) == y_te)) * 100


def _head(data: B.Labelled, limit):
    """A quick run takes `limit` items per class, so every class stays present."""
    if limit is None:
        return data.texts, np.array(data.labels)
    seen: dict[int, int] = {}
    keep = []
    for i, label in enumerate(data.labels):
        if seen.get(label, 0) < limit:
            seen[label] = seen.get(label, 0) + 1
            keep.append(i)
    return [data.texts[i] for i in keep], np.array([data.labels[i] for i in keep])


@register
class Classify(Task):
    name = "classify"
    description = "SentEval probes MR, CR, SUBJ, MPQA (10-fold CV), TREC, SST2 (train/test): logistic regression"
    data = "senteval/{MR,CR,SUBJ,MPQA,TREC,SST/binary}"
    default_options = {"subset": "all", "seed": 0}

    def evaluate(self, ctx: EvalContext) -> TaskResult:
        opt = self.options(ctx)
        probes = self.subset(opt, PROBES)
        seed = int(opt["seed"])
        res = TaskResult(self.name, config={**opt, "classifier": f"LogisticRegression, C in {C_GRID} by 5-fold GridSearchCV",
                                            "protocol": "10-fold CV for MR/CR/SUBJ/MPQA; TREC and SST2 train/test"})
        for probe in ctx.track(probes, "classify"):
            if probe in B.SENTEVAL_BINARY:
                texts, y = _head(B.read_senteval_binary(probe, ctx.data_dir), ctx.limit)
                acc = cv_accuracy(ctx.embed(texts, "en"), y, 10, seed)
                n = len(y)
            elif probe in ("TREC", "SST2"):
                read = B.read_trec if probe == "TREC" else B.read_sst2
                tr_texts, y_tr = _head(read("train", ctx.data_dir), ctx.limit)
                te_texts, y_te = _head(read("test", ctx.data_dir), ctx.limit)
                acc = split_accuracy(ctx.embed(tr_texts, "en"), y_tr, ctx.embed(te_texts, "en"), y_te, seed)
                n = len(y_te)
            else:
                raise ValueError(f"unknown probe {probe!r}; choose from {PROBES}")
            res.rows[probe] = {"accuracy": acc, "n": n}
        res.summary["accuracy"] = mean(r["accuracy"] for r in res.rows.values())
        return res
