"""Training pairs from the l10n corpus and an on-disk cache of their base embeddings.

The base encoder is frozen, so its vectors are computed once. The cache is chunked (1,000
texts a file, keyed by the encoder fingerprint and the chunk's texts): a killed run resumes at
the first missing chunk, and any caller that embeds the same list hits the same files.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlingua.paths import corpora_dir, xlingua_home

CHUNK = 1000


def cache_dir() -> Path:
    path = xlingua_home() / "meaning" / "emb"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _chunk_key(fingerprint: str, texts: list[str]) -> str:
    h = hashlib.sha256(fingerprint.encode())
    for t in texts:
        h.update(b"\x00" + t.encode())
    return h.hexdigest()[:32]


def embed_cached(encoder, texts: list[str], batch_size: int = 64, show_progress: bool = True,
                 lang: str | None = None) -> np.ndarray:
    """`encoder.encode(texts)`, reading and writing 1,000-text chunks under the cache dir."""
    texts = list(texts)
    out = np.zeros((len(texts), encoder.dim), dtype=np.float32)
    fp = encoder.fingerprint()
    for start in range(0, len(texts), CHUNK):
        chunk = texts[start:start + CHUNK]
        path = cache_dir() / f"{_chunk_key(fp, chunk)}.npy"
        if path.exists():
            vecs = np.load(path)
        else:
            vecs = encoder.encode(chunk, lang=lang, batch_size=batch_size, show_progress=show_progress)
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, vecs)
            os.replace(tmp, path)
        out[start:start + len(chunk)] = vecs
    return out


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
        path = root / f"{lang}-en.{split}.tsv.gz"
        if not path.exists():
            raise FileNotFoundError(f"no l10n file for language {lang!r}: {path}")
        rows = []
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 2:
                    raise ValueError(f"{path}:{lineno}: expected 2 tab-separated fields, got {len(parts)}")
                rows.append(parts)
        rng = random.Random(f"{seed}-{lang}")
        if pairs_per_lang < len(rows):
            rows = rng.sample(rows, pairs_per_lang)
        for s, t in rows:
            src.append(s)
            tgt.append(t)
            out_langs.append(lang)
    return Pairs(src, tgt, out_langs)
