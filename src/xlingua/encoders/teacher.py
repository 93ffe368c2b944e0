"""A frozen teacher's vectors, computed once and kept in the embedding cache
(xlingua.encoders.cache, keyed by the teacher's fingerprint and the text): every distillation run
with the same teacher, a transformer student or a LASER student, reads the same rows instead of
embedding the same text again."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np


class Teacher:
    """The teacher `spec` (or an already loaded `encoder`) behind the embedding cache: `vectors`
    embeds only the texts the cache lacks, so a training step can ask for its batch's rows."""

    def __init__(self, spec: str, cache_dir: str | Path | None = None, encoder=None):
        from xlingua.encoders.cache import CachedEncoder

        if encoder is None:
            from xlingua.encoders.loading import load_encoder

            encoder = load_encoder(spec)
        self.cached = CachedEncoder(encoder, cache_dir, chunk_size=2048)

    def vectors(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """(len(texts), dim) float32 L2-normalised rows."""
        vecs = self.cached.encode(list(texts), show_progress=show_progress)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.maximum(norms, 1e-12)


def teacher_vectors(spec: str, texts: Sequence[str], cache_dir: str | Path | None = None,
                    show_progress: bool = True, encoder=None) -> np.ndarray:
    """(len(texts), dim) float32 L2-normalised rows of `texts` by the teacher `spec` (or an
    already loaded `encoder`); texts never embedded before are embedded and stored."""
    return Teacher(spec, cache_dir, encoder).vectors(texts, show_progress)
