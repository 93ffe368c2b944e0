"""A frozen teacher's vectors of the English side, computed once and kept in the embedding
cache (xlingua.encoders.cache, keyed by the teacher's fingerprint and the text): every
distillation run with the same teacher, a transformer student or a LASER student, reads the
same rows instead of embedding the English side again."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np


def teacher_vectors(spec: str, texts: Sequence[str], cache_dir: str | Path | None = None,
                    show_progress: bool = True, encoder=None) -> np.ndarray:
    """(len(texts), dim) float32 L2-normalised rows of `texts` by the teacher `spec` (or an
    already loaded `encoder`); texts never embedded before are embedded and stored."""
    from xlingua.encoders.cache import CachedEncoder

    if encoder is None:
        from xlingua.encoders.loading import load_encoder

        encoder = load_encoder(spec)
    cached = CachedEncoder(encoder, cache_dir, chunk_size=2048)
    vecs = cached.encode(list(texts), show_progress=show_progress)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.maximum(norms, 1e-12)
