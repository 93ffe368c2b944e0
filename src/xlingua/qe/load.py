"""Which QE model `score --qe`, the server's /score and the Python API use: the shipped default
(qe-cross), one shipped by name (qe-small) or a directory, its files checked; and one line
saying what scored a language pair."""
from __future__ import annotations

import re
from pathlib import Path

from xlingua.encoders.manifest import model_of, same_vectors
from xlingua.qe.blend import CROSS, is_cross, load_cross
from xlingua.similarity.qe_head import ANY, QEModel

QE_DEFAULT = "qe-cross"  # the QE model `--qe` uses; qe-small (heads on sentence vectors only) ships too


def load_qe(path: str | None = None, encoder=None):
    """The shipped QE model (or one shipped by name, a `xlingua qe train` run's model, a `qe
    cross` run's best/ or a shipped copy at `path`), its files checked against its manifest;
    with `encoder`, refused unless its heads were trained on that encoder's vectors."""
    from xlingua.encoders.manifest import verify
    from xlingua.encoders.model_packages import model_dir

    if not path or (not Path(path).exists() and re.fullmatch(r"[\w.-]+", path)):
        # a shipped model by name, e.g. qe-small (a bare name that is no directory here)
        root = model_dir(path or QE_DEFAULT, "`xlingua qe train`, then `xlingua qe ship`, or give its directory")
    else:
        root = Path(path)
    if root.is_dir() and (root / "model").is_dir():
        root = root / "model"
    verify(root)
    model = load_cross(root) if is_cross(root) else QEModel.load(root)
    if encoder is not None:
        check_vectors(model, encoder, root)
    return model


def check_vectors(model, encoder, root) -> None:
    """Refuse an encoder whose vectors are not those the heads were fitted on: another model, or
    the base's own name now loading other weights (a new default under `bundled`)."""
    if not model.fingerprint or same_vectors(encoder.fingerprint(), model.fingerprint):
        return
    if encoder.name.split(":")[0] == str(model.base).split(":")[0]:
        raise ValueError(f"the QE model at {root} was fitted on the vectors of {model_of(model.fingerprint)}, but "
                         f"{model.base!r} now loads {model_of(encoder.fingerprint())}; fit it again on these "
                         f"(xlingua qe train -o OUT --set base={model.base})")
    raise ValueError(f"the QE model at {root} reads the vectors of {model.base!r}; "
                     f"use --model {model.base} with --qe (got {encoder.name})")


def qe_route_text(model, pair: str | None) -> str:
    """One line saying what scores `pair` and why."""
    how = model.route(pair)
    trained = ", ".join(model.info.get("pairs", []))
    held = model.info.get("held_out", {})
    check = ""
    if held:
        head = sum(h["head"] for h in held.values()) / len(held)
        cos = sum(h["cosine"] for h in held.values()) / len(held)
        check = f" (on pairs held out of training, dev Pearson {head:.3f} for the head against {cos:.3f} for cosine)"
    if how == CROSS:
        blend = model.meta.get("blend") if model.partner else None
        on = f" on {model.partner.base}'s vectors" if model.own_encoder else ""
        mix = (f", averaged with the sentence-vector heads{on} (cross-encoder weight {blend['weight']:.2f})"
               if blend and blend["weight"] < 1 else "")
        return f"qe: {pair or 'the pair'} scored by the cross-encoder trained on {trained}{mix}"
    if how == "cosine":
        what = pair or "the pair (give --src-lang and --tgt-lang)"
        return (f"qe: {what} is not among the trained pairs ({trained}); scored by cosine mapped to "
                f"z-units, since the head does worse than cosine on pairs it never saw{check}")
    if how == ANY and pair not in model.info.get("pairs", []):
        what = pair or "the pair (not given: --src-lang, --tgt-lang)"
        return f"qe: {what} is not among the trained pairs ({trained}); scored by the head trained on all of them{check}"
    if how == ANY:
        return f"qe: {pair} scored by the head trained on all the trained pairs ({trained})"
    return f"qe: {pair} scored by the head trained on it"
