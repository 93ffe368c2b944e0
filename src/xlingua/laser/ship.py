"""The shipping format of a trained LASER encoder: a directory holding encoder.pt, its vocabulary
(spm.model, or static.json and pieces.safetensors)
and manifest.json (xlingua.encoders.manifest: checksums, sizes, fingerprint, probe vectors,
where the model came from). Loading a shipped directory checks the files first.

Encoders shipped inside the package live in `xlingua/models/<name>/` and load by name
(`load_encoder("laser-small")`).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from xlingua.encoders.manifest import FORMAT, MANIFEST, PROBES, file_records, probe_record
from xlingua.io import atomic_dir, write_json



def ship(source: str | os.PathLike, out: str | os.PathLike, info: dict | None = None) -> dict:
    """Write `source` (a LASER run directory or one of its encoder_stepN.pt snapshots) to `out`
    in the shipping format; `out` appears complete or not at all."""
    from xlingua.encoders.laser import LaserEncoder

    enc = LaserEncoder(str(source))
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; remove it or choose another --out")
    with atomic_dir(out, replace=False) as tmp:
        shutil.copyfile(enc.weights, tmp / "encoder.pt")
        for name in enc.vocab_files:
            shutil.copyfile(enc.path / name, tmp / name)
        shipped = LaserEncoder(str(tmp))
        vectors = shipped.encode(list(PROBES))
        log_path = enc.path / "train_log.json"
        manifest = {
            "format": FORMAT,
            **file_records(tmp, ("encoder.pt", *enc.vocab_files)),
            "fingerprint": shipped.fingerprint(),
            "dim": shipped.dim,
            "config": shipped.config.to_dict(),
            "probes": probe_record(vectors),
            "source": {"weights": enc.weights.name, **(info or {})},
        }
        if log_path.exists():
            log = json.loads(log_path.read_text(encoding="utf-8"))
            manifest["source"]["train_config"] = log.get("train_config")
            manifest["source"]["teacher"] = log.get("teacher")
            manifest["source"]["steps"] = log.get("steps")
            manifest["source"]["train_seconds"] = log.get("train_seconds")
            per_lang = log.get("data", {}).get("pairs_per_language") if isinstance(log.get("data"), dict) else None
            manifest["source"]["languages"] = sorted(per_lang) if per_lang else None
        write_json(tmp / MANIFEST, manifest)
    return manifest
