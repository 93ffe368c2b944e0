"""The one on-disk format of embedding rows, written by `xlingua embed -o DIR --shard-size N`
and by mining's embed step, read by `xlingua mine --src-embeddings DIR`:

    DIR/shard-00000.npy        rows 0 .. n0-1 (float32 or float16), one row per input line
    DIR/shard-00000.ids.txt    their ids, one a line (only when the input had id<TAB>text)
    DIR/index.json             {"format", "rows", "dim", "dtype", "model", "shards": [{"file",
                               "rows"}]}: written last, so its presence means complete

`model` is the encoder's fingerprint: rows of two stores are comparable only when it is equal.
`load_embeddings` reads a store or the single `OUT.npy` form alike."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import numpy as np

from xlingua.data.text import InputError

FORMAT = "xlingua-embeddings/1"
INDEX = "index.json"


class StoreError(ValueError):
    """A store that is unfinished, malformed or does not fit its use (names the directory)."""


def shard_name(k: int) -> str:
    return f"shard-{k:05d}.npy"


def ids_name(k: int) -> str:
    return f"shard-{k:05d}.ids.txt"


def index_record(shard_rows: list[int], dim: int, dtype: str, model: str) -> dict:
    return {"format": FORMAT, "rows": int(sum(shard_rows)), "dim": int(dim), "dtype": str(dtype),
            "model": model, "shards": [{"file": shard_name(k), "rows": int(n)}
                                       for k, n in enumerate(shard_rows)]}


class Store:
    """A complete store directory, read shard by shard."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        index = self.path / INDEX
        if not self.path.is_dir():
            raise StoreError(f"{self.path}: not an embedding directory (`xlingua embed -o DIR --shard-size N` writes one)")
        if not index.exists():
            raise StoreError(f"{self.path}: no {INDEX}, so the embedding job has not finished; "
                             "rerun the same command to resume it")
        meta = json.loads(index.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise StoreError(f"{index}: format {meta.get('format')!r}, expected {FORMAT!r}")
        self.meta = meta
        self.rows, self.dim, self.dtype = int(meta["rows"]), int(meta["dim"]), meta["dtype"]
        self.model = meta.get("model", "")
        self.shard_rows = [int(s["rows"]) for s in meta["shards"]]
        self.files = [s["file"] for s in meta["shards"]]

    def shard(self, k: int, mmap: bool = False) -> np.ndarray:
        return np.load(self.path / self.files[k], mmap_mode="r" if mmap else None)

    def blocks(self, mmap: bool = True) -> Iterator[np.ndarray]:
        for k in range(len(self.files)):
            yield self.shard(k, mmap)

    def load(self, mmap: bool = False) -> np.ndarray:
        """Every row, its shards joined in order (mmap=True maps each shard before the join)."""
        if not self.files:
            return np.zeros((0, self.dim), dtype=self.dtype)
        return np.concatenate(list(self.blocks(mmap)))

    def has_ids(self) -> bool:
        return bool(self.files) and all((self.path / ids_name(k)).exists() for k in range(len(self.files)))

    def ids(self) -> list[str]:
        out: list[str] = []
        for k in range(len(self.files)):
            out += (self.path / ids_name(k)).read_text(encoding="utf-8").split("\n")[:-1]
        return out

    def rows_at(self, rows: np.ndarray) -> np.ndarray:
        """The given global rows (sorted or not), reading one shard at a time (memory-mapped)."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(self.shard_rows)]).astype(np.int64)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        shard_of = np.searchsorted(starts, rows, side="right") - 1
        for k in np.unique(shard_of):
            pos = np.nonzero(shard_of == k)[0]
            out[pos] = self.shard(int(k), mmap=True)[rows[pos] - starts[k]]
        return out


def load_embeddings(path: str | os.PathLike, mmap: bool = False) -> np.ndarray:
    """The rows `xlingua embed` wrote: an .npy file, or a complete store directory, its shards
    joined in order (mmap=True maps the file, or each shard before the join)."""
    path = Path(path)
    if path.is_dir():
        try:
            return Store(path).load(mmap)
        except StoreError as exc:
            raise InputError(str(exc)) from None  # one line at the command line
    return np.load(path, mmap_mode="r" if mmap else None)
