"""The cross-encoder QE as `score --qe` uses it: on the language pairs it was trained on, its
calibrated score averaged with the heads of a QE model on sentence vectors (`xlingua qe train`'s,
the partner) by a weight chosen on dev; other pairs go to the unseen-pair model (default: the
partner), which scores pairs it never saw by calibrated cosine where its held-out check found
heads worse than cosine. The cross-encoder itself has not been checked on a pair outside its
training, so it is not trusted there.

A partner may read another encoder's vectors than the caller's (its heads on an encoder
fine-tuned for QE): it then embeds the pair itself. Such an encoder saw every trained pair, so
its own held-out check cannot say how it does on a new pair; an unseen-pair model on the
caller's vectors whose check can (qe-small) then takes those pairs.

A blended model is the cross-encoder's directory (best/ of a `qe cross` run, or a shipped copy)
with the partner's files in partner/, the unseen-pair model's in unseen/ (if not the partner),
and the weight, its dev figures and a final linear map onto the dev gold in cross.json's "blend".
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlingua.encoders.manifest import same_vectors
from xlingua.similarity.qe_head import QEModel, mean_pearson

PARTNER = "partner"
UNSEEN = "unseen"
#: weights of the cross-encoder tried on dev (0: the partner alone, 1: the cross-encoder alone)
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
CROSS = "cross"  # route name: scored by the (blended) cross-encoder


@dataclass
class CrossQE:
    """A cross-encoder scorer with its cross.json, and the partner QE model if it has one."""
    scorer: object  # xlingua.qe.cross.CrossScorer
    meta: dict
    partner: QEModel | None = None
    unseen: QEModel | None = None  # scores pairs outside training; None: the partner
    partner_encoder: object | None = None  # a partner on its own encoder: that encoder (loaded when first needed)
    precision: str = "fp32"  # the partner encoder's path: fp32 torch, or the fastest for "bf16"

    @property
    def pairs(self) -> list[str]:
        return list(self.meta["config"]["pairs"])

    @property
    def fallback(self) -> QEModel | None:
        """The model for pairs outside training."""
        return self.unseen or self.partner

    @property
    def base(self) -> str | None:
        """The encoder whose vectors the caller gives (None: any encoder will do)."""
        return self.fallback.base if self.fallback else None

    @property
    def fingerprint(self) -> str | None:
        return self.fallback.fingerprint if self.fallback else None

    @property
    def own_encoder(self) -> bool:
        """Whether the partner embeds the pair itself (its vectors are not the caller's)."""
        return self.unseen is not None and not same_vectors(self.partner.fingerprint, self.unseen.fingerprint)

    @property
    def info(self) -> dict:
        held = self.fallback.info.get("held_out", {}) if self.fallback else {}
        return {"pairs": self.pairs, "held_out": held, "kind": CROSS}

    def route(self, pair: str | None) -> str:
        if pair in self.pairs or self.fallback is None:
            return CROSS
        return self.fallback.route(pair)

    def partner_vectors(self, u, v, src: list[str], tgt: list[str], pair: str | None):
        """The vectors the partner reads: the caller's, or its own encoder's."""
        if not self.own_encoder:
            return u, v
        if self.partner_encoder is None:
            self.partner_encoder = load_partner_encoder(self.partner, self.precision)
        a, _, b = (pair or "").partition("-")
        return (self.partner_encoder.encode(list(src), lang=a or None),
                self.partner_encoder.encode(list(tgt), lang=b or None))

    def cross_scores(self, src: list[str], tgt: list[str]) -> np.ndarray:
        """The cross-encoder's scores mapped onto the dev gold (z-units)."""
        slope, offset = self.meta.get("calibration", (1.0, 0.0))
        return slope * self.scorer.predict(list(src), list(tgt)).astype(np.float64) + offset

    def predict(self, u: np.ndarray, v: np.ndarray, src: list[str], tgt: list[str],
                pair: str | None = None) -> np.ndarray:
        if self.route(pair) != CROSS:
            return self.fallback.predict(u, v, src, tgt, pair)
        cross = self.cross_scores(src, tgt)
        blend = self.meta.get("blend")
        if not blend or self.partner is None:
            return cross.astype(np.float32)
        w = blend["weight"]
        pu, pv = self.partner_vectors(u, v, src, tgt, pair)
        mixed = w * cross + (1 - w) * self.partner.predict(pu, pv, src, tgt, pair)
        return (blend["slope"] * mixed + blend["offset"]).astype(np.float32)


def is_cross(root) -> bool:
    from xlingua.qe.cross import CONFIG

    return (Path(root) / CONFIG).is_file()


def load_cross(root, precision: str | None = None) -> CrossQE:
    """A cross-encoder QE directory: a `qe cross` run's best/ or a shipped copy (whose transformer
    is an overlay on e5-small in transformer/). `precision` None: bf16 autocast where the CPU has
    bf16 units (as it was trained), else fp32."""
    from xlingua.encoders.cpu import native_bf16
    from xlingua.qe.cross import load_scorer

    root = Path(root)
    precision = precision or ("bf16" if native_bf16() else "fp32")
    scorer, meta = load_scorer(root, precision, model_dir=_transformer_dir(root))
    partner, unseen = (QEModel.load(root / d) if (root / d).is_dir() else None for d in (PARTNER, UNSEEN))
    return CrossQE(scorer, meta, partner, unseen, precision=precision)


def load_partner_encoder(partner: QEModel, precision: str = "fp32"):
    """The encoder a partner's heads read, on the fp32 torch path for "fp32" (a shipped name
    without a path), checked to give the vectors the heads were fitted on."""
    from xlingua.encoders.loading import load_encoder

    encoder = load_encoder(fp32_spec(partner.base) if precision == "fp32" else partner.base)
    if not same_vectors(encoder.fingerprint(), partner.fingerprint):
        raise ValueError(f"the QE heads read the vectors of {partner.fingerprint}, but {partner.base!r} "
                         f"now loads {encoder.fingerprint()}")
    return encoder


def fp32_spec(base: str) -> str:
    """A shipped name on its fp32 torch path (scores any CPU reproduces); other specs as given."""
    named = ":" not in base and not Path(base).exists()
    return f"{base}:torch" if named else base


def _transformer_dir(root: Path) -> Path:
    from xlingua.encoders.overlay import overlay_dir

    shipped = root / "transformer"
    return overlay_dir(shipped, name=f"{root.name}.transformer") if shipped.is_dir() else root


def fit_blend(root, partner: QEModel, encoder=None, data_dir=None, dev_rows: int = 0,
              log=print, unseen: QEModel | None = None) -> dict:
    """Choose the cross-encoder's weight against `partner` (its heads on `encoder`'s vectors,
    default its base) by mean dev Pearson over the pairs (the first best in WEIGHTS order), map
    the blend linearly onto the dev gold, and write the partner into ROOT/partner, `unseen` (the
    model for pairs outside training, if not the partner) into ROOT/unseen and the choice into
    cross.json. Returns the blend record."""
    from xlingua.encoders.cache import CachedEncoder
    from xlingua.encoders.loading import load_encoder
    from xlingua.io import atomic_dir, write_text
    from xlingua.qe.cross import CONFIG
    from xlingua.qe.pairs import load_split, predict_split

    root = Path(root)
    model = load_cross(root)
    encoder = encoder or CachedEncoder(load_encoder(partner.base))
    if not same_vectors(encoder.fingerprint(), partner.fingerprint):
        raise ValueError(f"the partner reads the vectors of {partner.fingerprint}, but {partner.base!r} "
                         f"now loads {encoder.fingerprint()}")
    dev = load_split(encoder, model.pairs, "dev", dev_rows, data_dir)
    cross = model.cross_scores(dev.src, dev.tgt)
    other = predict_split(partner, dev)
    tried = {w: mean_pearson(w * cross + (1 - w) * other, dev.gold, dev.groups) for w in WEIGHTS}
    best = max(WEIGHTS, key=lambda w: tried[w][0])
    mixed = best * cross + (1 - best) * other
    slope, offset = (float(c) for c in np.polyfit(mixed, dev.gold, 1))
    for w in WEIGHTS:
        log(f"cross-encoder weight {w:.2f}: dev {tried[w][0]:.4f}" + (" (chosen)" if w == best else ""))
    record = {"weight": best, "slope": slope, "offset": offset, "partner_base": partner.base,
              "unseen_base": (unseen or partner).base,
              "dev": {str(w): tried[w][0] for w in WEIGHTS},
              "dev_chosen": {"pearson": tried[best][0], **tried[best][1]}}
    with atomic_dir(root / PARTNER) as tmp:
        partner.save(tmp)
    if unseen is not None:
        with atomic_dir(root / UNSEEN) as tmp:
            unseen.save(tmp)
    elif (root / UNSEEN).is_dir():
        shutil.rmtree(root / UNSEEN)
    meta = json.loads((root / CONFIG).read_text(encoding="utf-8"))
    meta["blend"] = record
    write_text(root / CONFIG, json.dumps(meta, indent=1) + "\n")
    return record
