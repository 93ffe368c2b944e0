"""The general-domain parallel corpus in ../shared/corpora/general (news and Wikipedia):
`<source>/<xx>-en.tsv.gz`, one `non_english<TAB>english` pair a line (see its README).

A dev slice is held out by *English sentence*: DEV_SENTENCES English sentences of NTREX (the
same 1,997 English sentences translated into 128 languages) are chosen by a fixed seed, and
every pair whose English side is one of them, in any language and any source, leaves the
training split. The dev split is those sentences' NTREX pairs in DEV_LANGS (one translation
per English sentence), so a dev figure never rests on an English sentence seen in training.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlingua.data.benchmarks import BenchmarkFormatError, require
from xlingua.data.text import read_lines, two_columns
from xlingua.paths import corpora_dir

SOURCES = ("ntrex", "newstest", "mlqe-pe", "flores-v1", "nllb-seed")
# 20 dev languages: many scripts and families, high and low resource, the six QE pairs' languages.
DEV_LANGS = ("ar", "de", "el", "es", "et", "fi", "fr", "hi", "ja", "ko",
             "ne", "ro", "ru", "si", "sw", "ta", "th", "tr", "vi", "zh")
DEV_SENTENCES = 200
DEV_SEED = 20


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


def dev_english(root=None) -> set[str]:
    """The held-out English sentences (fixed by DEV_SEED)."""
    pairs = read_file(require(general_root(root) / "ntrex" / "de-en.tsv.gz", "NTREX de-en file"), "de", "ntrex")
    english = sorted({p.english for p in pairs})
    pick = np.random.default_rng(DEV_SEED).choice(len(english), DEV_SENTENCES, replace=False)
    return {english[i] for i in pick}


def read_general(langs=None, sources=SOURCES, split: str = "train", root=None) -> list[Pair]:
    """Pairs of the chosen languages (None = all) and sources, `split` "train" or "dev"."""
    if split not in ("train", "dev"):
        raise ValueError(f"split must be train or dev, got {split!r}")
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise ValueError(f"unknown general-corpus source(s) {sorted(unknown)}; known: {list(SOURCES)}")
    held = dev_english(root)
    if split == "dev":
        ntrex = set(available(root, ["ntrex"]).get("ntrex", []))
        if langs is None:
            wanted = [l for l in DEV_LANGS if l in ntrex]
        else:
            wanted = list(langs)
            bad = [l for l in wanted if l not in DEV_LANGS or l not in ntrex]
            if bad:
                raise ValueError(f"no general-corpus dev slice for {bad}; dev languages: {list(DEV_LANGS)}")
        out = []
        for lang in wanted:
            seen = set()
            for p in read_file(general_root(root) / "ntrex" / f"{lang}-en.tsv.gz", lang, "ntrex"):
                if p.english in held and p.english not in seen:
                    seen.add(p.english)
                    out.append(p)
        return out
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
