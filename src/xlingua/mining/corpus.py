"""Step 1: read a monolingual corpus and split it into shards of sentences.

Shard files: `text_NNNNN.txt` (one sentence a line), `offsets_NNNNN.npy` (byte offset of each
line, for random access when writing the output) and `ids_NNNNN.txt` when the corpus has
`id<TAB>sentence` lines. Blank lines are skipped (counted in the metadata); with dedup, a
sentence seen before is skipped too and the first occurrence's id is kept.
"""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Iterator

import numpy as np

from xlingua.data.text import InputError, read_lines, shown
from xlingua.mining.cache import atomic_path, file_fingerprint, load_json, save_json, save_npy
from xlingua.mining.step import Output, Step, path_field
from xlingua.data.scripts import check_script

LANG_SAMPLE = 1000
COUNTS = "counts.json"  # what the pass counted, for the summary


def has_ids(path: str | Path) -> bool:
    """A corpus has ids when its first non-blank line is `id<TAB>sentence`."""
    for line in read_lines(path):
        if line.text.strip():
            return "\t" in line.text
    return False


def read_corpus(path: str | Path) -> Iterator[tuple[int, str | None, str]]:
    """Yield (line number, id or None, sentence) with the project's line reader (plain or
    gzip; errors name file and line). Every line must follow the first line's id format."""
    ids = has_ids(path)
    for line in read_lines(path, ids=ids):
        if "\t" in line.text:
            want = "id<TAB>sentence" if ids else "a sentence without TAB, like the first line"
            raise InputError(f"{line.path}:{line.number}: expected {want} (mixed id formats)")
        if ids and not line.id.strip():
            raise InputError(f"{line.path}:{line.number}: empty id")
        yield line.number, line.id, line.text


@dataclasses.dataclass(frozen=True)
class ShardConfig:
    path: str = path_field()  # what is read (a stream's copy, data.spool); same content -> same shards
    fingerprint: str
    lang: str
    shard_size: int = 100_000
    dedup: bool = False
    check_lang: bool = True


def shard_config(path, lang: str, shard_size: int, dedup: bool, check_lang: bool = True) -> ShardConfig:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"corpus not found: {path}")
    return ShardConfig(str(path), file_fingerprint(path), lang, shard_size, dedup, check_lang)


@dataclasses.dataclass(frozen=True)
class Shards(Output):
    """A corpus in shards: its counts, and whether its lines carry ids."""
    path: str
    lang: str
    lines: int
    blank: int
    duplicates_removed: int
    sentences: int
    shards: tuple
    has_ids: bool
    longest_chars: int

    def __post_init__(self):  # a summary read back from JSON holds a list
        object.__setattr__(self, "shards", tuple(self.shards))

    @property
    def sizes(self) -> tuple:
        return self.shards


class ShardStep(Step):
    """One pass over the corpus (a single item): shard files, then their counts."""

    name = "shard"
    output_type = Shards

    def run(self, item, progress: bool) -> None:
        cfg = self.config
        seen: set[bytes] = set()
        texts, ids, shards = [], [], []
        n_lines = n_blank = n_dup = longest = 0
        has_ids = None
        sample: list[str] = []
        for no, sid, text in read_corpus(cfg.path):
            n_lines = no
            if not text.strip():
                n_blank += 1
                continue
            if "\n" in text or "\r" in text:
                raise ValueError(f"{shown(cfg.path)}:{no}: sentence contains a line break")
            if has_ids is None:
                has_ids = sid is not None
            if len(sample) < LANG_SAMPLE:
                sample.append(text)
                if cfg.check_lang and len(sample) == LANG_SAMPLE:
                    check_script(sample, cfg.lang, shown(cfg.path))
            if cfg.dedup:
                digest = hashlib.blake2b(text.encode("utf-8"), digest_size=12).digest()
                if digest in seen:
                    n_dup += 1
                    continue
                seen.add(digest)
            longest = max(longest, len(text))
            texts.append(text)
            ids.append(sid if sid is not None else str(no))
            if len(texts) == cfg.shard_size:
                shards.append(write_shard(self.dir, len(shards), texts, ids))
                texts, ids = [], []
        if texts:
            shards.append(write_shard(self.dir, len(shards), texts, ids))
        if not shards:
            raise ValueError(f"{shown(cfg.path)}: no sentences ({n_lines} lines, {n_blank} blank); "
                             "cannot mine an empty corpus")
        if cfg.check_lang and len(sample) < LANG_SAMPLE:
            check_script(sample, cfg.lang, shown(cfg.path))
        save_json(self.dir / COUNTS, {"lines": n_lines, "blank": n_blank, "duplicates_removed": n_dup,
                                      "shards": shards, "has_ids": bool(has_ids), "longest_chars": longest})

    def summarize(self) -> Shards:
        counts = load_json(self.dir / COUNTS)
        return self.output({"path": shown(self.config.path), "lang": self.config.lang,
                            "sentences": int(sum(counts["shards"])), **counts})



def write_shard(folder: Path, i: int, texts: list[str], ids: list[str]) -> int:
    """Shard i's files in `folder` (text, byte offsets, ids), each written atomically."""
    data = [(t + "\n").encode("utf-8") for t in texts]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    with atomic_path(folder / f"text_{i:05d}.txt") as tmp:
        tmp.write_bytes(b"".join(data))
    save_npy(folder / f"offsets_{i:05d}.npy", offsets)
    # Always written: without ids in the file, a sentence's id is its line number.
    with atomic_path(folder / f"ids_{i:05d}.txt") as tmp:
        tmp.write_text("".join(s + "\n" for s in ids), encoding="utf-8")
    return len(texts)


class ShardedCorpus:
    """Random access to the sentences (and ids) of a finished ShardStep by global row."""

    def __init__(self, shards: Shards):
        self.dir = Path(shards.dir)
        self.sizes = shards.sizes
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)
        self.has_ids = shards.has_ids
        self._ids: dict[int, list[str]] = {}

    def __len__(self) -> int:
        return int(self.starts[-1])

    def shard_texts(self, i: int) -> list[str]:
        return (self.dir / f"text_{i:05d}.txt").read_text(encoding="utf-8").split("\n")[:-1]

    def lookup(self, rows: np.ndarray, with_ids: bool | None = None) -> tuple[list[str], list[str] | None]:
        """Sentences (and ids) of the given global rows, reading one shard at a time."""
        rows = np.asarray(rows, dtype=np.int64)
        texts: list[str] = [""] * len(rows)
        with_ids = self.has_ids if with_ids is None else with_ids
        ids: list[str] | None = [""] * len(rows) if with_ids else None
        shard_of = np.searchsorted(self.starts, rows, side="right") - 1
        for s in np.unique(shard_of):
            pos = np.nonzero(shard_of == s)[0]
            local = rows[pos] - self.starts[s]
            offsets = np.load(self.dir / f"offsets_{s:05d}.npy", mmap_mode="r")
            with open(self.dir / f"text_{s:05d}.txt", "rb") as f:
                for p, r in zip(pos, local):
                    f.seek(int(offsets[r]))
                    texts[p] = f.read(int(offsets[r + 1] - offsets[r]) - 1).decode("utf-8")
            if ids is not None:
                shard_ids = self.shard_ids(s)
                for p, r in zip(pos, local):
                    ids[p] = shard_ids[r]
        return texts, ids

    def shard_ids(self, i: int) -> list[str]:
        """Shard i's ids, one a sentence (line numbers where the corpus has no ids)."""
        return (self.dir / f"ids_{i:05d}.txt").read_text(encoding="utf-8").split("\n")[:-1]

    def all_ids(self) -> list[str]:
        out: list[str] = []
        for s in range(len(self.sizes)):
            out += self.shard_ids(s)
        return out
