"""A supervised pair scorer: a small scikit-learn regressor on the features (u, v, |u - v|, u * v)
of two sentence vectors (Conneau et al. 2017, InferSent's pair features), trained on gold
scores (e.g. WMT20 QE DA z-scores). The baseline that unsupervised similarity is measured against.

Its one setting (the ridge penalty, or the MLP's L2 weight) is chosen on a dev split by Pearson
correlation; the test split is never seen.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import pearsonr

from xlingua.similarity.cosine import normalize_rows

KINDS = ("ridge", "mlp")
GRID = {"ridge": (0.1, 1.0, 10.0, 100.0, 1000.0), "mlp": (1e-4, 1e-3, 1e-2, 1e-1)}


def pair_features(u: np.ndarray, v: np.ndarray, normalize: bool = True) -> np.ndarray:
    """(n, 4d) float32 rows [u, v, |u - v|, u * v] of u and v, L2-normalized first unless
    `normalize` is False."""
    if u.shape != v.shape:
        raise ValueError(f"pair_features needs equal shapes, got {u.shape} and {v.shape}")
    if normalize:
        u, v = normalize_rows(u), normalize_rows(v)
    return np.hstack([u, v, np.abs(u - v), u * v]).astype(np.float32)


@dataclass
class PairRegressor:
    kind: str
    setting: float
    model: object
    dev_pearson: dict[float, float] = field(default_factory=dict)  # every setting tried

    def predict(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.model.predict(pair_features(u, v))


def make_regressor(kind: str, setting: float, seed: int):
    """An unfitted scikit-learn ridge (L2 `setting`) or one-hidden-layer MLP (L2 weight `setting`)."""
    from sklearn.linear_model import Ridge
    from sklearn.neural_network import MLPRegressor

    if kind == "ridge":
        return Ridge(alpha=setting)
    return MLPRegressor(hidden_layer_sizes=(256,), alpha=setting, early_stopping=True,
                        validation_fraction=0.1, max_iter=200, random_state=seed)


def fit_pair_regressor(train: tuple[np.ndarray, np.ndarray, np.ndarray],
                       dev: tuple[np.ndarray, np.ndarray, np.ndarray],
                       kind: str = "ridge", seed: int = 0) -> PairRegressor:
    """Fit on train (u, v, gold) once per setting of GRID[kind]; keep the setting with the
    highest dev Pearson (the smallest on ties)."""
    if kind not in KINDS:
        raise ValueError(f"unknown regressor {kind!r}; choose from {KINDS}")
    x_train, y_train = pair_features(train[0], train[1]), np.asarray(train[2], dtype=np.float64)
    x_dev, y_dev = pair_features(dev[0], dev[1]), np.asarray(dev[2], dtype=np.float64)
    best, tried = None, {}
    for setting in GRID[kind]:
        model = make_regressor(kind, setting, seed).fit(x_train, y_train)
        r = float(pearsonr(model.predict(x_dev), y_dev).statistic)
        tried[setting] = r
        if best is None or r > tried[best[0]]:
            best = (setting, model)
    return PairRegressor(kind, best[0], best[1], tried)
