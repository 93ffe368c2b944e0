"""The shipping format of a trained LASER encoder: a directory holding encoder.pt, its vocabulary
(spm.model, or static.json and pieces.safetensors)
and manifest.json (xlingua.encoders.manifest: checksums, sizes, fingerprint, probe vectors,
where the model came from). Loading a shipped directory checks the files first.

A student trained with its embedding frozen at a packaged static encoder's vectors (`--init
static-small --freeze-embedding`) ships without those rows (200k x 256 floats, most of its
size): encoder.pt keeps the BiLSTM, the four special rows, the scale and the static encoder's
fingerprint (encoders.laser.STATIC_EMBEDDING), checked when the rows are rebuilt on load.

A shipped directory loads with `load_encoder("laser:DIR")`; no model package ships a BiLSTM.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import torch

from xlingua.encoders.laser import STATIC_EMBEDDING, static_rows
from xlingua.encoders.manifest import FORMAT, MANIFEST, PROBES, file_records, probe_record
from xlingua.encoders.model_packages import model_dir
from xlingua.io import atomic_dir, write_json


def static_reference(enc, train_config: dict) -> dict | None:
    """What encoder.pt keeps instead of its embedding when the rows 4.. are still exactly the
    packaged static encoder's (trained frozen from it); None otherwise."""
    from xlingua.encoders.static import PACKAGED, StaticEncoder

    name = train_config.get("init")
    if not train_config.get("freeze_embedding") or name not in PACKAGED:
        return None
    static = StaticEncoder(model_dir(name, "`xlingua static ship`"), name=name)
    rows, scale = static_rows(static)
    weight = enc.net.embed.weight.detach()
    if weight.shape[0] != rows.shape[0] + 4 or not torch.equal(weight[4:], rows):
        return None
    return {"static": name, "fingerprint": static.fingerprint(), "scale": scale, "special": weight[:4].clone()}


def ship(source: str | os.PathLike, out: str | os.PathLike, info: dict | None = None) -> dict:
    """Write `source` (a LASER run directory or one of its encoder_stepN.pt snapshots) to `out`
    in the shipping format; `out` appears complete or not at all."""
    from xlingua.encoders.laser import LaserEncoder

    enc = LaserEncoder(str(source))
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; remove it or choose another --out")
    log_path = enc.path / "train_log.json"
    log = json.loads(log_path.read_text(encoding="utf-8")) if log_path.exists() else {}
    with atomic_dir(out, replace=False) as tmp:
        reference = static_reference(enc, log.get("train_config") or {})
        if reference is None:
            shutil.copyfile(enc.weights, tmp / "encoder.pt")
        else:
            blob = torch.load(enc.weights, map_location="cpu", weights_only=True)
            state = {k: v for k, v in blob["state"].items() if k != "embed.weight"}
            torch.save({**blob, "state": state, STATIC_EMBEDDING: reference}, tmp / "encoder.pt")
        for name in enc.vocab_files:
            shutil.copyfile(enc.path / name, tmp / name)
        shipped = LaserEncoder(str(tmp))
        vectors = shipped.encode(list(PROBES))
        if not np.array_equal(vectors, enc.encode(list(PROBES))):
            raise RuntimeError(f"{out}: the shipped encoder does not reproduce {source}'s vectors")
        manifest = {
            "format": FORMAT,
            **file_records(tmp, ("encoder.pt", *enc.vocab_files)),
            "fingerprint": shipped.fingerprint(),
            "dim": shipped.dim,
            "config": shipped.config.to_dict(),
            "probes": probe_record(vectors),
            "source": {"weights": enc.weights.name, **(info or {})},
        }
        if reference is not None:
            manifest["source"]["embedding"] = f"{reference['static']} {reference['fingerprint']}"
        if log:
            manifest["source"]["train_config"] = log.get("train_config")
            manifest["source"]["teacher"] = log.get("teacher")
            manifest["source"]["steps"] = log.get("steps")
            manifest["source"]["train_seconds"] = log.get("train_seconds")
            per_lang = log.get("data", {}).get("pairs_per_language") if isinstance(log.get("data"), dict) else None
            manifest["source"]["languages"] = sorted(per_lang) if per_lang else None
        write_json(tmp / MANIFEST, manifest)
    return manifest
