"""Training pairs from the l10n corpus, and their base embeddings through the shared on-disk
embedding cache (xlingua.encoders.cache): the base encoder is frozen, so each text is embedded
once, by whichever process (training, benchmark, `xlingua eval`) gets to it first, and a killed
run resumes from the last committed chunk.
"""
from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlingua.data import benchmarks
from xlingua.encoders.cache import CachedEncoder
from xlingua.paths import corpora_dir


def embed_cached(encoder, texts: list[str], batch_size: int = 64, show_progress: bool = True,
                 lang: str | None = None) -> np.ndarray:
    """`encoder.encode(texts)`, reading and writing the shared embedding cache."""
    if not isinstance(encoder, CachedEncoder):
        encoder = CachedEncoder(encoder, chunk_size=256)
    return encoder.encode(list(texts), lang=lang, batch_size=batch_size, show_progress=show_progress)


@dataclass
class Pairs:
    """Parallel pairs (src in language `langs[i]`, tgt in English)."""
    src: list[str]
    tgt: list[str]
    langs: list[str]


def read_l10n(langs: list[str], pairs_per_lang: int, split: str = "train", seed: int = 0,
              root: str | os.PathLike | None = None) -> Pairs:
    """A seeded random sample of `pairs_per_lang` pairs of each `xx-en.{split}.tsv.gz`."""
    root = Path(root) if root else corpora_dir() / "l10n"
    src, tgt, out_langs = [], [], []
    for lang in langs:
        rows = list(zip(*benchmarks.read_l10n(lang, split, root)))
        rng = random.Random(f"{seed}-{lang}")
        if pairs_per_lang < len(rows):
            rows = rng.sample(rows, pairs_per_lang)
        for s, t in rows:
            src.append(s)
            tgt.append(t)
            out_langs.append(lang)
    return Pairs(src, tgt, out_langs)
