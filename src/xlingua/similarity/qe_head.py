"""A trained quality-estimation head: a regressor from a (source, translation) pair's sentence
vectors to a human quality score, as supervised QE systems (TransQuest, COMET-QE) learn one
on the z-normalized direct assessments of WMT20 MLQE-PE (Specia et al. 2020).

Features are InferSent's pair features (u, v, |u-v|, u*v; Conneau et al. 2017), optionally with
the pair's cosine and the log character lengths of both sides (a translation much shorter or
longer than its source is a known sign of a dropped or hallucinated part). They are
standardized, then fed to a ridge regression or a one-hidden-layer MLP (scikit-learn fits it;
prediction is plain numpy on the exported weights, so a shipped head needs no pickle).

Settings are chosen on a dev split by the mean over language pairs of the Pearson correlation
(the WMT20 metric); the last step maps predictions linearly onto the dev gold scores, so a
score is in the gold's units (z-scores: 0 is an average translation, +1 one standard deviation
of a rater's judgements above it).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import pearsonr

from xlingua.similarity.cosine import paired_cosine
from xlingua.similarity.pair_regressor import make_regressor, pair_features

KINDS = ("ridge", "mlp")
GRID = {"ridge": (1.0, 10.0, 100.0, 1000.0, 10000.0), "mlp": (1e-3, 1e-2, 1e-1, 1.0)}


@dataclass(frozen=True)
class Features:
    cosine: bool = True
    lengths: bool = True

    def make(self, u: np.ndarray, v: np.ndarray, src: list[str], tgt: list[str]) -> np.ndarray:
        if not (len(u) == len(v) == len(src) == len(tgt)):
            raise ValueError(f"QE features need equal counts, got {len(u)}, {len(v)}, {len(src)}, {len(tgt)}")
        cols = [pair_features(u, v)]
        if self.cosine:
            cols.append(paired_cosine(u, v)[:, None])
        if self.lengths:
            a = np.log1p([len(t) for t in src])
            b = np.log1p([len(t) for t in tgt])
            cols.append(np.stack([a, b, a - b], 1))
        return np.hstack(cols).astype(np.float32)


@dataclass
class QEHead:
    """Standardize, regress, calibrate: predict(x) = slope * f((x - mean) / scale) + offset."""
    kind: str
    features: Features
    arrays: dict[str, np.ndarray]
    setting: float = 0.0
    slope: float = 1.0
    offset: float = 0.0
    dev: dict = field(default_factory=dict)  # dev Pearson of every setting tried

    def raw(self, x: np.ndarray) -> np.ndarray:
        a = self.arrays
        z = (x - a["mean"]) / a["scale"]
        if self.kind == "ridge":
            return z @ a["w"] + a["b"]
        hidden = np.maximum(z @ a["w1"] + a["b1"], 0.0)
        return hidden @ a["w2"] + a["b2"]

    def predict(self, u: np.ndarray, v: np.ndarray, src: list[str], tgt: list[str]) -> np.ndarray:
        x = self.features.make(u, v, src, tgt)
        return (self.slope * self.raw(x) + self.offset).astype(np.float32)


@dataclass
class Split:
    """Vectors, texts and gold scores of several language pairs; `groups` names each row's pair."""
    u: np.ndarray
    v: np.ndarray
    src: list[str]
    tgt: list[str]
    gold: np.ndarray
    groups: list[str]

    def only(self, keep) -> "Split":
        idx = np.array([i for i, g in enumerate(self.groups) if keep(g)], dtype=np.int64)
        return Split(self.u[idx], self.v[idx], [self.src[i] for i in idx], [self.tgt[i] for i in idx],
                     self.gold[idx], [self.groups[i] for i in idx])


def mean_pearson(pred: np.ndarray, gold: np.ndarray, groups: list[str]) -> tuple[float, dict[str, float]]:
    """The WMT20 figure: Pearson per language pair, then their mean."""
    per = {}
    g = np.asarray(groups)
    for name in dict.fromkeys(groups):
        rows = g == name
        per[name] = float(pearsonr(pred[rows], gold[rows]).statistic)
    return float(np.mean(list(per.values()))), per


def _export(kind: str, scaler, model) -> dict[str, np.ndarray]:
    arrays = {"mean": scaler.mean_.astype(np.float32), "scale": scaler.scale_.astype(np.float32)}
    if kind == "ridge":
        arrays.update(w=model.coef_.astype(np.float32), b=np.float32(model.intercept_).reshape(()))
    else:
        arrays.update(w1=model.coefs_[0].astype(np.float32), b1=model.intercepts_[0].astype(np.float32),
                      w2=model.coefs_[1][:, 0].astype(np.float32),
                      b2=np.float32(model.intercepts_[1][0]).reshape(()))
    return arrays


def fit_qe_head(train: Split, dev: Split, kind: str = "ridge", features: Features = Features(),
                grid=None, seed: int = 0) -> QEHead:
    """Fit once per setting of the grid on train; keep the setting with the highest mean dev
    Pearson (the first on ties); calibrate its predictions linearly on dev."""
    from sklearn.preprocessing import StandardScaler

    if kind not in KINDS:
        raise ValueError(f"unknown QE head {kind!r}; choose from {KINDS}")
    x_train = features.make(train.u, train.v, train.src, train.tgt)
    x_dev = features.make(dev.u, dev.v, dev.src, dev.tgt)
    scaler = StandardScaler().fit(x_train)
    scaler.scale_ = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)  # constant columns stay put
    best, tried = None, {}
    for setting in grid or GRID[kind]:
        model = make_regressor(kind, setting, seed).fit(scaler.transform(x_train), train.gold)
        head = QEHead(kind, features, _export(kind, scaler, model), float(setting))
        tried[float(setting)], _ = mean_pearson(head.raw(x_dev), dev.gold, dev.groups)
        if best is None or tried[float(setting)] > tried[best.setting]:
            best = head
    best.dev = tried
    raw = best.raw(x_dev)
    best.slope, best.offset = (float(c) for c in np.polyfit(raw, dev.gold, 1))
    return best


HEADS = "qe.safetensors"
CONFIG = "qe.json"
ANY = "any"  # the head trained on every pair, for pairs without their own


@dataclass
class QEModel:
    """The heads of one base encoder: one per trained language pair and/or `any`. For a pair
    with no head of its own, `unseen` says what scores it: the `any` head, or the pair's cosine
    mapped linearly to the gold's units (`cosine_fit`), where held-out pairs showed the head
    doing worse than cosine."""
    heads: dict[str, QEHead]
    base: str
    fingerprint: str
    unseen: str = "head"
    cosine_fit: tuple[float, float] = (1.0, 0.0)
    info: dict = field(default_factory=dict)

    def route(self, pair: str | None) -> str:
        """What scores `pair` ("src-tgt", or None when unknown): a head's name or "cosine"."""
        if pair in self.heads:
            return pair
        if ANY in self.heads and (pair in self.info.get("pairs", ()) or self.unseen == "head"):
            return ANY
        return "cosine"

    def predict(self, u: np.ndarray, v: np.ndarray, src: list[str], tgt: list[str],
                pair: str | None = None) -> np.ndarray:
        how = self.route(pair)
        if how == "cosine":
            slope, offset = self.cosine_fit
            return (slope * paired_cosine(u, v) + offset).astype(np.float32)
        return self.heads[how].predict(u, v, src, tgt)

    def save(self, root) -> list[str]:
        """Write qe.safetensors and qe.json into `root`; the file names written."""
        import json
        from pathlib import Path

        from safetensors.numpy import save_file

        root = Path(root)
        save_file({f"{name}.{k}": np.ascontiguousarray(a, dtype=np.float32)
                   for name, h in self.heads.items() for k, a in h.arrays.items()}, str(root / HEADS))
        config = {"base": self.base, "fingerprint": self.fingerprint, "unseen": self.unseen,
                  "cosine_fit": list(self.cosine_fit), "info": self.info,
                  "heads": {name: {"kind": h.kind, "setting": h.setting, "slope": h.slope,
                                   "offset": h.offset, "dev": h.dev,
                                   "features": {"cosine": h.features.cosine, "lengths": h.features.lengths}}
                            for name, h in self.heads.items()}}
        (root / CONFIG).write_text(json.dumps(config, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return [HEADS, CONFIG]

    @classmethod
    def load(cls, root) -> "QEModel":
        import json
        from pathlib import Path

        from safetensors.numpy import load_file

        root = Path(root)
        for name in (HEADS, CONFIG):
            if not (root / name).exists():
                raise FileNotFoundError(f"{root} is not a QE model: {name} is missing")
        config = json.loads((root / CONFIG).read_text(encoding="utf-8"))
        arrays = load_file(str(root / HEADS))
        heads = {}
        for name, h in config["heads"].items():
            mine = {k.split(".", 1)[1]: a for k, a in arrays.items() if k.split(".", 1)[0] == name}
            heads[name] = QEHead(h["kind"], Features(**h["features"]), mine, h["setting"], h["slope"],
                                 h["offset"], {float(k): v for k, v in h["dev"].items()})
        return cls(heads, config["base"], config["fingerprint"], config["unseen"],
                   tuple(config["cosine_fit"]), config.get("info", {}))
