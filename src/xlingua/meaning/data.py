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


def read_xnli_dev_pairs(langs: list[str] | None = None, data_dir=None) -> Pairs:
    """XNLI **dev** as parallel data: line i of `dev-xx.tsv` is the translation of line i of
    `dev-en.tsv`, so each premise and each hypothesis gives an (xx, English) pair. Premises
    repeat (one per hypothesis) and are kept once per language. Dev only: the XNLI test files
    are an evaluation set."""
    from xlingua.data.nli import XNLI_LANGS, read_xnli_langs

    langs = list(langs or [lang for lang in XNLI_LANGS if lang != "en"])
    data = read_xnli_langs(["en", *langs], "dev", data_dir)  # checks the files are line-aligned
    en = data["en"]
    src, tgt, out_langs = [], [], []
    for lang in langs:
        xx = data[lang]
        seen = set()
        for a, b in zip(xx, en):
            for s, t in ((a.premise, b.premise), (a.hypothesis, b.hypothesis)):
                if (s, t) in seen or not s.strip() or not t.strip():
                    continue
                seen.add((s, t))
                src.append(s)
                tgt.append(t)
                out_langs.append(lang)
    return Pairs(src, tgt, out_langs)


EXTRA_SOURCES = {"xnli-dev": read_xnli_dev_pairs}


def read_extra(names: list[str], data_dir=None) -> Pairs:
    """Parallel pairs from other (non-test) sources by name: `xnli-dev` (all 14 languages with
    English) or `xnli-dev:de+zh+hi` (those languages only)."""
    src, tgt, out_langs = [], [], []
    for item in names:
        name, _, langs = item.partition(":")
        if name not in EXTRA_SOURCES:
            raise ValueError(f"unknown extra training data {name!r}; known: {sorted(EXTRA_SOURCES)}")
        kwargs = {"langs": [l for l in langs.split("+") if l]} if langs else {}
        p = EXTRA_SOURCES[name](data_dir=data_dir, **kwargs)
        src += p.src
        tgt += p.tgt
        out_langs += p.langs
    return Pairs(src, tgt, out_langs)
