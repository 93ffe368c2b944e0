"""Training directions (source language -> target language) and token-budget batches.

Every l10n pair xx-en gives xx -> en; the pairs of the second target language T also give
en -> T, so English is an encoder input too (the paper: all languages into English and Spanish).
Multi30k (en/de/fr/cs, line-aligned) adds its directions into en and T. Steps alternate over
the directions; the batch of a step is a pure function of (seed, step), so a resumed run sees
exactly the batches an uninterrupted one would.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from xlingua.data.benchmarks import read_l10n
from xlingua.encoders.laser_vocab import BOS, EOS, PAD


def read_l10n_pairs(root: Path, lang: str, limit: int | None, seed: int = 0) -> tuple[list[str], list[str]]:
    """(lang sentences, English sentences) from l10n `lang-en.train.tsv.gz`, a seeded sample."""
    rows = list(zip(*read_l10n(lang, "train", root, allow_empty=False)))
    if limit and limit < len(rows):
        rows = random.Random(f"{seed}-{lang}").sample(rows, limit)
    return [r[0] for r in rows], [r[1] for r in rows]


@dataclass
class Direction:
    src_lang: str
    tgt_lang: str
    src: list[list[int]]
    tgt: list[list[int]]


def encode_direction(sp, src_lang: str, tgt_lang: str, src: list[str], tgt: list[str], max_len: int) -> tuple[Direction, int]:
    """Token ids of a direction; pairs with a side over max_len pieces are dropped (and counted)."""
    s_ids = sp.encode(src)
    t_ids = sp.encode(tgt)
    keep = [(a, b) for a, b in zip(s_ids, t_ids) if 0 < len(a) <= max_len and 0 < len(b) <= max_len]
    return Direction(src_lang, tgt_lang, [a for a, _ in keep], [b for _, b in keep]), len(s_ids) - len(keep)


def token_batches(lengths: list[int], max_tokens: int, rng: random.Random) -> list[list[int]]:
    """Group indices into batches whose padded size (rows x longest) stays within max_tokens.
    Sorting by length (with random tie order) keeps padding small; batch order is shuffled."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], rng.random()))
    batches, cur, longest = [], [], 0
    for i in order:
        if cur and max(longest, lengths[i]) * (len(cur) + 1) > max_tokens:
            batches.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, lengths[i])
    if cur:
        batches.append(cur)
    rng.shuffle(batches)
    return batches


class Schedule:
    """Step -> (direction, batch indices): direction = step mod D (alternating), and the k-th
    batch of a direction comes from its pass k // n_batches, shuffled with seed (seed, d, pass)."""

    def __init__(self, directions: list[Direction], max_tokens: int, seed: int = 0):
        self.directions = directions
        self.max_tokens = max_tokens
        self.seed = seed
        self._cache: dict[tuple[int, int], list[list[int]]] = {}

    def _lengths(self, d: Direction) -> list[int]:
        return [max(len(a), len(b) + 1) for a, b in zip(d.src, d.tgt)]

    def _pass(self, di: int, p: int) -> list[list[int]]:
        if (di, p) not in self._cache:
            self._cache = {k: v for k, v in self._cache.items() if k[0] != di}  # keep one pass per direction
            rng = random.Random(f"{self.seed}-{di}-{p}")
            self._cache[(di, p)] = token_batches(self._lengths(self.directions[di]), self.max_tokens, rng)
        return self._cache[(di, p)]

    def __call__(self, step: int) -> tuple[int, list[int]]:
        di = step % len(self.directions)
        k = step // len(self.directions)
        n = len(self._pass(di, 0))
        return di, self._pass(di, k // n)[k % n]


def collate(d: Direction, idx: list[int], tgt_lang_id: int):
    """Padded tensors: src (B, S), src lengths, decoder input [BOS y] and output [y EOS]."""
    src = [d.src[i] for i in idx]
    tgt = [d.tgt[i] for i in idx]
    S, T = max(map(len, src)), max(map(len, tgt)) + 1
    src_t = torch.full((len(idx), S), PAD, dtype=torch.long)
    tin = torch.full((len(idx), T), PAD, dtype=torch.long)
    tout = torch.full((len(idx), T), PAD, dtype=torch.long)
    for r, (a, b) in enumerate(zip(src, tgt)):
        src_t[r, :len(a)] = torch.tensor(a)
        tin[r, :len(b) + 1] = torch.tensor([BOS] + b)
        tout[r, :len(b) + 1] = torch.tensor(b + [EOS])
    lengths = torch.tensor([len(a) for a in src])
    return src_t, lengths, tin, tout, torch.full((len(idx),), tgt_lang_id, dtype=torch.long)


def summarize(directions: list[Direction]) -> list[dict]:
    return [{"src": d.src_lang, "tgt": d.tgt_lang, "pairs": len(d.src),
             "src_tokens": int(np.sum([len(x) for x in d.src]))} for d in directions]
