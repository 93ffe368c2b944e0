"""The WMT20 MLQE-PE rows QE models are fitted and scored on: read pair after pair, embedded by
a sentence encoder, and scored by a QE model pair by pair."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlingua.data.benchmarks import read_mlqe
from xlingua.similarity.qe_head import Split


@dataclass
class PairSet:
    src: list[str]
    tgt: list[str]
    gold: np.ndarray
    groups: list[str]


def read_pairs(pairs, split: str, limit: int = 0, data_dir=None) -> PairSet:
    """Sources, translations, gold z-scores and the pair of each row, pair after pair (the first
    `limit` rows of each, 0 for all)."""
    src, tgt, gold, groups = [], [], [], []
    for pair in pairs:
        d = read_mlqe(pair, split, data_dir).head(limit or None)
        src += list(d.s1)
        tgt += list(d.s2)
        gold.append(np.asarray(d.score, dtype=np.float64))
        groups += [pair] * len(d.s1)
    return PairSet(src, tgt, np.concatenate(gold), groups)


def load_split(encoder, pairs, split: str, limit: int | None = None, data_dir=None) -> Split:
    data = read_pairs(pairs, split, limit or 0, data_dir)
    groups = np.asarray(data.groups)
    us, vs = [], []
    for pair in pairs:
        rows = np.flatnonzero(groups == pair)
        src, tgt = pair.split("-")
        us.append(encoder.encode([data.src[i] for i in rows], lang=src))
        vs.append(encoder.encode([data.tgt[i] for i in rows], lang=tgt))
    return Split(np.vstack(us), np.vstack(vs), data.src, data.tgt, data.gold, data.groups)


def predict_split(model, split: Split) -> np.ndarray:
    """A QE model's scores of every row of `split`, each pair's rows scored as that pair."""
    out = np.zeros(len(split.gold))
    groups = np.asarray(split.groups)
    for pair in dict.fromkeys(split.groups):
        rows = np.flatnonzero(groups == pair)
        out[rows] = model.predict(split.u[rows], split.v[rows], [split.src[i] for i in rows],
                                  [split.tgt[i] for i in rows], pair)
    return out
