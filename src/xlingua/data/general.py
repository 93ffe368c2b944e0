"""The general-domain parallel corpus in ../shared/corpora/general (news and Wikipedia):
`<source>/<xx>-en.tsv.gz`, one `non_english<TAB>english` pair a line (see its README).

Dev slices are held out by *English sentence*, all chosen by one rule (`dev_slice`: a seeded
choice among a reference file's distinct English sentences):
- DEV_SENTENCES English sentences of NTREX (the same 1,997 English sentences translated into
  128 languages); the dev split of an NTREX language is its pairs of those sentences;
- SEED_DEV_SENTENCES English sentences of NLLB-Seed (every file there translates the same
  English side); the dev split of an NLLB-Seed language is its pairs of those sentences;
- a user's own pair file (`read_own_pairs`) holds out its own slice the same way.
Every pair whose English side is held, in any language and any source, leaves the training
split (one translation per English sentence stays in dev), so a dev figure never rests on an
English sentence seen in training.

`general_mining_set` hides a language's dev pairs among sentences of the train split whose
translations are not on the other side: a dev mining set, harder than retrieval among the dev
pairs alone.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlingua.data.benchmarks import BenchmarkFormatError, require
from xlingua.data.text import InputError, read_lines, two_columns
from xlingua.paths import corpora_dir

SOURCES = ("ntrex", "newstest", "mlqe-pe", "flores-v1", "nllb-seed")
# 20 dev languages: many scripts and families, high and low resource, the six QE pairs' languages.
DEV_LANGS = ("ar", "de", "el", "es", "et", "fi", "fr", "hi", "ja", "ko",
             "ne", "ro", "ru", "si", "sw", "ta", "th", "tr", "vi", "zh")
DEV_SENTENCES = 200
DEV_SEED = 20
# NLLB-Seed's slice comes from one file holding every English sentence of the source
SEED_REFERENCE = "bho"
SEED_DEV_SENTENCES = 500
SEED_DEV_SEED = 21
# a user's pair file: up to 500 English sentences, at most a fifth of the file's
OWN_DEV_SENTENCES = 500
OWN_DEV_SEED = 22
# the train sources a mining set's distractors come from (not NLLB-Seed)
MINING_SOURCES = ("ntrex", "newstest", "flores-v1", "mlqe-pe")


@dataclass(frozen=True)
class Pair:
    lang: str
    text: str      # the non-English side
    english: str
    source: str


def general_root(root=None) -> Path:
    return Path(root) if root else corpora_dir() / "general"


def read_file(path: Path, lang: str, source: str) -> list[Pair]:
    """One `xx-en.tsv.gz` file; a malformed line raises naming file:line."""
    out = []
    for line in read_lines(path, max_chars=None):
        text, english = two_columns(line, "`non_english<TAB>english`", BenchmarkFormatError)
        out.append(Pair(lang, text, english, source))
    return out


def available(root=None, sources=SOURCES) -> dict[str, list[str]]:
    """{source: [languages]} present on disk."""
    base = require(general_root(root), "general corpus directory")
    return {s: sorted(p.name[: -len("-en.tsv.gz")] for p in (base / s).glob("*-en.tsv.gz"))
            for s in sources if (base / s).is_dir()}


def dev_slice(english, size: int, seed: int) -> set[str]:
    """`size` of the distinct sentences in `english` (all when fewer), chosen by `seed` from
    their sorted order: the rule every dev slice follows."""
    pool = sorted(set(english))
    if len(pool) <= size:
        return set(pool)
    return {pool[i] for i in np.random.default_rng(seed).choice(len(pool), size, replace=False)}


def ntrex_dev_english(root=None) -> set[str]:
    pairs = read_file(require(general_root(root) / "ntrex" / "de-en.tsv.gz", "NTREX de-en file"), "de", "ntrex")
    return dev_slice((p.english for p in pairs), DEV_SENTENCES, DEV_SEED)


def seed_dev_english(root=None) -> set[str]:
    """NLLB-Seed's held-out English sentences; none when the corpus lacks its reference file."""
    path = general_root(root) / "nllb-seed" / f"{SEED_REFERENCE}-en.tsv.gz"
    if not path.exists():
        return set()
    return dev_slice((p.english for p in read_file(path, SEED_REFERENCE, "nllb-seed")), SEED_DEV_SENTENCES, SEED_DEV_SEED)


def own_dev_english(pairs: list[Pair]) -> set[str]:
    """The dev slice of a user's own pairs: up to OWN_DEV_SENTENCES, at most a fifth."""
    english = {p.english for p in pairs}
    return dev_slice(english, min(OWN_DEV_SENTENCES, len(english) // 5), OWN_DEV_SEED)


def dev_english(root=None, pair_files=()) -> set[str]:
    """Every held-out English sentence: NTREX's and NLLB-Seed's slices, and those of the
    user's pair files in `pair_files` ({lang: path} or paths)."""
    held = ntrex_dev_english(root) | seed_dev_english(root)
    for path in pair_files.values() if isinstance(pair_files, dict) else pair_files:
        held |= own_dev_english(read_file(Path(path), "", "own"))
    return held


def read_own_pairs(path, lang: str, split: str = "train", root=None) -> list[Pair]:
    """A user's `xx<TAB>en` file as pairs of `lang`: its dev slice (one pair per held English
    sentence), or the rest without any English sentence the general corpus holds out
    (when the corpus is there). A malformed line raises naming file:line."""
    if split not in ("train", "dev"):
        raise ValueError(f"split must be train or dev, got {split!r}")
    pairs = read_file(Path(path), lang, "own")
    if not pairs:
        raise InputError(f"{path}: no pairs; the file is empty")
    own = own_dev_english(pairs)
    if split == "dev":
        return _one_per_english(pairs, own)
    held = own | (dev_english(root) if general_root(root).is_dir() else set())
    return [p for p in pairs if p.english not in held]


def dev_langs(root=None) -> dict[str, str]:
    """{language: source of its dev split}: NLLB-Seed where it has a slice, else NTREX."""
    have = available(root, ["ntrex", "nllb-seed"])
    out = {lang: "ntrex" for lang in have.get("ntrex", [])}
    if seed_dev_english(root):
        out.update({lang: "nllb-seed" for lang in have.get("nllb-seed", [])})
    return out


def _one_per_english(pairs: list[Pair], held: set[str]) -> list[Pair]:
    seen, out = set(), []
    for p in pairs:
        if p.english in held and p.english not in seen:
            seen.add(p.english)
            out.append(p)
    return out


def read_general(langs=None, sources=SOURCES, split: str = "train", root=None, pair_files=()) -> list[Pair]:
    """Pairs of the chosen languages (None = all) and sources, `split` "train" or "dev". The
    dev split of a language comes from NLLB-Seed's slice where it has one, else from NTREX's
    (None = DEV_LANGS); `sources` limits the train split only. `pair_files` ({lang: path} or
    paths): users' own pair files whose dev slices leave the train split too."""
    if split not in ("train", "dev"):
        raise ValueError(f"split must be train or dev, got {split!r}")
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise ValueError(f"unknown general-corpus source(s) {sorted(unknown)}; known: {list(SOURCES)}")
    if split == "dev":
        where = dev_langs(root)
        wanted = [l for l in DEV_LANGS if l in where] if langs is None else list(langs)
        bad = [l for l in wanted if l not in where]
        if bad:
            raise ValueError(f"no general-corpus dev slice for {bad}: dev slices exist for the NTREX and "
                             f"NLLB-Seed languages ({len(where)} here)")
        held = {"ntrex": ntrex_dev_english(root), "nllb-seed": seed_dev_english(root)}
        return [p for lang in wanted
                for p in _one_per_english(read_file(general_root(root) / where[lang] / f"{lang}-en.tsv.gz",
                                                    lang, where[lang]), held[where[lang]])]
    held = dev_english(root, pair_files)
    have = available(root, sources)
    if langs is not None:
        missing = set(langs) - {l for ls in have.values() for l in ls}
        if missing:
            raise ValueError(f"no general-corpus file for language(s) {sorted(missing)} in sources {list(sources)}")
    out = []
    for source, source_langs in have.items():
        for lang in source_langs:
            if langs is None or lang in langs:
                path = general_root(root) / source / f"{lang}-en.tsv.gz"
                out.extend(p for p in read_file(path, lang, source) if p.english not in held)
    return out


def general_mining_set(lang: str, distractors: int, seed: int = 0, root=None,
                       limit: int | None = None) -> tuple[list[str], list[str], set[tuple[int, int]]]:
    """(sentences, English sentences, gold {(row, row)}): a mining set of `lang` where dev
    retrieval is too easy. The dev slice's pairs (the first `limit`, None = all) hidden among
    `distractors` sentences of the language and 1.5x as many English ones from the train split,
    whose translations are not on the other side (the train pairs are split in two by their
    English sentence, one half giving each side); both sides shuffled by `seed`."""
    dev = read_general([lang], split="dev", root=root)[:limit]
    train = read_general([lang], sources=MINING_SOURCES, root=root)
    rng = random.Random(seed)
    english = sorted({p.english for p in train})
    rng.shuffle(english)
    half = set(english[: len(english) // 2])
    xx_pool = sorted({p.text for p in train if p.english in half})
    en_pool = [e for e in english if e not in half]
    src = [p.text for p in dev] + rng.sample(xx_pool, min(distractors, len(xx_pool)))
    tgt = [p.english for p in dev] + rng.sample(en_pool, min(int(1.5 * distractors), len(en_pool)))
    rs, rt = list(range(len(src))), list(range(len(tgt)))
    rng.shuffle(rs)
    rng.shuffle(rt)
    row_s = {i: r for r, i in enumerate(rs)}  # where each sentence went
    row_t = {j: r for r, j in enumerate(rt)}
    gold = {(row_s[i], row_t[i]) for i in range(len(dev))}
    return [src[i] for i in rs], [tgt[j] for j in rt], gold
