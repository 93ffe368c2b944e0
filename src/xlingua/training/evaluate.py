"""Dev evaluation during training: bitext retrieval accuracy (both directions, averaged) on
l10n dev pairs and/or a Tatoeba subset, with cosine or margin scoring. Small and fast, so it
can run every few hundred steps; the full benchmarks are `xlingua eval`'s job."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from xlingua.paths import benchmarks_dir
from xlingua.similarity.cosine import cosine_matrix
from xlingua.similarity.margin import margin_matrix
from xlingua.training.config import EvalConfig
from xlingua.training.data import l10n_path, read_pairs


def retrieval_accuracy(x: np.ndarray, y: np.ndarray, margin: str | None = None, k: int = 4) -> float:
    """Mean of x->y and y->x top-1 accuracy where row i of x translates row i of y."""
    sim = cosine_matrix(x, y) if margin is None else margin_matrix(x, y, k=k, margin=margin)
    gold = np.arange(len(x))
    return float(((sim.argmax(1) == gold).mean() + (sim.argmax(0) == gold).mean()) / 2)


def read_tatoeba(lang: str, limit: int | None = None, data_dir=None) -> list[tuple[str, str]]:
    """Tatoeba test pairs (xxx, eng) for a 3-letter LASER code, e.g. deu."""
    root = benchmarks_dir(data_dir) / "tatoeba"
    src, eng = root / f"tatoeba.{lang}-eng.{lang}", root / f"tatoeba.{lang}-eng.eng"
    if not src.exists():
        raise FileNotFoundError(f"Tatoeba file not found: {src}")
    a = src.read_text(encoding="utf-8").splitlines()
    b = eng.read_text(encoding="utf-8").splitlines()
    if len(a) != len(b):
        raise ValueError(f"{src} has {len(a)} lines but {eng} has {len(b)}")
    return list(zip(a, b))[:limit]


class DevEvaluator:
    def __init__(self, config: EvalConfig, margin: str | None = None):
        self.config = config
        self.margin = margin
        self.sets: dict[str, list[tuple[str, str]]] = {}
        for lang in config.l10n_langs:
            self.sets[f"l10n_{lang}"] = read_pairs(l10n_path(lang, "dev"), config.limit)
        for lang in config.tatoeba_langs:
            self.sets[f"tatoeba_{lang}"] = read_tatoeba(lang, config.limit)
        if config.general_langs:
            from xlingua.data.general import read_general

            dev = read_general(config.general_langs, split="dev")
            for lang in config.general_langs:
                self.sets[f"general_{lang}"] = [(p.text, p.english) for p in dev if p.lang == lang][: config.limit]

    def __bool__(self) -> bool:
        return bool(self.sets)

    def __call__(self, model) -> dict[str, float]:
        metrics = {}
        for name, pairs in self.sets.items():
            x = model.encode([p[0] for p in pairs]).numpy()
            y = model.encode([p[1] for p in pairs]).numpy()
            metrics[name] = 100 * retrieval_accuracy(x, y, self.margin)
        metrics["mean"] = float(np.mean(list(metrics.values())))
        return metrics

    def select(self, metrics: dict[str, float]) -> float:
        key = self.config.select
        if key not in metrics:
            raise ValueError(f"eval.select {key!r} is not among the dev metrics {sorted(metrics)}")
        return metrics[key]
