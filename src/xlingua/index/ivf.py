"""Inverted-file k-nearest neighbours searched as matrix multiplies, for sides too large for
exact search.

The database rows are grouped by their nearest centroid (spherical k-means, FAISS's), as in
FAISS's IndexIVFFlat, and a query searches the `nprobe` lists of its nearest centroids. FAISS
scans the lists query by query; here the queries of a block are regrouped by list, so that each
list is one multiply of (its queries x its rows), in the precision the CPU is fastest at, with
the running top-k of index.blocked. The result is FAISS's IVFFlat result on the same centroids
(exact scores of the rows in the probed lists; ties to the lower row), at matrix-multiply speed.

Probing a fraction f of the lists costs about f of exact search plus the query-centroid
multiply. On sentence vectors from a static model, whose clusters are loose, a translation
lands in a probed list less often than a same-language near neighbour does, so nprobe is
chosen on mining gold, not on neighbour recall (docs/guide/mining.md, "At scale").
"""
from __future__ import annotations

import numpy as np
import torch

from xlingua.index.blocked import PRECISIONS, merge_top, rescore_exact, tile_top

KMEANS_ITERATIONS = 10
KMEANS_SAMPLE_PER_LIST = 32
TILE = 1 << 23  # scores held at once in a list's multiply


def train_centroids(sample: np.ndarray, nlist: int, seed: int = 1) -> np.ndarray:
    """Unit centroids of `nlist` spherical k-means clusters of `sample` (FAISS k-means)."""
    import faiss

    sample = np.ascontiguousarray(sample, dtype=np.float32)
    if len(sample) < nlist:
        raise ValueError(f"{nlist} lists need at least {nlist} training vectors, got {len(sample)}")
    # FAISS warns under 39 points a centroid; 32 was enough here (docs/guide/mining.md, At scale)
    km = faiss.Kmeans(sample.shape[1], nlist, niter=KMEANS_ITERATIONS, spherical=True, seed=seed,
                      max_points_per_centroid=KMEANS_SAMPLE_PER_LIST * 8,
                      min_points_per_centroid=min(KMEANS_SAMPLE_PER_LIST, max(1, len(sample) // nlist)))
    km.train(sample)
    c = km.centroids.astype(np.float32)
    return c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12)


def assign(x: np.ndarray, centroids: np.ndarray, nprobe: int = 1, chunk: int = 16384) -> np.ndarray:
    """The `nprobe` nearest centroids of each row (exact float32, ties to the lower centroid)."""
    c = torch.from_numpy(np.ascontiguousarray(centroids, np.float32))
    out = np.empty((len(x), nprobe), np.int32)
    with torch.inference_mode():
        for s in range(0, len(x), chunk):
            xs = torch.from_numpy(np.ascontiguousarray(x[s: s + chunk], np.float32))
            out[s: s + len(xs)] = tile_top(xs @ c.T, nprobe)[1]
    return out


class IvfIndex:
    """The database rows in list order, in the multiply's precision; searched by query blocks."""

    def __init__(self, y: np.ndarray, centroids: np.ndarray, lists: np.ndarray | None = None,
                 precision: str = "fp32"):
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; choose one of {PRECISIONS}")
        if len(y) == 0:
            raise ValueError("cannot search an empty side")
        self.y, self.centroids, self.precision = y, np.ascontiguousarray(centroids, np.float32), precision
        self.dtype = torch.bfloat16 if precision == "bf16" else torch.float32
        lists = assign(y, self.centroids)[:, 0] if lists is None else np.asarray(lists)
        self.rows = np.argsort(lists, kind="stable")  # database rows, list by list
        self.starts = np.searchsorted(lists[self.rows], np.arange(len(centroids) + 1))
        self.rows_t = torch.from_numpy(self.rows)
        # the rows in list order, in the multiply's precision, a chunk at a time (no full copy on the way)
        self.ty = torch.empty((len(y), y.shape[1]), dtype=self.dtype)
        for c in range(0, len(y), 65536):
            self.ty[c: c + 65536] = torch.from_numpy(np.asarray(y[self.rows[c: c + 65536]], np.float32))
        self.ntotal = len(y)

    @property
    def nlist(self) -> int:
        return len(self.centroids)

    def search(self, x: np.ndarray, k: int, nprobe: int, slack: int | None = None,
               block_x: int = 131072) -> tuple[np.ndarray, np.ndarray]:
        """(D, I): each row of x's k nearest rows among the lists of its nprobe nearest
        centroids, best first; rows that find fewer than k get id -1 and score -inf."""
        if len(x) == 0:
            raise ValueError("cannot search with no queries")
        k = min(k, self.ntotal)
        nprobe = min(nprobe, self.nlist)
        kk = k + ((k if slack is None else slack) if self.precision == "bf16" else 0)
        best_v = torch.full((len(x), kk), -torch.inf)
        best_i = torch.full((len(x), kk), -1, dtype=torch.int64)
        with torch.inference_mode():
            for a in range(0, len(x), block_x):
                xb = np.ascontiguousarray(x[a: a + block_x])
                probe = assign(xb, self.centroids, nprobe)
                tx = torch.from_numpy(xb).to(self.dtype)
                v, i = best_v[a: a + len(xb)], best_i[a: a + len(xb)]
                # nearest lists first, every candidate kept; then the others, where only rows
                # with a score over their current k-th best need a selection
                self._probe(tx, probe[:, :1], v, i, kk, filtered=False)
                self._probe(tx, probe[:, 1:], v, i, kk, filtered=True)
        return rescore_exact(best_i.numpy(), x, self.y, k)

    def _probe(self, tx, probe: np.ndarray, best_v, best_i, kk: int, filtered: bool) -> None:
        """Merge every (query, list) of `probe` into the queries' running lists, list by list."""
        if probe.shape[1] == 0:
            return
        flat = probe.ravel()
        order = np.argsort(flat, kind="stable")
        by_list = flat[order]
        queries = (order // probe.shape[1]).astype(np.int64)  # the query of each (query, list) place
        del flat, order
        bounds = np.searchsorted(by_list, np.arange(self.nlist + 1))
        for lst in np.flatnonzero(np.diff(bounds)):
            s, e = self.starts[lst], self.starts[lst + 1]
            if s == e:
                continue
            q_all = torch.from_numpy(queries[bounds[lst]: bounds[lst + 1]])
            step = max(1, TILE // (e - s))  # a large list probed by many queries: memory bounded
            for c in range(0, len(q_all), step):
                self._merge_tile(tx, q_all[c: c + step], s, e, best_v, best_i, kk, filtered)

    def _merge_tile(self, tx, q, s: int, e: int, best_v, best_i, kk: int, filtered: bool) -> None:
        tile = tx.index_select(0, q) @ self.ty[s:e].T
        if filtered:  # the k-th best came from a tile of this precision: the comparison is exact
            hit = torch.nonzero(tile.amax(dim=1) >= best_v[q, -1].to(tile.dtype)).squeeze(1)
            if not len(hit):
                return
            q, tile = q[hit], tile[hit]
        tv, ti = tile_top(tile, min(kk, e - s), ties=self.precision == "fp32")
        ids = self.rows_t[s + ti]
        pad = kk - tv.shape[1]
        if pad:
            tv = torch.cat([tv, torch.full((len(q), pad), -torch.inf)], 1)
            ids = torch.cat([ids, torch.full((len(q), pad), -1, dtype=torch.int64)], 1)
        best_v[q], best_i[q] = _merge_ids(best_v[q], best_i[q], tv, ids, kk)


def _merge_ids(best_v, best_i, v, i, k):
    """merge_top with unfilled places (-1) last, whatever their id."""
    big = torch.iinfo(torch.int64).max
    bv, bi = merge_top(best_v, torch.where(best_i < 0, big, best_i), v, torch.where(i < 0, big, i), k)
    return bv, torch.where(bi == big, -1, bi)
