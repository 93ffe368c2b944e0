"""Steps 3-4: build the index of one side, then search it with every shard of the other.

`IndexStep` picks the index by corpus size (xlingua.index.choose_index) unless told; an
exact "Flat" index is not stored (it is the embeddings themselves), IVF/PQ ones are trained
on an evenly spaced sample and saved. `KnnStep` writes `knn_NNNNN.npz` (scores D, ids I) per
query shard, and for an approximate index measures recall@1/@k against exact search on a
sample of queries."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from xlingua.index import (build_index, choose_index, exact_knn_streamed, flat_index, load_index,
                           recall, save_index, search)
from xlingua.index.factory import set_nprobe, train_sample_size
from xlingua.mining.cache import Step, atomic_path, save_npz, stable_hash
from xlingua.mining.embed import shard_loader

RECALL_QUERIES = 1000


@dataclasses.dataclass(frozen=True)
class IndexConfig:
    embed_key: str
    embed_dir: str
    sizes: tuple
    dim: int
    factory: str = "auto"
    nprobe: int = 128
    flat_max_bytes: int = 4 << 30


class IndexStep(Step):
    name = "index"
    version = 2

    def key_config(self):
        # nprobe is a search setting (KnnConfig): the trained index doesn't depend on it
        return dataclasses.replace(self.config, embed_dir="", factory=self.factory, nprobe=0)

    @property
    def factory(self) -> str:
        cfg = self.config
        if cfg.factory != "auto":
            return cfg.factory
        return choose_index(int(sum(cfg.sizes)), cfg.dim, cfg.flat_max_bytes)

    def run(self) -> dict:
        if self.done():
            return self.meta()
        cfg, factory = self.config, self.factory
        self.dir.mkdir(parents=True, exist_ok=True)
        n = int(sum(cfg.sizes))
        meta = {"factory": factory, "ntotal": n}
        if factory != "Flat":
            load = shard_loader(cfg.embed_dir)
            train = _sample(load, cfg.sizes, train_sample_size(factory, n))
            index = build_index(factory, cfg.dim, train, (load(i) for i in range(len(cfg.sizes))),
                                nprobe=cfg.nprobe)
            with atomic_path(self.dir / "index.faiss") as tmp:
                save_index(index, tmp)
        return self.finish(meta)


def _spread(sizes, n: int) -> list[tuple[int, np.ndarray]]:
    """n evenly spaced rows across all shards (deterministic), as (shard, its local rows)."""
    total = int(sum(sizes))
    rows = np.unique(np.linspace(0, total - 1, num=min(n, total)).astype(np.int64))
    starts = np.concatenate([[0], np.cumsum(sizes)])
    spread = []
    for s in range(len(sizes)):
        local = rows[(rows >= starts[s]) & (rows < starts[s + 1])] - starts[s]
        if len(local):
            spread.append((s, local))
    return spread


def _sample(load, sizes, n: int) -> np.ndarray:
    return np.concatenate([load(s)[local] for s, local in _spread(sizes, n)])


_INDEX_CACHE: dict = {}


def _get_index(index_dir: str, factory: str, db_dir: str, n_db: int, nprobe: int):
    """Load the database index once per process (local loop or Ray worker)."""
    key = (index_dir, db_dir)
    if key not in _INDEX_CACHE:
        _INDEX_CACHE.clear()
        if factory == "Flat":
            _INDEX_CACHE[key] = flat_index(shard_loader(db_dir), n_db)
        else:
            _INDEX_CACHE[key] = load_index(Path(index_dir) / "index.faiss", nprobe)
    set_nprobe(_INDEX_CACHE[key], nprobe)
    return _INDEX_CACHE[key]


def knn_shard(query_dir: str, i: int, index_dir: str, factory: str, db_dir: str, n_db: int,
              nprobe: int, k: int, out_path: str) -> str:
    out = Path(out_path)
    if out.exists():
        return str(out)
    index = _get_index(index_dir, factory, db_dir, n_db, nprobe)
    d, idx = search(index, shard_loader(query_dir)(i), k)
    save_npz(out, D=d.astype(np.float32), I=idx.astype(np.int64))
    return str(out)


@dataclasses.dataclass(frozen=True)
class KnnConfig:
    index_key: str
    index_dir: str
    query_key: str
    query_dir: str
    db_dir: str
    query_sizes: tuple
    db_sizes: tuple
    factory: str
    nprobe: int
    k: int


class KnnStep(Step):
    name = "knn"
    version = 2  # v2: inner products of renormalized float16 vectors

    def key_config(self):
        return dataclasses.replace(self.config, index_dir="", query_dir="", db_dir="")

    def shard_path(self, i: int) -> Path:
        return self.dir / f"knn_{i:05d}.npz"

    def load(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        with np.load(self.shard_path(i)) as z:
            return z["D"], z["I"]

    def run(self, runner) -> dict:
        if self.done():
            return self.meta()
        cfg = self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        todo = [i for i in range(len(cfg.query_sizes)) if not self.shard_path(i).exists()]
        runner.map(knn_shard, [(cfg.query_dir, i, cfg.index_dir, cfg.factory, cfg.db_dir,
                                len(cfg.db_sizes), cfg.nprobe, cfg.k, str(self.shard_path(i)))
                               for i in todo], label="kNN search")
        _INDEX_CACHE.clear()
        meta = {"factory": cfg.factory, "k": min(cfg.k, int(sum(cfg.db_sizes)))}
        if cfg.factory != "Flat":
            meta["recall"] = self._measure_recall()
        return self.finish(meta)

    def _measure_recall(self) -> dict:
        """Exact vs approximate top-k on evenly spaced queries."""
        cfg = self.config
        spread = _spread(cfg.query_sizes, RECALL_QUERIES)
        load_queries = shard_loader(cfg.query_dir)
        queries = np.concatenate([load_queries(s)[local] for s, local in spread])
        approx = np.concatenate([self.load(s)[1][local] for s, local in spread])
        _, exact = exact_knn_streamed(queries, shard_loader(cfg.db_dir), len(cfg.db_sizes),
                                      approx.shape[1])
        return recall(approx, exact)
