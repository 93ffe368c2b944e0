"""The manifest of a shipped model: `manifest.json` beside the model's files, recording each
file's SHA-256 and size, the encoder's fingerprint, a few probe sentences with their vectors,
and where the model came from. Loading a shipped directory checks the files first, so a
truncated or altered copy fails with one line naming the file instead of giving wrong vectors;
`check_probes` re-embeds the probes to show the vectors are the recorded ones.

Used by every shipped kind: LASER students (xlingua.laser.ship), meaning models
(xlingua.meaning.ship) and overlays on e5-small (xlingua.encoders.overlay). The models xlingua
ships are installed as model packages (xlingua.encoders.model_packages finds them).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from xlingua.encoders import model_packages
from xlingua.encoders.model_packages import MANIFEST  # noqa: F401  (imported from here too)

FORMAT = 1
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


def file_records(root: Path, names) -> dict:
    """{"files": name -> SHA-256, "sizes": name -> bytes} for the manifest."""
    root = Path(root)
    return {"files": {n: sha256(root / n) for n in names},
            "sizes": {n: (root / n).stat().st_size for n in names}}


def probe_record(vectors: np.ndarray, texts=PROBES) -> dict:
    return {"texts": list(texts), "vectors": [[round(float(v), 7) for v in row] for row in vectors]}


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
    sizes = manifest.get("sizes", {})
    for name, expected in manifest["files"].items():
        path = root / name
        if not path.exists():
            raise CorruptModelError(f"{path} is missing (listed in {root / MANIFEST})")
        size = path.stat().st_size
        if name in sizes and size != sizes[name]:
            raise CorruptModelError(f"{path} is truncated or altered: {size:,} bytes, {MANIFEST} says "
                                    f"{sizes[name]:,}; reinstall or ship the model again")
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


#: the kinds of OpenVINO's conversion directories (openvino.py names them KIND-MODEL-KEY): its
#: encoders append the directory's name to the model's fingerprint, which tells caches apart, while
#: the vectors stay the model's to within the engine's stated bound, as every other engine's do
OPENVINO_DIR, OV_INT8_DIR = "openvino", "ov-int8"
ENGINE_DIR_PREFIXES = (f"{OPENVINO_DIR}-", f"{OV_INT8_DIR}-")


#: what a model routed by language (encoders.routed) appends to its default model's fingerprint:
#: `DEFAULT|route:LANGS>STUDENT`
ROUTE_MARK = "|route:"


def model_fingerprint(fingerprint: str) -> str:
    """An encoder fingerprint without the conversion an engine appends (`...|openvino-MODEL-KEY`)
    and, for a model routed by language, without its route: every text outside the route (what a
    head or a meaning model was fitted on) embeds as the default model's."""
    fingerprint = fingerprint.partition(ROUTE_MARK)[0]
    head, sep, last = fingerprint.rpartition("|")
    return head if sep and last.startswith(ENGINE_DIR_PREFIXES) else fingerprint


def model_of(fingerprint: str) -> str:
    """The model an encoder fingerprint names, whatever its path: `xlingua-small:bf16|...` ->
    xlingua-small, and a model directory on an engine, `bf16:runs/x|...` -> runs/x."""
    from xlingua.encoders.engines import engines  # imported here: engine files import this module

    head = fingerprint.partition("|")[0]
    engine, sep, path = head.partition(":")
    if sep and engine in {e.name for e in engines()}:
        return path
    return engine


def reads_as(fingerprint: str) -> str | None:
    """The fingerprint of the shipped model that a model shipped on it with nothing but new
    pieces' rows (`xlingua extend --rows-only`, then `xlingua ship --on`) reads every other text
    as, exactly: its body and the original pieces' rows are that model's. None for any other model."""
    fingerprint = model_fingerprint(fingerprint)
    name = model_of(fingerprint)
    root = model_packages.installed().get(name) if name and "/" not in name else None
    manifest = read_manifest(root) if root else None
    if not manifest or not manifest.get("rows_from") or list(manifest.get("tensors", [])) != list(manifest["rows_from"]):
        return None
    head, _, rest = fingerprint.partition("|")
    opts = rest.rsplit("|", 2)[0]
    base = manifest["base"]
    return f"{manifest['base_model']}{head[len(name):]}|{opts}|{base['conversion']}|{base['sha256'][:16]}"


def same_vectors(a: str, b: str) -> bool:
    """Whether two encoder fingerprints give the same vectors for what one was fitted on: the same
    weights and pooling (`bundled` picks its path, torch, bf16, ct2 or OpenVINO, by CPU; those agree
    to within 1e-4, int8 to cosine 0.995), or a model that adds new pieces' rows alone to the other,
    or to a model that does (`reads_as`): it embeds every text without its new pieces as the other."""
    def key(fp: str):
        return model_of(fp), fp.partition("|")[2]

    def chain(fp: str) -> list:  # the model, the one it reads as, and so on down
        out = [key(fp)]
        while (fp := reads_as(fp)) is not None and len(out) < 16:
            out.append(key(fp))
        return out
    a, b = model_fingerprint(a), model_fingerprint(b)
    return a == b or bool(set(chain(a)) & set(chain(b)))
