"""Short spans of the general corpus's training sentences, in every language it holds.

The corpus is long news and Wikipedia sentences, and about 8,200 English sentences carry two
thirds of its pairs; short everyday text (Tatoeba's register) is what a student distilled on it
reads worst. A span of a few words of any sentence, English or not, is short text the teacher can
still be asked about: the student learns to put it where the teacher does (objectives.distillation
with the span as its own target). No translation is needed, so every language's side counts.
As a second task of the student recipe it made the student worse on short-text dev retrieval
(docs/xlingua-mini.md): a span's target is where the teacher puts that language's text.

Spans are of words where the language puts spaces between words, else of characters (Chinese,
Japanese, Thai and the like: data.scripts.NO_SPACE_SCRIPTS), twice as many characters as words.
"""
from __future__ import annotations

import unicodedata
import zlib

import numpy as np

from xlingua.data.general import SOURCES, read_general
from xlingua.data.scripts import writes_spaces

EDGES = " \t,;:"  # a span cut mid-clause does not start or end on a separator


def span(text: str, rng: np.random.Generator, words: tuple[int, int] = (3, 10), spaced: bool = True) -> str:
    """A random run of `words[0]` to `words[1]` words of `text` (of characters, twice as many,
    where the language writes no spaces between words: `spaced` False); the whole text when it
    is no longer than that."""
    lo, hi = words
    if not 1 <= lo <= hi:
        raise ValueError(f"words must be (min, max) with 1 <= min <= max, got {words}")
    units = text.split() if spaced else list(text.strip())
    if not spaced:
        lo, hi = 2 * lo, 2 * hi
    k = int(rng.integers(lo, hi + 1))
    if len(units) <= k:
        return text.strip()
    start = int(rng.integers(len(units) - k + 1))
    end = start + k
    if not spaced:  # a character span neither starts nor ends inside a cluster (Thai, Khmer marks)
        while start < end and _mark(units[start]):
            start += 1
        while end < len(units) and _mark(units[end]):
            end += 1
    out = (" " if spaced else "").join(units[start:end]).strip(EDGES)
    return out or text.strip()


def _mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


def general_fragments(limit: int | None = 1000, words: tuple[int, int] = (3, 10), langs=None, sources=SOURCES,
                      seed: int = 0, root=None) -> list[tuple[str, str, str]]:
    """(span, span, lang) examples: one span of each of up to `limit` distinct training sentences
    per language (English counted once, as "en"), drawn with `seed`. The span is both the input
    and the key of its teacher vector."""
    by_lang: dict[str, set[str]] = {}
    for p in read_general(langs, sources, root=root):
        by_lang.setdefault(p.lang, set()).add(p.text)
        by_lang.setdefault("en", set()).add(p.english)
    out, seen = [], set()
    for lang in sorted(by_lang):
        # seeded by the language's name: its spans do not change with the other languages chosen
        rng = np.random.default_rng([seed, 7919, zlib.crc32(lang.encode())])
        texts, spaced = sorted(by_lang[lang]), writes_spaces(lang)
        order = rng.permutation(len(texts))[:limit]
        for j in order:
            s = span(texts[j], rng, words, spaced)
            if s and (s, lang) not in seen:
                seen.add((s, lang))
                out.append((s, s, lang))
    return out
