"""Exact k-nearest neighbours as a blocked matrix multiply with a running top-k.

Tiles of X Y^T are computed one at a time (memory: one tile) and each row keeps its k best.
Selecting in a tile costs about one more pass over it: the tile's columns fall in groups of
GROUP, each row keeps the k groups of highest maximum (the k best values of a row lie in
them: a group holding one of them has a maximum at least the k-th value, and no more than k
groups can), and only those k x GROUP values are sorted. (Skipping rows whose tile maximum
misses their k-th score saves little on sentence vectors: hubs put a high score in almost
every tile. Reading a tile by columns too, for the other direction, was slower than a second
pass: strided reductions and gathers cost more than the multiply saved.)

Precision: "fp32" is exact (its result equals FAISS's IndexFlatIP, ties to the lower row);
"bf16" multiplies in bfloat16 (AMX / AVX512-BF16 units, faster than fp32) and keeps
`k + slack` candidates per row, whose scores are then recomputed exactly in float32 before the
top k are taken, so bf16 only chooses candidates, never the scores.
"""
from __future__ import annotations

import numpy as np
import torch

PRECISIONS = ("fp32", "bf16")


def merge_top(best_v: torch.Tensor, best_i: torch.Tensor, v: torch.Tensor, i: torch.Tensor, k: int):
    """Top k of two candidate lists (values descending; ties to the lower index)."""
    vv = torch.cat([best_v, v], dim=1)
    ii = torch.cat([best_i, i], dim=1)
    # sort by (-value, index): stable sort on index, then stable sort on value
    order = torch.argsort(ii, dim=1, stable=True)
    vv, ii = vv.gather(1, order), ii.gather(1, order)
    order = torch.argsort(vv, dim=1, descending=True, stable=True)[:, :k]
    return vv.gather(1, order), ii.gather(1, order)


def tile_top(sub: torch.Tensor, k: int, ties: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's k largest (ties to the lower column). topk picks among ties at will, so rows
    with a tie at the k-th place are sorted stably instead (`ties=False` skips that, for
    candidates that are rescored anyway)."""
    if sub.shape[1] <= k:
        tv, ti = torch.sort(sub, dim=1, descending=True, stable=True)
        return tv.float(), ti
    if not ties:
        tv, ti = sub.topk(k, dim=1)
        return tv.float(), ti
    tv, ti = sub.topk(k + 1, dim=1)
    tie = torch.nonzero(tv[:, k - 1] == tv[:, k]).squeeze(1)
    tv, ti = tv[:, :k].clone(), ti[:, :k].clone()
    if len(tie):
        sv, si = torch.sort(sub.index_select(0, tie), dim=1, descending=True, stable=True)
        tv[tie], ti[tie] = sv[:, :k], si[:, :k]
    return tv.float(), ti


GROUP = 128


def _grouped_top(tile: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """tile_top through the groups holding each row's k best (same result, ties included)."""
    m, w = tile.shape
    if w % GROUP or w < 4 * k * GROUP:
        return tile_top(tile, k)
    groups = tile.view(m, w // GROUP, GROUP)
    gmax = groups.amax(dim=2)
    # the k groups of highest maximum, ties to the lower group; then in column order, so
    # that a tie between values goes to the lower column as in tile_top
    best = torch.sort(gmax, dim=1, descending=True, stable=True)[1][:, :k]
    best = torch.sort(best, dim=1)[0]
    cand = groups.gather(1, best.unsqueeze(2).expand(m, k, GROUP)).reshape(m, k * GROUP)
    tv, ti = tile_top(cand, k)
    cols = best.gather(1, ti // GROUP) * GROUP + ti % GROUP
    return tv, cols


class _TopK:
    """Running top-k lists of n rows."""

    def __init__(self, n: int, k: int):
        self.v = torch.full((n, k), -torch.inf)
        self.i = torch.full((n, k), -1, dtype=torch.int64)
        self.k = k

    def update(self, rows: slice, tile: torch.Tensor, offset: int) -> None:
        """Merge tile (len(rows) x m, columns offset..offset+m) into the lists of `rows`."""
        kk = min(self.k, tile.shape[1])
        tv, ti = _grouped_top(tile, kk)
        # tiles come in column order: the lists' entries are the lower columns, first in ties
        self.v[rows], self.i[rows] = merge_top(self.v[rows], self.i[rows], tv, ti + offset, self.k)


class BlockedIndex:
    """The database side prepared once (in the multiply's precision), searched by blocks."""

    def __init__(self, y: np.ndarray, precision: str = "fp32"):
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; choose one of {PRECISIONS}")
        if len(y) == 0:
            raise ValueError("cannot search an empty side")
        self.y, self.precision = y, precision
        self.dtype = torch.bfloat16 if precision == "bf16" else torch.float32
        # (dim, n): a tile is a slice of columns
        self.ty = torch.from_numpy(np.ascontiguousarray(y)).to(self.dtype).T.contiguous()
        self.ntotal = len(y)

    def search(self, x: np.ndarray, k: int, slack: int | None = None, block_x: int = 8192,
               block_y: int = 16384):
        """(D, I): each row of x's k nearest rows by inner product, best first."""
        if len(x) == 0:
            raise ValueError("cannot search with no queries")
        k = min(k, self.ntotal)
        extra = (k if slack is None else slack) if self.precision == "bf16" else 0
        lists = _TopK(len(x), min(k + extra, self.ntotal))
        with torch.inference_mode():
            for a in range(0, len(x), block_x):
                xa = torch.from_numpy(np.ascontiguousarray(x[a: a + block_x])).to(self.dtype)
                rows = slice(a, a + len(xa))
                for b in range(0, self.ntotal, block_y):
                    lists.update(rows, xa @ self.ty[:, b: b + block_y], b)
        return rescore_exact(lists.i.numpy(), x, self.y, k)


def knn(x: np.ndarray, y: np.ndarray, k: int, precision: str = "fp32", **kw) -> tuple[np.ndarray, np.ndarray]:
    """(D, I): each row of x's k nearest rows of y by inner product, best first.
    x, y: unit rows (float16 or float32)."""
    if len(x) == 0:
        raise ValueError("cannot search an empty side")
    return BlockedIndex(y, precision).search(x, k, **kw)


def knn_both(x: np.ndarray, y: np.ndarray, k: int, precision: str = "fp32", **kw) -> tuple[tuple, tuple]:
    """(x's k nearest rows of y, y's k nearest rows of x), each as (D, I)."""
    return knn(x, y, k, precision, **kw), knn(y, x, k, precision, **kw)


def rescore_exact(ids: np.ndarray, q: np.ndarray, db: np.ndarray, k: int, chunk: int = 8192):
    """Candidate rows `ids` of each query scored in float32 and cut to k (ties to the lower row);
    an empty place (id -1) scores -inf and stays last."""
    out_d = np.empty((len(q), k), np.float32)
    out_i = np.empty((len(q), k), np.int64)
    for s in range(0, len(q), chunk):
        idx = ids[s: s + chunk]
        qq = np.asarray(q[s: s + chunk], dtype=np.float32)
        d = np.einsum("nd,nkd->nk", qq, np.asarray(db[idx], dtype=np.float32))  # no copy of float32 rows
        d[idx < 0] = -np.inf
        order = np.argsort(idx, axis=1, kind="stable")
        d, idx = np.take_along_axis(d, order, 1), np.take_along_axis(idx, order, 1)
        order = np.argsort(-d, axis=1, kind="stable")[:, :k]
        out_d[s: s + chunk] = np.take_along_axis(d, order, 1)
        out_i[s: s + chunk] = np.take_along_axis(idx, order, 1)
    return out_d, out_i
