"""The shipping format of a QE model: qe.safetensors and qe.json (xlingua.similarity.qe_head)
with manifest.json (checksums, sizes, the base encoder's fingerprint, and the scores of a few
probe pairs, so a copy can be checked to give the recorded outputs).

A cross-encoder QE (xlingua.qe.blend) ships as its transformer, an overlay on e5-small in
transformer/ (xlingua.encoders.overlay), beside head.safetensors, cross.json, partner/ and
unseen/ (if it has one), all listed in the same manifest. A partner on an encoder of its own names
that encoder, which must be shipped too (e.g. xlingua-qe)."""
from __future__ import annotations

import os
from pathlib import Path

from xlingua.encoders.manifest import FORMAT, MANIFEST, file_records
from xlingua.io import atomic_dir, write_json
from xlingua.similarity.qe_head import QEModel

#: (pair, source, translation): a good, a wrong and a partial translation, and a pair outside training
PROBE_PAIRS = (
    ("en-de", "The committee approved the budget on Monday.", "Der Ausschuss hat den Haushalt am Montag gebilligt."),
    ("en-de", "The committee approved the budget on Monday.", "Der Hund schläft im Garten."),
    ("ro-en", "Guvernul a anunțat noi măsuri economice.", "The government announced."),
    ("fr-en", "Le chat dort sur le canapé.", "The cat sleeps on the sofa."),
)


def probe_scores(model, encoder) -> list[float]:
    out = []
    for pair, src, tgt in PROBE_PAIRS:
        u, v = encoder.encode([src]), encoder.encode([tgt])
        out.append(round(float(model.predict(u, v, [src], [tgt], pair)[0]), 6))
    return out


def ship(run: str | os.PathLike, out: str | os.PathLike, encoder=None) -> dict:
    """Write the model of a `xlingua qe train` run (RUN/model, or a model directory) to `out`,
    which appears complete or not at all."""
    from xlingua.encoders.loading import load_encoder

    from xlingua.qe.blend import is_cross

    run = Path(run)
    source = run / "model" if (run / "model").is_dir() else run
    if is_cross(source):
        return ship_cross(source, out, encoder)
    model = QEModel.load(source)
    encoder = encoder or load_encoder(model.base)
    if encoder.fingerprint() != model.fingerprint:
        raise ValueError(f"{source} was trained on vectors of {model.fingerprint}, but {model.base!r} "
                         f"now loads {encoder.fingerprint()}")
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; remove it or choose another --out")
    with atomic_dir(out, replace=False) as tmp:
        files = model.save(tmp)
        manifest = {"format": FORMAT, **file_records(tmp, files), "fingerprint": model.fingerprint,
                    "base": model.base,
                    "probe_pairs": {"pairs": [list(p) for p in PROBE_PAIRS],
                                    "scores": probe_scores(model, encoder)}}
        write_json(tmp / MANIFEST, manifest)
    return manifest


def ship_cross(source: Path, out: str | os.PathLike, encoder=None, base: Path | None = None) -> dict:
    """Write a cross-encoder QE directory (a `qe cross` run's best/, blended or not) to `out`,
    which appears complete or not at all; probe scores are those of the shipped (fp16 overlay)
    form in fp32, on the partner's encoder (or none, without a partner)."""
    import shutil

    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.overlay import ship_overlay
    from xlingua.qe.blend import PARTNER, UNSEEN, fp32_spec, load_cross
    from xlingua.qe.cross import CONFIG, HEAD

    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; remove it or choose another --out")
    with atomic_dir(out, replace=False) as tmp:
        ship_overlay(source, tmp / "transformer", base)
        files = [HEAD, CONFIG]
        for name in files:
            shutil.copyfile(source / name, tmp / name)
        for sub in (PARTNER, UNSEEN):
            if (source / sub).is_dir():
                files += [f"{sub}/{name}" for name in QEModel.load(source / sub).save(_mkdir(tmp / sub))]
        shipped = load_cross(tmp, "fp32")  # the recorded scores do not depend on the CPU
        if shipped.fallback is not None and encoder is None:
            encoder = load_encoder(fp32_spec(shipped.base))  # recorded scores that any CPU can reproduce
        manifest = {"format": FORMAT, "kind": "cross-qe", **file_records(tmp, files),
                    "fingerprint": shipped.fingerprint, "base": shipped.base,
                    "probe_pairs": {"pairs": [list(p) for p in PROBE_PAIRS],
                                    "scores": probe_scores(shipped, _NoVectors() if encoder is None else encoder)}}
        write_json(tmp / MANIFEST, manifest)
        _forget_build(tmp)
    return manifest


def _forget_build(tmp: Path) -> None:
    """Remove the model directory built from the overlay under the temporary name (it would
    never be read again)."""
    import shutil

    from xlingua.paths import xlingua_home

    for built in (xlingua_home() / "models").glob(f"{tmp.name}.transformer-*"):
        shutil.rmtree(built, ignore_errors=True)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


class _NoVectors:
    """Stands in for an encoder where the QE model reads no sentence vectors."""

    def encode(self, texts):
        import numpy as np

        return np.zeros((len(texts), 1), np.float32)
