"""Which index to build for a corpus of a given size, and building FAISS ones.

Exact inner-product search ("Flat", index.blocked) up to EXACT_MAX_ROWS rows (its cost grows
as the square of the corpus); above, inverted lists of the vectors themselves ("IVF<n>,Flat",
index.ivf: FAISS's IVFFlat searched as matrix multiplies) while the vectors fit in the memory
budget; beyond that an IVF index with product quantization, sized the way stopes and the FAISS guidelines size
it: about 8 * sqrt(N) inverted lists (a power of two), OPQ rotation + PQ with 64 sub-vectors,
trained on a sample of at least 40 vectors per list. Vectors are L2-normalized so inner
product = cosine.
"""
from __future__ import annotations

import math
import re
from typing import Callable, Iterable

import faiss
import numpy as np

DEFAULT_FLAT_MAX_BYTES = 4 << 30  # exact search up to 4 GiB of float32 vectors
DEFAULT_NPROBE = 128
# two-stage mining of 300k lines a side: exact search 507 s of a 688 s run, IVF2048,Flat 150 s
# of 373 s at the same F1 (74.9; docs/guide/mining.md, At scale); at 100k exact takes 57 s
EXACT_MAX_ROWS = 200_000
_BLOCKED_IVF = re.compile(r"IVF(\d+),Flat")


def choose_index(n: int, dim: int, flat_max_bytes: int = DEFAULT_FLAT_MAX_BYTES) -> str:
    """Factory string for `n` vectors of size `dim`."""
    if n * dim * 4 > flat_max_bytes:
        return ivfpq_string(n, dim)
    return "Flat" if n <= EXACT_MAX_ROWS else f"IVF{ivf_lists(n)},Flat"


def ivf_lists(n: int) -> int:
    """About 4 * sqrt(n) lists (a power of two), so that DEFAULT_NPROBE lists are about 3% of
    them at a million rows."""
    return int(min(max(2 ** round(math.log2(max(4 * math.sqrt(max(n, 1)), 1))), 16), 65536, max(n // 64, 1)))


def blocked_ivf_lists(factory: str) -> int:
    """The list count of an "IVF<n>,Flat" factory (searched by index.ivf), else 0."""
    m = _BLOCKED_IVF.fullmatch(factory)
    return int(m.group(1)) if m else 0


def ivfpq_string(n: int, dim: int) -> str:
    nlist = 2 ** round(math.log2(max(8 * math.sqrt(max(n, 1)), 1)))
    nlist = int(min(max(nlist, 16), 262144, max(16, n // 40)))
    m = max(m for m in range(1, 65) if dim % m == 0)  # sub-vectors: largest divisor <= 64
    return f"OPQ{m},IVF{nlist},PQ{m}"


def n_lists(factory: str) -> int:
    for part in factory.split(","):
        if part.startswith("IVF"):
            return int(part[3:].split("_")[0])
    return 0


def train_sample_size(factory: str, n: int) -> int:
    nlist = n_lists(factory)
    return n if not nlist else min(n, max(64 * nlist, 50_000))


def build_index(factory: str, dim: int, train: np.ndarray | None,
                batches: Iterable[np.ndarray], nprobe: int = DEFAULT_NPROBE,
                on_batch: Callable[[int], None] | None = None) -> faiss.Index:
    """Create, train (if needed) and fill an inner-product index from float batches."""
    index = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    if not index.is_trained:
        if train is None or len(train) == 0:
            raise ValueError(f"index {factory} needs training vectors")
        index.train(np.ascontiguousarray(train, dtype=np.float32))
    for batch in batches:
        index.add(np.ascontiguousarray(batch, dtype=np.float32))
        if on_batch:
            on_batch(len(batch))
    set_nprobe(index, nprobe)
    return index


def set_nprobe(index: faiss.Index, nprobe: int) -> None:
    ivf = faiss.try_extract_index_ivf(index)
    if ivf is not None:
        ivf.nprobe = int(min(nprobe, ivf.nlist))


def save_index(index: faiss.Index, path) -> None:
    faiss.write_index(index, str(path))


def load_index(path, nprobe: int = DEFAULT_NPROBE) -> faiss.Index:
    index = faiss.read_index(str(path))
    set_nprobe(index, nprobe)
    return index
