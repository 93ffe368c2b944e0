"""A tiny deterministic encoder: hashed bag of character n-grams.

No model, no randomness: similar strings get similar vectors, so mining a toy corpus has a
known answer. Used by the tests and handy as a near-duplicate baseline."""
from __future__ import annotations

import hashlib

import numpy as np

from xlingua.encoders.base import Encoder


class CharNgramEncoder(Encoder):
    normalized = True

    def __init__(self, dim: int = 64, n: int = 3):
        self.dim = dim
        self.n = n
        self.name = f"char{n}gram-{dim}"

    def _encode_batch(self, texts: list[str], lang: str | None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f" {text.lower()} "
            for i in range(max(len(padded) - self.n + 1, 1)):
                gram = padded[i : i + self.n].encode("utf-8")
                h = int.from_bytes(hashlib.blake2b(gram, digest_size=4).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 31) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def fingerprint(self) -> str:
        return self.name
