"""Training examples for the tasks, and a resumable, seeded batch sampler.

Every example is a tuple of strings (plus an int label for NLI). Reader specs (`data:` of a
task in the YAML recipe):

  {type: l10n, langs: [de, fr], split: train, limit: N}
        ../shared/corpora/l10n/xx-en.{split}.tsv.gz pairs (translation, english)
  {type: tsv, path: FILE, limit: N}          any `source<TAB>target` file (optionally .gz)
  {type: xnli, langs: [en, de], limit: N}    XNLI *dev* (premise, hypothesis, label)
  {type: dueam_unsupervised, langs: [...]}   XNLI dev pairs, no labels (data/nli.py)
  {type: dueam_weak, pairs: [en-de, ...]}    XNLI dev cross-language pairs, no labels
  {type: ordered_text, paths: [...], limit: N}
        plain text in reading order; consecutive sentences of a paragraph (blank lines
        separate paragraphs) become (sentence, next sentence) pairs
"""
from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np

from xlingua.paths import corpora_dir


def read_pairs(path: str | Path, limit: int | None = None) -> list[tuple[str, str]]:
    """`a<TAB>b` lines; a line without exactly two non-empty columns raises with file:line."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"pair file not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            cols = line.rstrip("\n").split("\t")
            if len(cols) != 2 or not cols[0].strip() or not cols[1].strip():
                raise ValueError(f"{path}:{lineno}: expected two non-empty tab-separated columns, got {line[:80]!r}")
            out.append((cols[0], cols[1]))
            if limit and len(out) >= limit:
                break
    return out


def l10n_path(lang: str, split: str = "train") -> Path:
    return corpora_dir() / "l10n" / f"{lang}-en.{split}.tsv.gz"


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def read_ordered_text(paths, limit: int | None = None) -> list[tuple[str, str]]:
    """(sentence, next sentence) pairs within paragraphs of plain-text files."""
    out = []
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"text file not found: {path}")
        for para in re.split(r"\n\s*\n", path.read_text(encoding="utf-8", errors="strict")):
            sents = [s.strip() for s in _SENTENCE_END.split(" ".join(para.split())) if len(s.strip()) > 1]
            out.extend(zip(sents, sents[1:]))
            if limit and len(out) >= limit:
                return out[:limit]
    return out


_KEYS = {"l10n": {"langs", "split"}, "tsv": {"path"}, "xnli": {"langs", "data_dir"},
         "dueam_unsupervised": {"langs", "data_dir"}, "dueam_weak": {"pairs", "data_dir"}, "ordered_text": {"paths"}}


def load_examples(spec: dict, seed: int = 0) -> list[tuple]:
    """Examples for one task from its `data:` spec."""
    from xlingua.data import nli

    spec = dict(spec)
    kind = spec.pop("type", None)
    limit = spec.pop("limit", None)
    if kind in _KEYS and set(spec) - _KEYS[kind]:
        raise ValueError(f"data type {kind!r}: unknown key(s) {sorted(set(spec) - _KEYS[kind])}; known: {sorted(_KEYS[kind])}")
    if kind == "l10n":
        split = spec.pop("split", "train")
        out = [p for lang in spec.pop("langs") for p in read_pairs(l10n_path(lang, split), limit)]
    elif kind == "tsv":
        out = read_pairs(spec.pop("path"), limit)
    elif kind == "xnli":
        data = nli.read_xnli_langs(spec.pop("langs"), "dev", spec.pop("data_dir", None))
        out = [(p.premise, p.hypothesis, p.label) for pairs in data.values() for p in pairs[:limit]]
    elif kind == "dueam_unsupervised":
        out = nli.dueam_unsupervised_pairs(spec.pop("langs"), seed, spec.pop("data_dir", None))[:limit]
    elif kind == "dueam_weak":
        out = nli.dueam_weak_pairs(spec.pop("pairs"), spec.pop("data_dir", None))[:limit]
    elif kind == "ordered_text":
        out = read_ordered_text(spec.pop("paths"), limit)
    else:
        raise ValueError(f"unknown data type {kind!r}; choose l10n, tsv, xnli, dueam_unsupervised, dueam_weak, ordered_text")
    if not out:
        raise ValueError(f"data spec {kind!r} produced no examples")
    return out


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
