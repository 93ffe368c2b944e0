"""Training examples for the tasks, and a resumable, seeded batch sampler.

Every example is a tuple of strings (plus an int label for NLI). Reader specs (`data:` of a
task in the YAML recipe):

  {type: l10n, langs: [de, fr], split: train, limit: N}
        ../shared/corpora/l10n/xx-en.{split}.tsv.gz pairs (translation, english, lang)
  {type: general, langs: [de, ...] or null (all), sources: [ntrex, ...], limit: N, pair_files: {xx: FILE}}
        ../shared/corpora/general train split (translation, english, lang); `limit` per
        language; the dev slices (data.general) are never included, nor those of `pair_files`
  {type: lowres, langs: [ee, mni-Latn, ...] or null (all), sources: [bible, mafand, ...], limit: N}
        ../shared/corpora/lowres train split (translation, pivot, lang): the pivot side is English
        or French, as the file names; `limit` per language; dev slices (data.lowres) never included
  {type: fragments, langs: [...] or null, sources: [...], words: [3, 10], limit: N, seed: S}
        spans of 3 to 10 words (twice as many characters in unspaced scripts) of the general
        corpus's train sentences, one per sentence, N sentences per language, English included
        ("en"): (span, span, lang), for distillation towards the teacher's vector of the span;
        drawn with S, else the run's seed
  {type: own_pairs, path: FILE, lang: xx, limit: N}
        a user's `xx<TAB>english` file, train split (translation, english, lang): its own dev
        slice and the general corpus's held-out English sentences left out (data.general)
  {type: stsb_multi_mt, langs: [de, en, ...], cross: true, limit: N}
        stsb_multi_mt *train* (s1, s2, score): every language's pairs, and with `cross` each
        pair again with s2 in another language (chosen by the seed); pairs holding an
        evaluation sentence (STS 2017, STS2017-extended, QE test20) are dropped
  {type: tsv, path: FILE, limit: N}          any `source<TAB>target` file (optionally .gz)
  {type: xnli, langs: [en, de], limit: N}    XNLI *dev* (premise, hypothesis, label)
  {type: dueam_unsupervised, langs: [...]}   XNLI dev pairs, no labels (data/nli.py)
  {type: dueam_weak, pairs: [en-de, ...]}    XNLI dev cross-language pairs, no labels
  {type: ordered_text, paths: [...], limit: N}
        plain text in reading order; consecutive sentences of a paragraph (blank lines
        separate paragraphs) become (sentence, next sentence) pairs

`data:` may also be a list of specs; their examples are concatenated. Any spec of language-tagged
pairs (general, lowres, l10n, own_pairs) takes `strip_harakat: true`: each Arabic-script pair is
followed by a copy without its harakat (data.arabic), `limit` counting the originals.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from xlingua.data.sentences import split_sentences
from xlingua.data.text import InputError, read_lines, read_texts, two_columns
from xlingua.paths import corpora_dir


def read_pairs(path: str | Path, limit: int | None = None) -> list[tuple[str, str]]:
    """`a<TAB>b` lines; a line without exactly two non-empty columns raises with file:line."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"pair file not found: {path}")
    out = []
    for line in read_lines(path, max_chars=None):
        out.append(two_columns(line, "two non-empty tab-separated columns"))
        if limit and len(out) >= limit:
            break
    return out


def l10n_path(lang: str, split: str = "train") -> Path:
    return corpora_dir() / "l10n" / f"{lang}-en.{split}.tsv.gz"


def read_ordered_text(paths, limit: int | None = None) -> list[tuple[str, str]]:
    """(sentence, next sentence) pairs within paragraphs of plain-text files."""
    out = []
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"text file not found: {path}")
        for para in re.split(r"\n\s*\n", "\n".join(read_texts(path))):
            # a paragraph's lines are wrapped text: joined first, as a line break ends a sentence
            sents = [s for s in split_sentences(" ".join(para.split())) if len(s) > 1]
            out.extend(zip(sents, sents[1:]))
            if limit and len(out) >= limit:
                return out[:limit]
    return out


_KEYS = {"l10n": {"langs", "split"}, "general": {"langs", "sources", "pair_files"},
         "lowres": {"langs", "sources"}, "own_pairs": {"path", "lang"},
         "stsb_multi_mt": {"langs", "cross"},
         "tsv": {"path"}, "xnli": {"langs", "data_dir"},
         "dueam_unsupervised": {"langs", "data_dir"}, "dueam_weak": {"pairs", "data_dir"}, "ordered_text": {"paths"},
         "mlqe": {"pairs", "data_dir"}, "fragments": {"langs", "sources", "words", "seed"}}


def load_examples(spec: dict, seed: int = 0) -> list[tuple]:
    """Examples for one task from its `data:` spec."""
    from xlingua.data import nli

    if isinstance(spec, list):
        return [e for one in spec for e in load_examples(one, seed)]
    spec = dict(spec)
    kind = spec.pop("type", None)
    limit = spec.pop("limit", None)
    strip = bool(spec.pop("strip_harakat", False))
    if kind in _KEYS and set(spec) - _KEYS[kind]:
        raise ValueError(f"data type {kind!r}: unknown key(s) {sorted(set(spec) - _KEYS[kind])}; known: {sorted(_KEYS[kind])}")
    if kind == "l10n":
        split = spec.pop("split", "train")
        out = [(*p, lang) for lang in spec.pop("langs") for p in read_pairs(l10n_path(lang, split), limit)]
    elif kind == "general":
        from xlingua.data.general import SOURCES, read_general

        pairs = read_general(spec.pop("langs", None), spec.pop("sources", SOURCES),
                             pair_files=spec.pop("pair_files", None) or {})
        out = _per_lang([(p.text, p.english, p.lang) for p in pairs], limit)
    elif kind == "lowres":
        from xlingua.data.lowres import SOURCES as LOWRES_SOURCES, read_lowres

        out = _per_lang([(p.text, p.pivot, p.lang) for p in read_lowres(spec.pop("langs", None),
                                                                          spec.pop("sources", LOWRES_SOURCES))], limit)
    elif kind == "fragments":  # short spans of the general corpus's train sentences; limit per language
        from xlingua.data.fragments import general_fragments
        from xlingua.data.general import SOURCES

        out = general_fragments(limit or None, tuple(spec.pop("words", (3, 10))), spec.pop("langs", None),
                                spec.pop("sources", SOURCES), int(spec.pop("seed", seed)))
    elif kind == "own_pairs":
        from xlingua.data.general import read_own_pairs

        out = [(p.text, p.english, p.lang) for p in read_own_pairs(spec.pop("path"), spec.pop("lang"))][:limit]
    elif kind == "stsb_multi_mt":
        out = stsb_examples(spec.pop("langs"), bool(spec.pop("cross", False)), seed)[:limit]
    elif kind == "tsv":
        path = spec.pop("path")
        out = read_pairs(path, limit)
        if not out:
            raise InputError(f"{path}: no pairs; the file is empty")
    elif kind == "xnli":
        data = nli.read_xnli_langs(spec.pop("langs"), "dev", spec.pop("data_dir", None))
        out = [(p.premise, p.hypothesis, p.label) for pairs in data.values() for p in pairs[:limit]]
    elif kind == "dueam_unsupervised":
        out = nli.dueam_unsupervised_pairs(spec.pop("langs"), seed, spec.pop("data_dir", None))[:limit]
    elif kind == "dueam_weak":
        out = nli.dueam_weak_pairs(spec.pop("pairs"), spec.pop("data_dir", None))[:limit]
    elif kind == "mlqe":  # graded (source, MT output, z-score) pairs of the WMT20 QE train split only
        from xlingua.data.benchmarks import read_mlqe

        data = [read_mlqe(pair, "train", spec.pop("data_dir", None)) for pair in spec.pop("pairs")]
        out = [(a, b, z) for d in data for a, b, z in list(zip(d.s1, d.s2, d.score))[:limit]]
    elif kind == "ordered_text":
        out = read_ordered_text(spec.pop("paths"), limit)
    else:
        raise ValueError(f"unknown data type {kind!r}; choose {', '.join(_KEYS)}")
    if not out:
        raise ValueError(f"data spec {kind!r} produced no examples")
    if strip:
        from xlingua.data.arabic import with_stripped_copies

        out = with_stripped_copies(out)
    return out


def _per_lang(examples: list[tuple], limit: int | None) -> list[tuple]:
    """The first `limit` examples of each language (their third field); all when no limit."""
    taken: dict[str, int] = {}
    out = []
    for e in examples:
        if not limit or taken.get(e[2], 0) < limit:
            taken[e[2]] = taken.get(e[2], 0) + 1
            out.append(e)
    return out


def stsb_examples(langs: list[str], cross: bool, seed: int = 0) -> list[tuple[str, str, float]]:
    """(s1, s2, score) from stsb_multi_mt train in each language; with `cross`, each pair once
    more with s2 taken from another language. Pairs holding an evaluation sentence are dropped."""
    from xlingua.data.benchmarks import read_stsb_multi_mt
    from xlingua.data.benchmarks import evaluation_sentences

    sets = {lang: read_stsb_multi_mt(lang, "train") for lang in langs}
    n = {len(s) for s in sets.values()}
    if len(n) != 1:
        raise ValueError(f"stsb_multi_mt train files differ in length: { {l: len(s) for l, s in sets.items()} }")
    held = evaluation_sentences()
    rng = np.random.default_rng([seed, 4099])
    out = []
    for a in langs:
        for i in range(len(sets[a])):
            out.append((sets[a].s1[i], sets[a].s2[i], sets[a].score[i]))
            if cross and len(langs) > 1:
                b = langs[(langs.index(a) + 1 + int(rng.integers(len(langs) - 1))) % len(langs)]
                out.append((sets[a].s1[i], sets[b].s2[i], sets[a].score[i]))
    return [e for e in out if e[0].strip().lower() not in held and e[1].strip().lower() not in held]


class LanguageSampler:
    """Endless batches drawn with temperature sampling over languages (Arivazhagan et al. 2019;
    LASER and LaBSE balance their languages this way): a language is picked with probability
    proportional to n_lang ** (1 / temperature), then one of its examples uniformly. T = 1 is
    proportional to size, larger T flattens towards uniform over languages. Examples whose key
    (the English side) is already in the batch are redrawn, so in-batch negatives are never
    translations of each other. Batch t comes from a generator seeded by (seed, salt, t): the
    whole state is t, so a resumed run sees the same batches.

    With `one_language` the language is picked once per batch and every example comes from it:
    the in-batch negatives are then sentences of the same language and mostly the same source,
    as in a dev slice's retrieval, instead of text of other languages and domains that is easy
    to tell apart."""

    def __init__(self, langs: list[str], keys: list[str], temperature: float, seed: int, salt: int = 0,
                 one_language: bool = False):
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        names = sorted(set(langs))
        self.names = names
        by_lang = {l: [] for l in names}
        for i, l in enumerate(langs):
            by_lang[l].append(i)
        self.groups = [np.array(by_lang[l]) for l in names]
        self.one_language = one_language
        # distinct keys per language, which a one-language batch is drawn from (mixed batches need only n_keys)
        self.group_keys = [len({keys[i] for i in g}) for g in self.groups] if one_language else None
        sizes = np.array([len(g) for g in self.groups], dtype=np.float64)
        weights = sizes ** (1.0 / temperature)
        self.probs = weights / weights.sum()
        self.keys, self.seed, self.salt = keys, seed, salt
        self.n_keys = len(set(keys))
        self.calls = 0

    def shares(self) -> dict[str, float]:
        return dict(zip(self.names, self.probs.tolist()))

    def next(self, size: int) -> np.ndarray:
        if size > self.n_keys:
            raise ValueError(f"batch of {size} asked from {self.n_keys} distinct examples")
        if self.one_language and size > min(self.group_keys):
            small = [f"{n} ({k})" for n, k in zip(self.names, self.group_keys) if k < size]
            raise ValueError(f"one-language batches of {size} need {size} distinct examples in each language; "
                             f"fewer in {', '.join(small)}")
        rng = np.random.default_rng([self.seed, self.salt, 104729, self.calls])
        self.calls += 1
        out, seen = [], set()
        one = rng.choice(len(self.groups), p=self.probs) if self.one_language else None
        while len(out) < size:
            picks = np.full(size - len(out), one) if self.one_language else \
                rng.choice(len(self.groups), size=size - len(out), p=self.probs)
            for g in picks:
                i = int(self.groups[g][rng.integers(len(self.groups[g]))])
                if self.keys[i] not in seen:
                    seen.add(self.keys[i])
                    out.append(i)
        return np.array(out)

    def state_dict(self) -> dict:
        return {"calls": self.calls}

    def load_state_dict(self, state: dict) -> None:
        self.calls = int(state["calls"])


def make_sampler(examples: list[tuple], temperature: float, seed: int, salt: int, one_language: bool = False):
    """Temperature sampling over the examples' languages (their third field) when
    temperature > 0, each batch of one language with `one_language`, else seeded epochs in
    order (BatchSampler)."""
    if one_language and not temperature:
        raise ValueError("one-language batches are drawn by temperature sampling over languages: give a temperature")
    if not temperature:
        return BatchSampler(len(examples), seed, salt)
    if not examples or len(examples[0]) < 3 or not isinstance(examples[0][2], str):
        raise ValueError("temperature sampling needs examples tagged with their language (l10n or general data)")
    return LanguageSampler([e[2] for e in examples], [e[1] for e in examples], temperature, seed, salt, one_language)


class BatchSampler:
    """Endless batches of example indices: a fresh seeded permutation each epoch, consumed in
    order; a batch never straddles two epochs (the short tail is skipped). Its whole state is
    (epoch, position), so a resumed run sees the same batches."""

    def __init__(self, n: int, seed: int, salt: int = 0):
        if n < 1:
            raise ValueError("no examples to sample from")
        self.n, self.seed, self.salt = n, seed, salt
        self.epoch, self.pos = 0, 0

    def _order(self) -> np.ndarray:
        if getattr(self, "_cached", (None,))[0] != self.epoch:
            self._cached = (self.epoch, np.random.default_rng([self.seed, self.salt, self.epoch]).permutation(self.n))
        return self._cached[1]

    def next(self, size: int) -> np.ndarray:
        if size > self.n:
            raise ValueError(f"batch of {size} asked from {self.n} examples")
        if self.pos + size > self.n:
            self.epoch, self.pos = self.epoch + 1, 0
        idx = self._order()[self.pos : self.pos + size]
        self.pos += size
        return idx

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "pos": self.pos}

    def load_state_dict(self, state: dict) -> None:
        self.epoch, self.pos = int(state["epoch"]), int(state["pos"])
