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
        rows = list(zip(*benchmarks.read_l10n(lang, split, root, allow_empty=split == "dev")))
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
    rows = {lang: [(r.premise, r.hypothesis) for r in data[lang]] for lang in langs}
    return _pairs_of_aligned(rows, [(r.premise, r.hypothesis) for r in data["en"]])


def _pairs_of_aligned(rows: dict[str, list[tuple[str, str]]], en: list[tuple[str, str]]) -> Pairs:
    """(xx, English) pairs from line-aligned rows of sentences, each distinct pair once."""
    src, tgt, out_langs = [], [], []
    for lang, xx in rows.items():
        seen = set()
        for a, b in zip(xx, en):
            for s, t in zip(a, b):
                if (s, t) in seen or not s.strip() or not t.strip():
                    continue
                seen.add((s, t))
                src.append(s)
                tgt.append(t)
                out_langs.append(lang)
    return Pairs(src, tgt, out_langs)


def read_stsb_mt_train_pairs(langs: list[str] | None = None, data_dir=None) -> Pairs:
    """stsb_multi_mt **train** as parallel data: line i of `stsb-xx-train.csv` is the machine
    translation of line i of `stsb-en-train.csv` (both sentences), checked by the line's score.
    Train only: the dev split holds STS 2017 test sentences."""
    en = benchmarks.read_stsb_multi_mt("en", "train", data_dir)
    langs = list(langs or [l for l in benchmarks.stsb_multi_mt_langs(data_dir) if l != "en"])
    rows = {}
    for lang in langs:
        xx = benchmarks.read_stsb_multi_mt(lang, "train", data_dir)
        if len(xx.s1) != len(en.s1):
            raise benchmarks.BenchmarkFormatError(
                f"stsb-{lang}-train.csv has {len(xx.s1)} rows, stsb-en-train.csv {len(en.s1)}: not line-aligned")
        for line, (a, b) in enumerate(zip(xx.score, en.score), 1):
            if a != b:
                raise benchmarks.BenchmarkFormatError(
                    f"stsb-{lang}-train.csv:{line}: score {a} but stsb-en-train.csv:{line} has {b}: not line-aligned")
        rows[lang] = list(zip(xx.s1, xx.s2))
    return _pairs_of_aligned(rows, list(zip(en.s1, en.s2)))


def read_multi30k_train_pairs(langs: list[str] | None = None, data_dir=None) -> Pairs:
    """Multi30k **train** captions (cs, de, fr with English), line-aligned."""
    langs = list(langs or ["cs", "de", "fr"])
    data = benchmarks.read_multi30k_aligned(["en", *langs], "train", data_dir)
    return _pairs_of_aligned({lang: [(s,) for s in data[lang]] for lang in langs}, [(s,) for s in data["en"]])


EXTRA_SOURCES = {"xnli-dev": read_xnli_dev_pairs, "stsb-mt-train": read_stsb_mt_train_pairs,
                 "multi30k-train": read_multi30k_train_pairs}


def read_extra(names: list[str], data_dir=None) -> tuple[Pairs, int]:
    """Parallel pairs from other (non-test) sources by name (`xnli-dev`, `stsb-mt-train`,
    `multi30k-train`), optionally for some languages only (`xnli-dev:de+zh+hi`). Pairs with a
    side that is a sentence of an evaluation set are dropped; returns (pairs, number dropped)."""
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
    return drop_evaluation_sentences(Pairs(src, tgt, out_langs), data_dir)


def drop_evaluation_sentences(pairs: Pairs, data_dir=None) -> tuple[Pairs, int]:
    """`pairs` without those that have a side in `evaluation_sentences`; (kept, number dropped)."""
    held = benchmarks.evaluation_sentences(data_dir)
    keep = [i for i, (s, t) in enumerate(zip(pairs.src, pairs.tgt))
            if s.strip().lower() not in held and t.strip().lower() not in held]
    kept = Pairs([pairs.src[i] for i in keep], [pairs.tgt[i] for i in keep], [pairs.langs[i] for i in keep])
    return kept, len(pairs.src) - len(keep)


def read_general_pairs(sources: list[str], langs: list[str] | None = None, pairs_per_lang: int = 0,
                       seed: int = 0, root=None, data_dir=None) -> tuple[Pairs, dict, int]:
    """Training pairs of the general corpus (xlingua.data.general: its dev slice is held out)
    from `sources` (e.g. mlqe-pe, newstest, flores-v1, ntrex) and `langs` (None: all), at most
    `pairs_per_lang` of each source and language (0: all; a seeded sample otherwise), without
    evaluation sentences. Returns (pairs, {"source:lang": count}, number dropped)."""
    from xlingua.data.general import read_general

    rows = read_general(langs, sources=sources, split="train", root=root)
    groups: dict[str, list] = {}
    for p in rows:
        groups.setdefault(f"{p.source}:{p.lang}", []).append(p)
    src, tgt, out_langs, counts = [], [], [], {}
    for key in sorted(groups):
        group = groups[key]
        if 0 < pairs_per_lang < len(group):
            group = random.Random(f"{seed}-{key}").sample(group, pairs_per_lang)
        counts[key] = len(group)
        for p in group:
            src.append(p.text)
            tgt.append(p.english)
            out_langs.append(p.lang)
    pairs, dropped = drop_evaluation_sentences(Pairs(src, tgt, out_langs), data_dir)
    return pairs, counts, dropped
