"""Dev evaluation during training: bitext retrieval accuracy (both directions, averaged) on
l10n dev pairs, a Tatoeba subset, the general corpus's dev slices or users' own pair files,
with cosine or margin scoring. Small and fast, so it can run every few hundred steps; the full
benchmarks are `xlingua eval`'s job."""
from __future__ import annotations

import numpy as np

from xlingua.data.benchmarks import read_tatoeba
from xlingua.similarity import retrieval_accuracy, score_matrix
from xlingua.training.config import EvalConfig
from xlingua.data.examples import l10n_path, read_pairs


def dev_accuracy(x: np.ndarray, y: np.ndarray, margin: str | None = None, k: int = 4) -> float:
    """Mean of x->y and y->x top-1 accuracy x100 where row i of x translates row i of y;
    cosine, or the score named by `margin` (similarity.SCORES)."""
    return float(np.mean(retrieval_accuracy(score_matrix(x, y, margin or "absolute", k=k))))


def tatoeba_pairs(lang: str, limit: int | None = None) -> list[tuple[str, str]]:
    """Tatoeba test pairs (xxx, eng) for a 3-letter LASER code, e.g. deu."""
    return list(zip(*read_tatoeba(lang)))[:limit]


class DevEvaluator:
    def __init__(self, config: EvalConfig, margin: str | None = None):
        self.config = config
        self.margin = margin
        self.sets: dict[str, list[tuple[str, str]]] = {}
        for lang in config.l10n_langs:
            self.sets[f"l10n_{lang}"] = read_pairs(l10n_path(lang, "dev"), config.limit)
        for lang in config.tatoeba_langs:
            self.sets[f"tatoeba_{lang}"] = tatoeba_pairs(lang, config.limit)
        if config.general_langs:
            from xlingua.data.general import read_general

            dev = read_general(config.general_langs, split="dev")
            for lang in config.general_langs:
                self.sets[f"general_{lang}"] = [(p.text, p.english) for p in dev if p.lang == lang][: config.limit]
        for lang, path in config.pair_files.items():
            from xlingua.data.general import read_own_pairs

            self.sets[f"pairs_{lang}"] = [(p.text, p.english) for p in read_own_pairs(path, lang, "dev")][: config.limit]
        empty = [name for name, pairs in self.sets.items() if len(pairs) < 2]
        if empty:  # caught before training starts, not at the first evaluation
            raise ValueError(f"dev set(s) {empty} have fewer than 2 pairs: choose other eval languages")

    def __bool__(self) -> bool:
        return bool(self.sets)

    def __call__(self, model) -> dict[str, float]:
        """Metrics of `model`: the model in training, or any Encoder (anything whose `encode`
        returns rows as an array or a CPU tensor)."""
        metrics = {}
        for name, pairs in self.sets.items():
            x = np.asarray(model.encode([p[0] for p in pairs]))
            y = np.asarray(model.encode([p[1] for p in pairs]))
            metrics[name] = dev_accuracy(x, y, self.margin)
        metrics["mean"] = float(np.mean(list(metrics.values())))
        return metrics

    def select(self, metrics: dict[str, float]) -> float:
        key = self.config.select
        if key not in metrics:
            raise ValueError(f"eval.select {key!r} is not among the dev metrics {sorted(metrics)}")
        return metrics[key]
