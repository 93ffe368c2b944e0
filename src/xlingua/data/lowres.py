"""The low-resource parallel corpus in ../shared/corpora/lowres: `<source>/<code>-<pivot>.tsv.gz`,
one `non_pivot<TAB>pivot` pair a line, the pivot language (en or fr) named by the file, the code
possibly with a script subtag (`mni-Latn-en.tsv.gz`); see its README.

Dev slice of a language, over all its files (every source and pivot): k = min(DEV_PAIRS, n // 10)
of its n pairs, shared between its sources in proportion to their pairs (each source at least
one), so a language with Bible and news text has both in its slice. Within a source, pairs are
taken in the order of a salted hash of the pivot sentence, skipping one whose pivot or
non-pivot side is already in the slice. The order depends on the sentence alone: a language's
slice depends only on its own files, whatever other languages the corpus or a run has, and
languages that translate the same pivot sentences (the Bible languages' English verses) hold
out the same ones instead of each a different tenth.

Training never returns a dev pair, nor any pair whose pivot sentence is in some language's dev
slice (held out in every language, as the general corpus holds its dev English sentences), nor
a pair of the same language whose non-pivot side is a dev sentence.

Both sides are read in Unicode NFC: several files (the Kabyle, Ewe and Mossi Bibles, Tamajaq,
Ewe news, Fon) write a letter and its combining mark as two code points, the tokenizer does
not compose them, and typed text mostly comes composed. The corpus is in Latin script, where
NFC only composes (in Brahmic scripts it would decompose nukta letters: the general corpus is
read as it is).
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from xlingua.data.benchmarks import BenchmarkFormatError, require
from xlingua.data.text import InputError, read_lines, two_columns
from xlingua.paths import corpora_dir

BIBLE_SOURCES = ("bible", "ebible")
OTHER_SOURCES = ("mafand", "globalvoices", "hornmt", "salt", "kurdish-blark")
SOURCES = BIBLE_SOURCES + OTHER_SOURCES
# CC BY-NC(-SA): non-commercial use only
NON_COMMERCIAL = ("mafand", "kurdish-blark")
PIVOTS = ("en", "fr", "es")
DOMAINS = ("bible", "non-bible")
DEV_PAIRS = 500
DEV_SHARE = 10  # a slice is at most a tenth of its language's pairs
DEV_SALT = "lowres-dev-1"
SUFFIX = ".tsv.gz"
_NAME = re.compile(r"(?P<lang>[a-z]{2,3}(?:-[A-Z][a-z]{3})?)-(?P<pivot>[a-z]{2})")


@dataclass(frozen=True)
class Pair:
    lang: str        # the non-pivot language, e.g. "mni-Latn"
    text: str        # its side
    pivot: str       # the pivot side
    pivot_lang: str  # "en" or "fr", from the file name
    source: str      # the folder: bible, mafand, ...

    @property
    def domain(self) -> str:
        return domain(self.source)


def domain(source: str) -> str:
    return "bible" if source in BIBLE_SOURCES else "non-bible"


def lowres_root(root=None) -> Path:
    return Path(root) if root else corpora_dir() / "lowres"


def parse_name(path) -> tuple[str, str]:
    """(language, pivot) of `<code>-<pivot>.tsv.gz`; any other name raises naming the file."""
    name = Path(path).name
    m = _NAME.fullmatch(name[: -len(SUFFIX)]) if name.endswith(SUFFIX) else None
    if m is None or m["pivot"] not in PIVOTS:
        raise InputError(f"{path}: file name is not <code>-<pivot>{SUFFIX} with pivot {', '.join(PIVOTS)} "
                         f"(e.g. ee-fr{SUFFIX}, mni-Latn-en{SUFFIX})")
    return m["lang"], m["pivot"]


def corpus_files(root=None) -> list[tuple[str, Path]]:
    """(source, path) of every pair file, sources in SOURCES order; a folder that is not a known
    source (its domain would be unknown) or a misnamed file raises."""
    base = require(lowres_root(root), "low-resource corpus directory")
    unknown = sorted(p.name for p in base.iterdir() if p.is_dir() and p.name not in SOURCES)
    if unknown:
        raise ValueError(f"{base}: unknown source folder(s) {unknown}; known: {list(SOURCES)} "
                         "(a new source needs its domain in data.lowres)")
    out = []
    for source in SOURCES:
        for path in sorted((base / source).glob("*")) if (base / source).is_dir() else []:
            if not path.name.startswith("."):
                parse_name(path)
                out.append((source, path))
    return out


def read_file(path, source: str) -> list[Pair]:
    """One pair file, both sides in NFC; a line without exactly one tab or with an empty side
    raises naming file:line."""
    lang, pivot = parse_name(path)
    out = []
    for line in read_lines(path, max_chars=None):
        text, pivot_text = two_columns(line, "`non_pivot<TAB>pivot`", BenchmarkFormatError)
        out.append(Pair(lang, unicodedata.normalize("NFC", text), unicodedata.normalize("NFC", pivot_text),
                        pivot, source))
    return out


def read_corpus(root=None) -> dict[str, list[Pair]]:
    """{language: its pairs}, every source and pivot, in file order."""
    out: dict[str, list[Pair]] = {}
    for source, path in corpus_files(root):
        for p in read_file(path, source):
            out.setdefault(p.lang, []).append(p)
    return dict(sorted(out.items()))


def _rank(p: Pair) -> bytes:
    # the same for every language translating this pivot sentence
    return hashlib.blake2b(f"{DEV_SALT}\t{p.pivot_lang}\t{p.pivot}".encode(), digest_size=16).digest()


def quotas(sizes: dict[str, int], k: int) -> dict[str, int]:
    """`k` shared in proportion to `sizes` (largest remainder), each at least one where k allows."""
    n = sum(sizes.values())
    share = {s: k * m / n for s, m in sizes.items()}
    out = {s: int(v) for s, v in share.items()}
    for s in sorted(share, key=lambda s: (out[s] - share[s], s))[: k - sum(out.values())]:
        out[s] += 1
    for s in sorted(out):
        if out[s] == 0 and k >= len(out):
            out[max(out, key=lambda t: (out[t], t))] -= 1
            out[s] = 1
    return out


def dev_slice(pairs: list[Pair]) -> list[Pair]:
    """The dev slice of one language's pairs (the rule in the module docstring)."""
    k = min(DEV_PAIRS, len(pairs) // DEV_SHARE)
    by_source: dict[str, list[Pair]] = {}
    for p in pairs:
        by_source.setdefault(p.source, []).append(p)
    quota = quotas({s: len(ps) for s, ps in by_source.items()}, k)
    out, pivots, texts = [], set(), set()
    for source in sorted(by_source):
        taken = 0
        for p in sorted(by_source[source], key=_rank):
            if taken == quota[source]:
                break
            if (p.pivot_lang, p.pivot) not in pivots and p.text not in texts:
                pivots.add((p.pivot_lang, p.pivot))
                texts.add(p.text)
                out.append(p)
                taken += 1
    return out


def check_sources(sources) -> None:
    """Refuse a list of sources that names none, or one the corpus does not have."""
    unknown = sorted(set(sources) - set(SOURCES))
    if unknown or not sources:
        raise ValueError(f"unknown low-resource source(s) {unknown}; known: {', '.join(SOURCES)}")


def _check(corpus: dict[str, list[Pair]], langs, sources) -> list[str]:
    check_sources(sources)
    if langs is None:
        return list(corpus)
    missing = [l for l in langs if l not in corpus]
    if missing:
        raise ValueError(f"no low-resource corpus file for language(s) {missing}; it has {list(corpus)}")
    return list(dict.fromkeys(langs))


def read_lowres(langs=None, sources=SOURCES, split: str = "train", root=None) -> list[Pair]:
    """Pairs of the chosen languages (None = all) and sources, `split` "train" or "dev". `sources`
    limits the train split only: a dev slice is the language's whole slice."""
    if split not in ("train", "dev"):
        raise ValueError(f"split must be train or dev, got {split!r}")
    corpus = read_corpus(root)
    wanted = _check(corpus, langs, sources)
    dev = {lang: dev_slice(pairs) for lang, pairs in corpus.items()}
    if split == "dev":
        return [p for lang in wanted for p in dev[lang]]
    # held out over every language of the corpus, whichever a run reads
    held_pivots = {(p.pivot_lang, p.pivot) for ps in dev.values() for p in ps}
    held_texts = {(p.lang, p.text) for ps in dev.values() for p in ps}
    return [p for lang in wanted for p in corpus[lang]
            if p.source in sources and (p.pivot_lang, p.pivot) not in held_pivots
            and (p.lang, p.text) not in held_texts]


def dev_by_language(langs=None, root=None) -> dict[str, list[Pair]]:
    """{lang: its dev slice}, in the order of `langs` (None = all the corpus has); reading them
    checks the corpus, so a bad file or line fails before a model loads."""
    out: dict[str, list[Pair]] = {}
    for p in read_lowres(list(langs) if langs is not None else None, split="dev", root=root):
        out.setdefault(p.lang, []).append(p)
    return out
