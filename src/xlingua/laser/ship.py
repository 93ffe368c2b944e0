"""The shipping format of a trained LASER encoder: a directory holding encoder.pt, spm.model
and manifest.json. The manifest records each file's SHA-256, the encoder's fingerprint, a few
probe sentences with their vectors, and where the model came from. Loading a shipped directory
checks the checksums first, so a truncated or altered copy fails with one clear line instead of
producing wrong vectors; `check_probes` re-embeds the probes to show the vectors are the recorded ones.

Encoders shipped inside the package live in `xlingua/models/<name>/` and load by name
(`load_encoder("laser-small")`).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from importlib import resources
from pathlib import Path

import numpy as np

from xlingua.io import atomic_dir, write_json

MANIFEST = "manifest.json"
FORMAT = 1
FILES = ("encoder.pt", "spm.model")
# Probe sentences: several scripts, a short and a long one, English and not.
PROBES = ("The cat sleeps on the sofa.", "Die Katze schläft auf dem Sofa.", "猫在沙发上睡觉。",
          "Кошка спит на диване.", "ok", "Parliament adopted the resolution on the budget for next year "
          "after a long debate about agricultural subsidies.")


class CorruptModelError(ValueError):
    """A shipped model file does not match its manifest."""


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def models_root() -> Path:
    return Path(str(resources.files("xlingua"))) / "models"


def packaged_dir(name: str, build: str = "`xlingua laser ship`") -> Path:
    """The directory of a model shipped inside the package; `build` says how to make one."""
    path = models_root() / name
    if not (path / MANIFEST).exists():
        raise FileNotFoundError(f"{name} is not in this installation of xlingua (no {name}/{MANIFEST} in the "
                                f"package); build it with {build}")
    return path


def read_manifest(root: Path) -> dict | None:
    path = Path(root) / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptModelError(f"{path}: not a readable manifest ({e})") from None
    if manifest.get("format") != FORMAT:
        raise CorruptModelError(f"{path}: manifest format {manifest.get('format')!r}, this xlingua reads {FORMAT}")
    return manifest


def verify(root: Path) -> dict | None:
    """Check every file against the manifest (None when the directory has no manifest)."""
    root = Path(root)
    manifest = read_manifest(root)
    if manifest is None:
        return None
    for name, expected in manifest["files"].items():
        path = root / name
        if not path.exists():
            raise CorruptModelError(f"{path} is missing (listed in {root / MANIFEST})")
        got = sha256(path)
        if got != expected:
            raise CorruptModelError(f"{path} is corrupted or altered: sha256 {got[:16]}... does not match "
                                    f"{expected[:16]}... in {MANIFEST}; reinstall or ship the model again")
    return manifest


def check_probes(encoder, manifest: dict, atol: float = 1e-4) -> float:
    """Re-embed the manifest's probe sentences; return the largest difference to the recorded
    vectors, raising CorruptModelError above `atol`."""
    probe = manifest["probes"]
    got = encoder.encode(probe["texts"])
    diff = float(np.abs(got - np.asarray(probe["vectors"], dtype=np.float32)).max())
    if diff > atol:
        raise CorruptModelError(f"{encoder.name}: probe vectors differ from the recorded ones by {diff:.2g} "
                                f"(tolerance {atol:g})")
    return diff


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
        shutil.copyfile(enc.path / "spm.model", tmp / "spm.model")
        shipped = LaserEncoder(str(tmp))
        vectors = shipped.encode(list(PROBES))
        log_path = enc.path / "train_log.json"
        manifest = {
            "format": FORMAT,
            "files": {name: sha256(tmp / name) for name in FILES},
            "fingerprint": shipped.fingerprint(),
            "dim": shipped.dim,
            "config": shipped.config.to_dict(),
            "probes": {"texts": list(PROBES), "vectors": [[round(float(v), 7) for v in row] for row in vectors]},
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
