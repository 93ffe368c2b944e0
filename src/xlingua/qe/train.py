"""Fit QE heads on the sentence vectors of a base encoder (WMT20 MLQE-PE train z-scores), choose
the form on dev by the mean Pearson over language pairs, and check pairs never seen in training
by leaving each pair out in turn.

Candidates (each on the same vectors), beside unsupervised cosine (the floor):
- `per-pair-ridge`: a ridge per pair on pair features (the `qe` evaluation task's baseline);
- `ridge`: one ridge for every pair; `ridge+cos+len` with cosine and lengths added;
- `per-pair-ridge+cos+len`; `mlp+cos+len`: one MLP for every pair.
The best on dev is kept. A per-pair form also gets an `any` head of the same form, fitted on every
pair, for pairs without one. Held-out pairs: for each pair P, the `any` form is fitted without P
(its setting fixed to the chosen one) and scored on P's dev split beside cosine; if the mean over
held-out pairs is below cosine's, pairs outside training are scored by calibrated cosine.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from xlingua.data.benchmarks import MLQE_PAIRS
from xlingua.io import atomic_dir, write_json, write_text
from xlingua.qe.pairs import load_split, predict_split, read_pairs
from xlingua.similarity.cosine import paired_cosine
from xlingua.similarity.qe_head import ANY, Features, QEModel, Split, fit_qe_head, mean_pearson

#: name -> (per pair or one for all, regressor, features)
CANDIDATES = {
    "per-pair-ridge": (True, "ridge", Features(cosine=False, lengths=False)),
    "ridge": (False, "ridge", Features(cosine=False, lengths=False)),
    "ridge+cos+len": (False, "ridge", Features()),
    "per-pair-ridge+cos+len": (True, "ridge", Features()),
    "mlp+cos+len": (False, "mlp", Features()),
}


@dataclass
class QEConfig:
    base: str = "bundled"
    pairs: tuple[str, ...] = MLQE_PAIRS
    candidates: tuple[str, ...] = tuple(CANDIDATES)
    held_out: tuple[str, ...] = MLQE_PAIRS  # pairs left out in turn for the unseen-pair check
    train_rows: int = 0  # the first N train rows of each pair, 0 for all (dev is always whole)
    seed: int = 0

    def __post_init__(self):
        self.pairs, self.candidates, self.held_out = tuple(self.pairs), tuple(self.candidates), tuple(self.held_out)
        for name in self.candidates:
            if name not in CANDIDATES:
                raise ValueError(f"unknown candidate {name!r}; choose from {', '.join(CANDIDATES)}")
        for p in self.held_out:
            if p not in self.pairs:
                raise ValueError(f"held_out pair {p!r} is not among pairs {self.pairs}")


def _fit(per_pair: bool, kind: str, features: Features, train: Split, dev: Split, seed: int,
         grid=None) -> dict:
    """Heads of one candidate: {pair: head} per pair, or {ANY: head}."""
    if not per_pair:
        return {ANY: fit_qe_head(train, dev, kind, features, grid, seed)}
    return {p: fit_qe_head(train.only(lambda g, p=p: g == p), dev.only(lambda g, p=p: g == p),
                           kind, features, grid, seed) for p in dict.fromkeys(train.groups)}


def train(config: QEConfig, out: str | Path, encoder=None, data_dir=None, log=print) -> dict:
    """Write OUT/model (the chosen QEModel), OUT/report.json and OUT/report.md."""
    from xlingua.encoders.cache import CachedEncoder
    from xlingua.encoders.loading import load_encoder

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    encoder = encoder or CachedEncoder(load_encoder(config.base))
    t0 = time.time()
    tr = load_split(encoder, config.pairs, "train", config.train_rows, data_dir)
    dev = load_split(encoder, config.pairs, "dev", 0, data_dir)
    log(f"embedded {len(tr.gold):,} train and {len(dev.gold):,} dev pairs in {time.time() - t0:.0f} s")

    rows = {"cosine": mean_pearson(paired_cosine(dev.u, dev.v), dev.gold, dev.groups)}
    fitted = {}
    for name in config.candidates:
        per_pair, kind, features = CANDIDATES[name]
        t = time.time()
        fitted[name] = _fit(per_pair, kind, features, tr, dev, config.seed)
        rows[name] = mean_pearson(predict_split(QEModel(fitted[name], config.base, ""), dev), dev.gold, dev.groups)
        log(f"{name}: dev {rows[name][0]:.4f} ({time.time() - t:.0f} s)")
    chosen = max(config.candidates, key=lambda n: rows[n][0])
    per_pair, kind, features = CANDIDATES[chosen]
    heads = dict(fitted[chosen])
    if per_pair:
        heads[ANY] = fit_qe_head(tr, dev, kind, features, None, config.seed)
    any_setting = heads[ANY].setting

    held = {}
    for p in config.held_out:
        rest_tr, rest_dev = tr.only(lambda g: g != p), dev.only(lambda g: g != p)
        own = dev.only(lambda g: g == p)
        head = fit_qe_head(rest_tr, rest_dev, kind, features, (any_setting,), config.seed)
        pred = head.predict(own.u, own.v, own.src, own.tgt)
        held[p] = {"head": mean_pearson(pred, own.gold, own.groups)[0],
                   "cosine": mean_pearson(paired_cosine(own.u, own.v), own.gold, own.groups)[0]}
        log(f"held out {p}: head {held[p]['head']:.4f}, cosine {held[p]['cosine']:.4f}")
    head_mean = float(np.mean([h["head"] for h in held.values()])) if held else float("nan")
    cos_mean = float(np.mean([h["cosine"] for h in held.values()])) if held else float("nan")
    unseen = "head" if held and head_mean >= cos_mean else "cosine"
    cosine_fit = tuple(float(c) for c in np.polyfit(paired_cosine(dev.u, dev.v), dev.gold, 1))

    report = {"config": asdict(config), "chosen": chosen, "unseen": unseen,
              "dev": {n: {"mean": r[0], **r[1]} for n, r in rows.items()},
              "held_out": held, "held_out_mean": {"head": head_mean, "cosine": cos_mean},
              "train_pairs": len(tr.gold), "dev_pairs": len(dev.gold), "minutes": (time.time() - t0) / 60}
    model = QEModel(heads, config.base, encoder.fingerprint(), unseen, cosine_fit,
                    {"pairs": list(config.pairs), "chosen": chosen, "dev": report["dev"][chosen],
                     "held_out": held})
    with atomic_dir(out / "model") as tmp:
        model.save(tmp)
    write_json(out / "report.json", report)
    write_text(out / "report.md", report_md(report))
    return report


def report_md(report: dict) -> str:
    pairs = list(report["config"]["pairs"])
    lines = ["| scorer (dev) | " + " | ".join(pairs) + " | mean |", "|---|" + "---:|" * (len(pairs) + 1)]
    for name, r in report["dev"].items():
        mark = " (chosen)" if name == report["chosen"] else ""
        lines.append(f"| {name}{mark} | " + " | ".join(f"{r[p]:.3f}" for p in pairs) + f" | {r['mean']:.3f} |")
    if report["held_out"]:
        lines += ["", "| held-out pair (dev) | head, trained without it | cosine |", "|---|---:|---:|"]
        lines += [f"| {p} | {h['head']:.3f} | {h['cosine']:.3f} |" for p, h in report["held_out"].items()]
        m = report["held_out_mean"]
        lines.append(f"| mean | {m['head']:.3f} | {m['cosine']:.3f} |")
        lines.append(f"\nPairs outside training are scored by: {report['unseen']}.")
    return "\n".join(lines) + "\n"


def evaluate(model_dir: str | Path, split: str = "test20", encoder=None, data_dir=None,
             limit: int = 0) -> dict:
    """Pearson per pair of the model's scores and of cosine on `split` (test20: read once, for a
    model chosen on dev). The model: a `qe train` run or its model/, a `qe cross` run's best/
    (blended or not), or a shipped copy of either."""
    from xlingua.encoders.cache import CachedEncoder
    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.manifest import verify
    from xlingua.qe.blend import is_cross, load_cross
    from xlingua.qe.load import check_vectors

    root = Path(model_dir)
    root = root / "model" if (root / "model").is_dir() else root
    verify(root)
    model = load_cross(root) if is_cross(root) else QEModel.load(root)
    pairs = model.info.get("pairs") or list(MLQE_PAIRS)
    if model.base is None:  # a cross-encoder alone reads no sentence vectors
        data = read_pairs(pairs, split, limit, data_dir)
        mean, per = mean_pearson(model.cross_scores(data.src, data.tgt), data.gold, data.groups)
        return {"split": split, "model": str(root), "qe": {"mean": mean, **per}}
    encoder = encoder or CachedEncoder(load_encoder(model.base))
    check_vectors(model, encoder, root)
    if getattr(model, "own_encoder", False):  # a blend whose heads read another encoder: cache its vectors too
        from xlingua.qe.blend import load_partner_encoder

        model.partner_encoder = CachedEncoder(load_partner_encoder(model.partner, model.precision))
    data = load_split(encoder, pairs, split, limit, data_dir)
    head = mean_pearson(predict_split(model, data), data.gold, data.groups)
    cos = mean_pearson(paired_cosine(data.u, data.v), data.gold, data.groups)
    return {"split": split, "model": str(root), "qe": {"mean": head[0], **head[1]},
            "cosine": {"mean": cos[0], **cos[1]}}
