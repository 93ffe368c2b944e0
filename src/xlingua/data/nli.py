"""XNLI reading and the sentence-pair sets built from it.

Files: ../shared/benchmarks/xnli/{dev,test}-{lang}.tsv, `premise<TAB>hypothesis<TAB>label`,
2,490 dev / 5,010 test lines per language, all languages in the same pair order.

Training uses the *dev* split only (the test split is evaluation data). DuEAM (Goswami et al.
2021) trains on XNLI pairs without their labels in two settings:
- unsupervised: premise and hypothesis of the same XNLI item, one language each item
  (random among `langs`), so the pair is related to a random, unknown degree;
- weakly supervised (its Table 9): premise in one language and hypothesis in another, from the
  same item, for the given language pairs.
"""
from __future__ import annotations

import random

from xlingua.data.benchmarks import NLIPair, read_xnli_split

XNLI_LANGS = ("ar", "bg", "de", "el", "en", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh")


def read_xnli(lang: str, split: str = "dev", data_dir=None) -> list[NLIPair]:
    """All pairs of one XNLI file, in file order (one reader for training and evaluation:
    `xlingua.data.benchmarks.read_xnli_split`, which handles the test files' stray CRs)."""
    if split not in ("dev", "test"):
        raise ValueError(f"XNLI split must be dev or test, got {split!r}")
    return read_xnli_split(lang, split, data_dir)


def read_xnli_langs(langs, split: str = "dev", data_dir=None) -> dict[str, list[NLIPair]]:
    data = {lang: read_xnli(lang, split, data_dir) for lang in langs}
    sizes = {lang: len(v) for lang, v in data.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"XNLI {split} files are not line-aligned: {sizes}")
    return data


def dueam_unsupervised_pairs(langs, seed: int = 0, data_dir=None) -> list[tuple[str, str]]:
    """(premise, hypothesis) of each dev item in one randomly chosen language, no labels."""
    data = read_xnli_langs(langs, "dev", data_dir)
    rng = random.Random(seed)
    langs = list(langs)
    n = len(data[langs[0]])
    out = []
    for i in range(n):
        item = data[rng.choice(langs)][i]
        out.append((item.premise, item.hypothesis))
    return out


def dueam_weak_pairs(lang_pairs, data_dir=None) -> list[tuple[str, str]]:
    """(premise in a, hypothesis in b) for every dev item and every (a, b) in lang_pairs."""
    lang_pairs = [tuple(p.split("-")) if isinstance(p, str) else tuple(p) for p in lang_pairs]
    langs = sorted({lang for pair in lang_pairs for lang in pair})
    data = read_xnli_langs(langs, "dev", data_dir)
    out = []
    for a, b in lang_pairs:
        out.extend((pa.premise, pb.hypothesis) for pa, pb in zip(data[a], data[b]))
    return out
