"""Steps 3-4: build the index of one side, then search it with every shard of the other.

`IndexConfig` picks the index by corpus size (xlingua.index.choose_index) unless told; the
chosen factory reaches the search through the `Index` output. An exact "Flat" index is not
stored (it is the embeddings themselves); "IVF<n>,Flat" stores its centroids and each row's
list (lists.npz), the rows staying in the embed step; other FAISS indexes are trained on an
evenly spaced sample and saved. `KnnStep` writes `knn_NNNNN.npz` (scores D, ids I) per
query shard, and for an approximate index measures recall@1/@k against exact search on a
sample of queries."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from xlingua.encoders.store import load_embeddings, shard_name
from xlingua.index import (build_index, choose_index, exact_knn_streamed, load_index, recall,
                           save_index, search)
from xlingua.index.blocked import BlockedIndex
from xlingua.index.factory import blocked_ivf_lists, set_nprobe, train_sample_size
from xlingua.index.ivf import KMEANS_SAMPLE_PER_LIST, IvfIndex, assign, train_centroids
from xlingua.mining.cache import atomic_path, save_npz
from xlingua.mining.embed import Vectors, shard_loader
from xlingua.mining.step import Output, Step, upstream

RECALL_QUERIES = 1000


@dataclasses.dataclass(frozen=True)
class IndexConfig:
    embed: Vectors = upstream()
    factory: str = "auto"  # "auto" becomes the factory chosen by size (choose_index)
    flat_max_bytes: int = 4 << 30

    def __post_init__(self):
        if self.factory == "auto":
            n = int(sum(self.embed.sizes))
            object.__setattr__(self, "factory", choose_index(n, self.embed.dim, self.flat_max_bytes))


@dataclasses.dataclass(frozen=True)
class Index(Output):
    factory: str
    ntotal: int


class IndexStep(Step):
    """The index of one side's vectors (a single item). Flat is the vectors themselves: no file."""

    name = "index"
    key_order = ("embed_key", "embed_dir", "sizes", "dim", "factory", "nprobe", "flat_max_bytes")
    version = 2
    output_type = Index

    def old_key_fields(self) -> dict:
        embed = self.config.embed
        return {"embed_dir": "", "sizes": embed.sizes, "dim": embed.dim, "nprobe": 0}

    def key_fields(self) -> dict:
        fields = super().key_fields()
        if blocked_ivf_lists(self.config.factory):
            fields["lists"] = f"spherical-kmeans-{KMEANS_SAMPLE_PER_LIST}"
        return fields

    def run(self, item, progress: bool) -> None:
        cfg = self.config
        if cfg.factory == "Flat":
            return
        nlist = blocked_ivf_lists(cfg.factory)
        if nlist:  # centroids and each row's list; the rows stay in the embed step
            centroids = train_centroids(_sample(cfg.embed.load, cfg.embed.sizes, KMEANS_SAMPLE_PER_LIST * nlist), nlist)
            lists = np.concatenate([assign(cfg.embed.load(i), centroids)[:, 0] for i in range(len(cfg.embed.sizes))])
            save_npz(self.dir / "lists.npz", centroids=centroids, lists=lists.astype(np.int32))
            return
        n = int(sum(cfg.embed.sizes))
        train = _sample(cfg.embed.load, cfg.embed.sizes, train_sample_size(cfg.factory, n))
        index = build_index(cfg.factory, cfg.embed.dim, train,
                            (cfg.embed.load(i) for i in range(len(cfg.embed.sizes))))
        with atomic_path(self.dir / "index.faiss") as tmp:
            save_index(index, tmp)

    def summarize(self) -> Index:
        return self.output({"factory": self.config.factory, "ntotal": int(sum(self.config.embed.sizes))})


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


def _get_index(index_dir: str, factory: str, db_dir: str, n_db: int, nprobe: int, precision: str):
    """Load the database index once per process (local loop or Ray worker). Flat and
    IVF<n>,Flat: the blocked searches (xlingua.index.blocked, .ivf) over the unit float32 rows."""
    key = (index_dir, db_dir, precision)
    if key not in _INDEX_CACHE:
        _INDEX_CACHE.clear()
        if factory == "Flat" or blocked_ivf_lists(factory):
            db = _load_all(db_dir, n_db)
            if factory == "Flat":
                _INDEX_CACHE[key] = BlockedIndex(db, precision)
            else:
                with np.load(Path(index_dir) / "lists.npz") as z:
                    _INDEX_CACHE[key] = IvfIndex(db, z["centroids"], z["lists"], precision)
        else:
            _INDEX_CACHE[key] = load_index(Path(index_dir) / "index.faiss", nprobe)
    index = _INDEX_CACHE[key]
    if factory != "Flat" and not blocked_ivf_lists(factory):
        set_nprobe(index, nprobe)
    return index


def _load_all(db_dir: str, n: int) -> np.ndarray:
    """Every shard's unit float32 rows in one array, filled shard by shard (no list of copies
    beside it: at a million rows that would double the peak)."""
    shapes = [load_embeddings(Path(db_dir) / shard_name(i), mmap=True).shape for i in range(n)]
    load = shard_loader(db_dir)
    out = np.empty((sum(rows for rows, _ in shapes), shapes[0][1]), np.float32)
    at = 0
    for i, (rows, _) in enumerate(shapes):
        out[at: at + rows] = load(i)
        at += rows
    return out


def knn_shard(query_dir: str, i: int, index_dir: str, factory: str, db_dir: str, n_db: int,
              nprobe: int, k: int, out_path: str, precision: str = "fp32") -> str:
    out = Path(out_path)
    if out.exists():
        return str(out)
    index = _get_index(index_dir, factory, db_dir, n_db, nprobe, precision)
    query = shard_loader(query_dir)(i)
    if factory == "Flat":
        d, idx = index.search(query, k)
    elif blocked_ivf_lists(factory):
        d, idx = index.search(query, k, nprobe)
    else:
        d, idx = search(index, query, k)
    save_npz(out, D=d.astype(np.float32), I=idx.astype(np.int64))
    return str(out)


@dataclasses.dataclass(frozen=True)
class KnnConfig:
    index: Index = upstream()
    query: Vectors = upstream()
    db: Vectors = upstream(key=False)  # what the index holds: in its key already
    k: int = 4
    nprobe: int = 128  # a search setting: the trained index does not depend on it
    precision: str = "fp32"  # exact search's multiply: bf16 on CPUs with bf16 units (then fp32-rescored)


@dataclasses.dataclass(frozen=True)
class Neighbours(Output):
    factory: str
    k: int
    recall: dict | None = None  # approximate indexes only

    def load(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        with np.load(Path(self.dir) / f"knn_{i:05d}.npz") as z:
            return z["D"], z["I"]

    def summary(self) -> dict:
        return {k: v for k, v in super().summary().items() if v is not None}


class KnnStep(Step):
    """The k nearest neighbours of every query shard (the items) in the index."""

    name = "knn"
    spread = True
    key_order = ("index_key", "index_dir", "query_key", "query_dir", "db_dir", "query_sizes",
                 "db_sizes", "factory", "nprobe", "k")
    version = 2  # v2: inner products of renormalized float16 vectors
    output_type = Neighbours

    def old_key_fields(self) -> dict:
        cfg = self.config
        return {"index_dir": "", "query_dir": "", "db_dir": "", "query_sizes": cfg.query.sizes,
                "db_sizes": cfg.db.sizes, "factory": cfg.index.factory}

    def key_fields(self) -> dict:
        fields = super().key_fields()
        factory = self.config.index.factory
        if factory == "Flat" or blocked_ivf_lists(factory):  # the blocked searches
            fields["exact"] = f"blocked-{self.config.precision}"
        return fields

    def shard_path(self, i: int) -> Path:
        return self.dir / f"knn_{i:05d}.npz"

    def items(self):
        return range(len(self.config.query.sizes))

    def item_done(self, i: int) -> bool:
        return self.shard_path(i).exists()

    def item_rows(self, i: int) -> int:
        return int(self.config.query.sizes[i])

    def run(self, i: int, progress: bool) -> None:
        cfg = self.config
        knn_shard(cfg.query.dir, i, cfg.index.dir, cfg.index.factory, cfg.db.dir, len(cfg.db.sizes),
                  cfg.nprobe, cfg.k, str(self.shard_path(i)), cfg.precision)

    def summarize(self) -> Neighbours:
        _INDEX_CACHE.clear()
        cfg = self.config
        out = self.output({"factory": cfg.index.factory, "k": min(cfg.k, int(sum(cfg.db.sizes)))})
        if cfg.index.factory == "Flat":
            return out
        return dataclasses.replace(out, recall=self._measure_recall(out))

    def _measure_recall(self, out: Neighbours) -> dict:
        """Exact vs approximate top-k on evenly spaced queries."""
        cfg = self.config
        spread = _spread(cfg.query.sizes, RECALL_QUERIES)
        queries = np.concatenate([cfg.query.load(s)[local] for s, local in spread])
        approx = np.concatenate([out.load(s)[1][local] for s, local in spread])
        _, exact = exact_knn_streamed(queries, cfg.db.load, len(cfg.db.sizes), approx.shape[1])
        return recall(approx, exact)
