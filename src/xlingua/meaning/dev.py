"""Dev signals that choose the epoch of a meaning model (and stop training): evaluators
(training.evaluators) on a MeaningModel returning {"mean": headline (the main score, higher is
better), <subset>: figure, ...}, computed on base vectors embedded once. Never a test split: WMT20 QE **dev**, the general corpus's held-out dev slice and
the STS Benchmark dev split machine-translated (stsb_multi_mt).

The paper early-stops on the validation loss; here that loss keeps falling long after QE has
peaked (docs/results.md), so the default is the QE dev Pearson.
"""
from __future__ import annotations

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr

from xlingua.similarity.cosine import paired_cosine
from xlingua.training.evaluators import Evaluator, RetrievalEvaluator, general_dev_pairs

SIGNALS = ("qe-dev", "retrieval-dev", "sts-dev")


ScoredSets = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def _scored(sets: ScoredSets) -> ScoredSets:
    """(vectors a, vectors b, gold) per set, as float32 / float32 / float64 arrays."""
    return {k: (np.asarray(a, np.float32), np.asarray(b, np.float32), np.asarray(g, np.float64))
            for k, (a, b, g) in sets.items()}


def _meaning(model, vectors: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model.meaning(torch.from_numpy(vectors)).numpy()


class QEDev(Evaluator):
    """Pearson of cos(meaning(source), meaning(MT output)) with the DA z_mean on the WMT20 QE
    dev split of each pair; "mean" averages the pairs (as the test20 figure does)."""

    def __init__(self, sets: ScoredSets):
        if not sets:
            raise ValueError("QE dev signal needs at least one language pair")
        self.sets = _scored(sets)

    @classmethod
    def from_benchmarks(cls, encoder, pairs, data_dir=None, show_progress: bool = False) -> "QEDev":
        from xlingua.data.benchmarks import read_mlqe
        from xlingua.meaning.data import embed_cached

        sets = {}
        for pair in pairs:
            d = read_mlqe(pair, "dev", data_dir)
            sets[pair] = (embed_cached(encoder, d.s1, show_progress=show_progress),
                          embed_cached(encoder, d.s2, show_progress=show_progress), np.array(d.score))
        return cls(sets)

    def __call__(self, model) -> dict[str, float]:
        out = {pair: float(pearsonr(paired_cosine(_meaning(model, a), _meaning(model, b)), z).statistic)
               for pair, (a, b, z) in self.sets.items()}
        return {"mean": float(np.mean(list(out.values()))), **out}


class RetrievalDev(RetrievalEvaluator):
    """The shared retrieval evaluator on the meaning vectors of each language's sentences and
    their English translations, the dev slice of the general corpus."""

    def __init__(self, sets: dict[str, tuple[np.ndarray, np.ndarray]]):
        if not sets:
            raise ValueError("retrieval dev signal needs at least one language")
        super().__init__({k: (np.asarray(a, np.float32), np.asarray(b, np.float32)) for k, (a, b) in sets.items()},
                         embed=_meaning)

    @classmethod
    def from_general(cls, encoder, langs=None, root=None, show_progress: bool = False) -> "RetrievalDev":
        from xlingua.meaning.data import embed_cached

        return cls({lang: (embed_cached(encoder, xs, show_progress=show_progress),
                           embed_cached(encoder, ys, show_progress=show_progress))
                    for lang, (xs, ys) in general_dev_pairs(langs, root).items()})


class StsDev(Evaluator):
    """Spearman x100 of meaning cosines with the gold similarity on stsb_multi_mt **dev** (the STS
    Benchmark dev split machine-translated; its rows line up across languages). "mean" averages
    the cross-lingual pairs (first sentence in X, second in English), as STS2017-extended's
    cross-lingual figure does; "mono" averages the same-language sets."""

    def __init__(self, cross: ScoredSets, mono: ScoredSets):
        if not cross:
            raise ValueError("STS dev signal needs at least one cross-lingual pair")
        self.cross, self.mono = _scored(cross), _scored(mono)

    @classmethod
    def from_benchmarks(cls, encoder, data_dir=None, show_progress: bool = False) -> "StsDev":
        from xlingua.data.benchmarks import read_stsb_multi_mt, stsb_multi_mt_langs
        from xlingua.meaning.data import embed_cached

        sets = {lang: read_stsb_multi_mt(lang, "dev", data_dir) for lang in stsb_multi_mt_langs(data_dir)}
        if "en" not in sets:
            raise ValueError("STS dev signal needs stsb_multi_mt's English dev file (stsb-en-dev.csv)")
        en = sets["en"]
        for lang, d in sets.items():
            if len(d.s1) != len(en.s1):
                raise ValueError(f"stsb_multi_mt {lang} dev has {len(d.s1)} rows, English {len(en.s1)}: "
                                 "they must line up")
        vec = {lang: (embed_cached(encoder, d.s1, show_progress=show_progress),
                      embed_cached(encoder, d.s2, show_progress=show_progress)) for lang, d in sets.items()}
        gold = np.asarray(en.score)
        cross = {f"{lang}-en": (vec[lang][0], vec["en"][1], gold) for lang in sets if lang != "en"}
        mono = {lang: (a, b, np.asarray(sets[lang].score)) for lang, (a, b) in vec.items()}
        return cls(cross, mono)

    def __call__(self, model) -> dict[str, float]:
        rho = lambda a, b, g: 100 * float(spearmanr(paired_cosine(_meaning(model, a), _meaning(model, b)), g).statistic)
        cross = {k: rho(*v) for k, v in self.cross.items()}
        mono = {k: rho(*v) for k, v in self.mono.items()}
        out = {"mean": float(np.mean(list(cross.values())))}
        if mono:
            out["mono"] = float(np.mean(list(mono.values())))
        return {**out, **cross}
