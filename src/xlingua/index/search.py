"""k-nearest-neighbour search over sharded vectors, and the recall of approximate search."""
from __future__ import annotations

from typing import Callable, Sequence

import faiss
import numpy as np


def flat_index(shards: Sequence[np.ndarray] | Callable[[int], np.ndarray], n_shards: int | None = None,
               dim: int | None = None) -> faiss.IndexFlatIP:
    """An exact inner-product index holding every shard (given as arrays or a loader)."""
    loader = shards if callable(shards) else (lambda i: shards[i])
    n_shards = n_shards if n_shards is not None else len(shards)
    index = None
    for i in range(n_shards):
        x = np.ascontiguousarray(loader(i), dtype=np.float32)
        if index is None:
            index = faiss.IndexFlatIP(dim or x.shape[1])
        index.add(x)
    if index is None:
        raise ValueError("no vectors to index")
    return index


def search(index: faiss.Index, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (scores, ids); k is capped by the index size so no -1 ids come back."""
    k = min(k, index.ntotal)
    if k < 1:
        raise ValueError("cannot search an empty index")
    return index.search(np.ascontiguousarray(queries, dtype=np.float32), k)


def exact_knn_streamed(queries: np.ndarray, loader: Callable[[int], np.ndarray], n_shards: int,
                       k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of `queries` against database shards loaded one at a time (memory: one
    shard), merged with a FAISS result heap. Used to measure the recall of approximate search."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    heap = faiss.ResultHeap(len(queries), k, keep_max=True)
    offset = 0
    for i in range(n_shards):
        db = np.ascontiguousarray(loader(i), dtype=np.float32)
        kk = min(k, len(db))
        sub = faiss.IndexFlatIP(db.shape[1])
        sub.add(db)
        d, idx = sub.search(queries, kk)
        heap.add_result(np.ascontiguousarray(d), np.ascontiguousarray(idx + offset))
        offset += len(db)
    heap.finalize()
    return heap.D, heap.I


def recall(approx: np.ndarray, exact: np.ndarray) -> dict:
    """recall@1: the exact nearest neighbour is the approximate first hit;
    recall@k: share of the exact top-k found in the approximate top-k."""
    at1 = float(np.mean(approx[:, 0] == exact[:, 0])) if len(exact) else 1.0
    k = exact.shape[1]
    hits = [len(set(a[a >= 0]) & set(e)) / k for a, e in zip(approx, exact)]
    return {"recall@1": at1, f"recall@{k}": float(np.mean(hits)) if hits else 1.0,
            "queries": int(len(exact))}
