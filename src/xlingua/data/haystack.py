"""A mining haystack: known translation pairs hidden among N real lines a side.

Every line of the parallel corpora is linked to its translations; a group is a connected set of
lines (a multi-parallel English sentence with all its translations, a French pivot with its
own). A whole group goes to one side, so no distractor has its translation on the other side,
and lines equal after normalization (case, width, spaces, end punctuation) are one line, so a
near-copy cannot cross either. Gold pairs come from dev slices: their source line goes to the
source side, their target line to the target side, and the rest of their group nowhere. Sides
mix languages, as a crawl does before language identification.
"""
from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass
from typing import Iterable

import regex

_EDGE_PUNCT = regex.compile(r"^\p{P}+|\p{P}+$")
# a TAB reads as an id separator in a mining corpus, and these end a line for str.splitlines
_BREAKS = regex.compile(r"[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")
_SPACES = regex.compile(r"\s+")


def normalized(text: str) -> str:
    """The key two lines share when they are the same sentence for mining purposes."""
    t = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return _EDGE_PUNCT.sub("", t).strip()


def _one_line(text: str) -> str:
    """The text as one line of a corpus file: tabs and line breaks become a space."""
    return _BREAKS.sub(" ", text).strip()


class _Groups:
    """Union-find over normalized lines."""

    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        parent = self.parent
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)  # deterministic: the smaller key is the root


@dataclass
class Haystack:
    src: list[str]
    tgt: list[str]
    gold: list[tuple[int, int]]  # 1-based (source line, target line)
    groups: int  # groups the distractors came from
    short: int  # lines missing on the fuller side when the corpora ran out (0 normally)


def build_haystack(pairs: Iterable[tuple[str, str]], gold_pairs: Iterable[tuple[str, str]], n: int,
                   seed: int = 0) -> Haystack:
    """`n` lines a side: every gold pair (source, target) once, the rest distractor groups.

    `pairs` are all the translation pairs known (distractor text and the links between lines);
    gold pairs link too, so a gold pair's other translations never become distractors. Each
    gold group gives one gold pair (its first); lines empty after normalization are skipped."""
    groups = _Groups()
    text_of: dict[str, str] = {}  # normalized -> first spelling seen
    gold_list = [(a, b) for a, b in gold_pairs]
    for a, b in [*pairs, *gold_list]:
        ka, kb = normalized(a), normalized(b)
        if not ka or not kb:
            continue
        text_of.setdefault(ka, _one_line(a))
        text_of.setdefault(kb, _one_line(b))
        groups.union(ka, kb)
    gold, gold_roots = [], set()
    for a, b in gold_list:
        ka, kb = normalized(a), normalized(b)
        if not ka or not kb or ka == kb:
            continue
        root = groups.find(ka)
        if root not in gold_roots:
            gold_roots.add(root)
            gold.append((text_of[ka], text_of[kb]))
    if len(gold) > n:
        raise ValueError(f"{len(gold)} gold pairs do not fit in {n} lines a side")
    members: dict[str, list[str]] = {}
    for key in text_of:
        root = groups.find(key)
        if root not in gold_roots:
            members.setdefault(root, []).append(key)
    rng = random.Random(seed)
    roots = sorted(members)
    rng.shuffle(roots)
    sides: list[list[str]] = [[a for a, _ in gold], [b for _, b in gold]]
    used = 0
    for root in roots:
        need = [n - len(s) for s in sides]
        if max(need) <= 0:
            break
        side = 0 if need[0] >= need[1] else 1
        lines = sorted(members[root])[: need[side]]  # a large group is cut, never split
        sides[side].extend(text_of[k] for k in lines)
        used += 1
    short = max(n - len(s) for s in sides)
    order = [list(range(len(s))) for s in sides]
    for o in order:
        rng.shuffle(o)
    src = [sides[0][i] for i in order[0]]
    tgt = [sides[1][i] for i in order[1]]
    where = [{old: new for new, old in enumerate(o)} for o in order]
    gold_rows = sorted((where[0][i] + 1, where[1][i] + 1) for i in range(len(gold)))
    return Haystack(src, tgt, gold_rows, used, short)
