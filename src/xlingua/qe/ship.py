"""The shipping format of a QE model: qe.safetensors and qe.json (xlingua.similarity.qe_head)
with manifest.json (checksums, sizes, the base encoder's fingerprint, and the scores of a few
probe pairs, so a copy can be checked to give the recorded outputs)."""
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


def probe_scores(model: QEModel, encoder) -> list[float]:
    out = []
    for pair, src, tgt in PROBE_PAIRS:
        u, v = encoder.encode([src]), encoder.encode([tgt])
        out.append(round(float(model.predict(u, v, [src], [tgt], pair)[0]), 6))
    return out


def ship(run: str | os.PathLike, out: str | os.PathLike, encoder=None) -> dict:
    """Write the model of a `xlingua qe train` run (RUN/model, or a model directory) to `out`,
    which appears complete or not at all."""
    from xlingua.encoders.loading import load_encoder

    run = Path(run)
    source = run / "model" if (run / "model").is_dir() else run
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
