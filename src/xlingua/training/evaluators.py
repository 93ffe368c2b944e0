"""Dev evaluators: a model in, {metric: value} out, with the name of the metric that picks the
best step (`main_score`) and whether higher is better, as sentence-transformers' evaluators and
MTEB's tasks declare them. The training loop runs them every `eval_every` steps.

RetrievalEvaluator is the one retrieval signal of every recipe: top-1 accuracy x100 of finding
each sentence's translation among the set's translations, both directions averaged, per set and
their mean. What is embedded and how is the recipe's: texts through a sentence encoder, or cached
base vectors through the meaning MLPs.

MiningEvaluator is the harder signal: the dev pairs hidden among distractors
(data.general.general_mining_set), mined by ratio margin as `xlingua mine` does, F1 x100 at the
F1-best threshold. Retrieval among a few hundred long dev sentences saturates (a few shared names
and numbers find the translation) while mining among thousands of near neighbours ranks models
as Tatoeba and BUCC do."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from xlingua.similarity import retrieval_accuracy, score_matrix
from xlingua.similarity.calibrate import best_pair_threshold


class Evaluator:
    main_score = "mean"
    greater_is_better = True

    def __call__(self, model) -> dict[str, float]:
        raise NotImplementedError


def encode_texts(model, texts: Sequence) -> np.ndarray:
    """Rows of `model.encode` (an array or a CPU tensor)."""
    return np.asarray(model.encode(list(texts)))


def dev_accuracy(x: np.ndarray, y: np.ndarray, margin: str | None = None, k: int = 4) -> float:
    """Mean of x->y and y->x top-1 accuracy x100 where row i of x translates row i of y;
    cosine, or the score named by `margin` (similarity.SCORES)."""
    return float(np.mean(retrieval_accuracy(score_matrix(x, y, margin or "absolute", k=k))))


class RetrievalEvaluator(Evaluator):
    """`sets` {name: (sources, translations)}; `embed(model, items)` gives their vectors."""

    def __init__(self, sets: dict[str, tuple], embed: Callable = encode_texts, margin: str | None = None,
                 name: str = "", main_score: str | None = None):
        self.sets, self.embed, self.margin, self.name = sets, embed, margin, name
        self.main_score = main_score or (name or "mean")

    def __bool__(self) -> bool:
        return bool(self.sets)

    def accuracies(self, model) -> dict[str, float]:
        """{set name: its retrieval accuracy}."""
        return {k: dev_accuracy(self.embed(model, a), self.embed(model, b), self.margin)
                for k, (a, b) in self.sets.items()}

    def __call__(self, model) -> dict[str, float]:
        found = self.accuracies(model)
        mean = float(np.mean(list(found.values())))
        if not self.name:
            return {**found, "mean": mean}
        return {self.name: mean, **{f"{self.name} {k}": v for k, v in found.items()}}


def general_dev_pairs(langs=None, root=None, limit: int | None = None) -> dict[str, tuple[list[str], list[str]]]:
    """{lang: (sentences, their English)} of the general corpus's dev split (English sentences
    held out of training), languages sorted; `langs` None = all it has."""
    from xlingua.data.general import read_general

    dev = read_general(list(langs) if langs is not None else None, split="dev", root=root)
    out = {}
    for lang in sorted({p.lang for p in dev}):
        rows = [p for p in dev if p.lang == lang][:limit]
        out[lang] = ([p.text for p in rows], [p.english for p in rows])
    return out


def lowres_dev_pairs(langs=None, root=None) -> dict[str, tuple[list[str], list[str], list[int]]]:
    """{lang: (sentences, their pivot side, rows of the non-Bible pairs)} of the low-resource
    corpus's dev slices (data.lowres), each whole, in the order of `langs` (None = all it has)."""
    from xlingua.data.lowres import dev_by_language

    return {lang: ([p.text for p in pairs], [p.pivot for p in pairs],
                   [i for i, p in enumerate(pairs) if p.domain != "bible"])
            for lang, pairs in dev_by_language(langs, root).items()}


def dev_mining_f1(x: np.ndarray, y: np.ndarray, gold: set[tuple[int, int]], k: int = 4) -> float:
    """F1 x100 at the F1-best threshold of mining rows of x against rows of y (ratio margin over
    k neighbours, LASER's max selection), against gold (row of x, row of y) pairs."""
    from xlingua.mining.memory import mine_rows

    return 100 * best_pair_threshold(*mine_rows(x, y, k), gold)["f1"]


class MiningEvaluator(Evaluator):
    """`sets` {lang: (sources, targets, gold {(row, row)})}: dev mining F1 x100 per set
    ("mining de") and their mean ("mining", the main score)."""

    def __init__(self, sets: dict[str, tuple], embed: Callable = encode_texts, name: str = "mining"):
        self.sets, self.embed, self.name = sets, embed, name
        self.main_score = name

    def __bool__(self) -> bool:
        return bool(self.sets)

    def __call__(self, model) -> dict[str, float]:
        found = {k: dev_mining_f1(self.embed(model, a), self.embed(model, b), gold)
                 for k, (a, b, gold) in self.sets.items()}
        return {self.name: float(np.mean(list(found.values()))), **{f"{self.name} {k}": v for k, v in found.items()}}


class QEEvaluator(Evaluator):
    """WMT20 QE dev: Pearson x100 of the cosine of (source, MT output) with the human z-scores,
    per language pair ("qe_en-de") and their mean ("qe", the WMT20 figure); a model trained to
    score translations is chosen on it."""
    main_score = "qe"

    def __init__(self, pairs: Sequence[str], data_dir=None):
        from xlingua.data.benchmarks import read_mlqe

        self.sets = {p: read_mlqe(p, "dev", data_dir) for p in pairs}

    def __bool__(self) -> bool:
        return bool(self.sets)

    def __call__(self, model) -> dict[str, float]:
        from scipy.stats import pearsonr

        from xlingua.similarity.cosine import paired_cosine

        found = {}
        for p, d in self.sets.items():
            cos = paired_cosine(encode_texts(model, d.s1), encode_texts(model, d.s2))
            # equal cosines rank nothing: 0, not the undefined (nan) Pearson, which no step would beat
            found[f"qe_{p}"] = 0.0 if np.ptp(cos) == 0 else 100 * float(pearsonr(cos, d.score).statistic)
        return {"qe": float(np.mean(list(found.values()))), **found}
