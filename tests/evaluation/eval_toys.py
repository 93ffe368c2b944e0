"""Tiny deterministic encoders and benchmark files for the evaluation tests."""
from __future__ import annotations

import hashlib

import numpy as np

from xlingua.encoders.base import Encoder


class LookupEncoder(Encoder):
    """Vectors from a table (text -> vector); any other text gets a fixed pseudo-random
    vector from its hash. Counts how many texts it embedded."""

    normalized = False

    def __init__(self, table: dict[str, list[float]], dim: int, name: str = "lookup"):
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}
        self.dim = dim
        self.name = name
        self.calls = 0

    def _encode_batch(self, texts, lang):
        self.calls += len(texts)
        out = []
        for t in texts:
            if t in self.table:
                out.append(self.table[t])
            else:
                seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=4).digest(), "little")
                out.append(np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32))
        return np.stack(out)

    def fingerprint(self) -> str:
        return f"{self.name}-{self.dim}"


def one_hot(i: int, dim: int) -> list[float]:
    v = [0.0] * dim
    v[i] = 1.0
    return v
