"""Shipping a chosen meaning model: the three MLPs only (model.pt, a few MB) and manifest.json
(xlingua.encoders.manifest: checksum, fingerprint, probe vectors, where it came from), written by
default to a source checkout's `src/xlingua/models/meaning-<BASE>/`, from which its model package
is built; installed, `load_encoder("BASE+meaning")` finds it. The manifest keeps the base it belongs to and the run's
selection (the signal, the epoch and its dev figures), so the shipped model says how it was chosen.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from xlingua.io import atomic_dir, write_json
from xlingua.encoders.manifest import FORMAT, MANIFEST, PROBES, sha256
from xlingua.encoders import model_packages


def default_out(base: str) -> Path:
    """models/meaning-BASE in a source checkout; elsewhere there is no default."""
    root = model_packages.source_models_dir()
    if root is None:
        raise ValueError("give --out: this xlingua is installed from a wheel, which has no models/ to ship into "
                         "(a source checkout has src/xlingua/models/)")
    return root / f"meaning-{base}"


def _chosen_epoch(file: Path, log: dict) -> int | None:
    m = re.fullmatch(r"model_epoch(\d+)\.pt", file.name)
    return int(m.group(1)) if m else log.get("best_epoch")


def ship(source, base: str, out=None) -> dict:
    """Write the meaning model `source` (a `xlingua meaning train` directory, its model.pt or a
    model_epochN.pt) trained on base spec `base` to `out` (default: a source
    checkout's models/meaning-BASE); `out` appears complete or not at all. Returns the manifest."""
    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.meaning import MeaningEncoder

    file = Path(source)
    if file.is_dir():
        file = file / "model.pt"
    if not file.is_file():
        raise FileNotFoundError(f"no meaning model at {source} (expected a run directory with model.pt, or the file)")
    out = Path(out) if out else default_out(base)
    if out.exists():
        raise FileExistsError(f"{out} exists; remove it or choose another --out")
    log_path = file.parent / "train_log.json"
    log = json.loads(log_path.read_text(encoding="utf-8")) if log_path.exists() else {}
    base_encoder = load_encoder(base)
    with atomic_dir(out, replace=False) as tmp:
        shutil.copyfile(file, tmp / "model.pt")
        shipped = MeaningEncoder(base_encoder, str(tmp), cache_base=False)
        vectors = shipped.encode(list(PROBES))
        epoch = _chosen_epoch(file, log)
        chosen = next((h for h in log.get("history", []) if h.get("epoch") == epoch), None)
        cfg = shipped.model.config
        manifest = {
            "format": FORMAT,
            "files": {"model.pt": sha256(tmp / "model.pt")},
            "fingerprint": shipped.fingerprint(),
            "dim": shipped.dim,
            "base": base,
            "base_encoder": base_encoder.name,
            "base_fingerprint": base_encoder.fingerprint(),
            "config": {"hidden": cfg.hidden, "langs": list(cfg.langs), "trained_on": cfg.base},
            "probes": {"texts": list(PROBES), "vectors": [[round(float(v), 7) for v in row] for row in vectors]},
            "source": {"weights": file.name, "epoch": epoch, "select_on": log.get("select_on"),
                       "dev_at_epoch": chosen, "data": log.get("data"), "train_config": log.get("config")},
        }
        write_json(tmp / MANIFEST, manifest)
    return manifest
