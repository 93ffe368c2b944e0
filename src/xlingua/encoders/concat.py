"""Several encoders as one ("bundled,use"): each encoder's unit vectors side by side, scaled by
1/sqrt(#encoders), so the inner product of two rows is the mean of the encoders' cosines."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from xlingua.encoders import loading
from xlingua.encoders.base import Encoder
from xlingua.encoders.registry import register_spec


def concat_unit(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Rows of each part L2-normalized, concatenated, scaled by 1/sqrt(len(parts))."""
    units = [p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), 1e-12) for p in parts]
    return (np.concatenate(units, axis=1) / np.sqrt(len(parts))).astype(np.float32)


class ConcatEncoder(Encoder):
    normalized = True

    def __init__(self, encoders: Sequence[Encoder]):
        if len(encoders) < 2:
            raise ValueError("a combined encoder needs at least two encoders")
        self.encoders = list(encoders)
        self.dim = sum(e.dim for e in self.encoders)
        self.name = ",".join(e.name for e in self.encoders)

    def encode(self, texts, lang=None, batch_size=None, show_progress=False) -> np.ndarray:
        texts = list(texts)
        options = {} if batch_size is None else {"batch_size": batch_size}
        return concat_unit([e.encode(texts, lang=lang, show_progress=show_progress, **options)
                            for e in self.encoders])

    def _encode_batch(self, texts, lang):
        return self.encode(texts, lang)

    def fingerprint(self) -> str:
        return ",".join(e.fingerprint() for e in self.encoders)


@register_spec("A,B", "several encoders as one: unit vectors side by side, so a dot product is the mean of "
               "their cosines (e.g. bundled,use)")
def _concat(first: str, rest: str, **options) -> ConcatEncoder:
    return ConcatEncoder([loading.load_encoder(part, **options) for part in [first, *rest.split(",")]])
