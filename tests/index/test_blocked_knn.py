"""Blocked exact kNN: equal to FAISS's exact inner-product search, ties included."""
import faiss
import numpy as np
import pytest

from xlingua.index.blocked import knn, knn_both


def _faiss(x, y, k):
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(y.astype(np.float32))
    return index.search(x.astype(np.float32), k)


def _unit(rng, n, d):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# (query block, database block, database rows): small blocks sort whole tiles; tiles of 2,048
# and more columns go through the groups of their best values (blocked.GROUP)
@pytest.mark.parametrize("blocks", [(7, 5, 250), (64, 1000, 250), (100, 2048, 5000)])
def test_fp32_equals_faiss_flat_on_random_vectors(blocks):
    rng = np.random.default_rng(0)
    x, y = _unit(rng, 300, 16), _unit(rng, blocks[2], 16)
    d, i = knn(x, y, 4, "fp32", block_x=blocks[0], block_y=blocks[1])
    fd, fi = _faiss(x, y, 4)
    assert np.array_equal(i, fi)
    assert np.allclose(d, fd, atol=1e-6)


@pytest.mark.parametrize("blocks", [(16, 32, 300), (64, 2560, 6000)])
def test_ties_go_to_the_lower_row_as_in_faiss(blocks):
    # small integer vectors: many exactly equal inner products
    rng = np.random.default_rng(1)
    x = rng.integers(-1, 2, size=(200, 4)).astype(np.float32)
    y = rng.integers(-1, 2, size=(blocks[2], 4)).astype(np.float32)
    d, i = knn(x, y, 5, "fp32", block_x=blocks[0], block_y=blocks[1])
    fd, fi = _faiss(x, y, 5)
    assert np.array_equal(d, fd)
    scores = x @ y.T
    for row, (ids, fids, vals) in enumerate(zip(i, fi, d)):
        # above the k-th score both hold the same rows; at it, rows of that score (FAISS's
        # heap picks among them by its own order, this search takes the lowest rows)
        above = vals > vals[-1]
        assert set(ids[above]) == set(fids[above])
        assert np.array_equal(scores[row, ids], vals)
        tied = np.nonzero(scores[row] == vals[-1])[0]
        assert list(ids[~above]) == sorted(tied)[: int((~above).sum())]


def test_both_directions_and_k_capped_by_the_other_side():
    rng = np.random.default_rng(2)
    x, y = _unit(rng, 3, 8), _unit(rng, 50, 8)
    (df, i_f), (db, i_b) = knn_both(x, y, 4, "fp32")
    assert i_f.shape == (3, 4) and i_b.shape == (50, 3)
    assert np.array_equal(i_b, _faiss(y, x, 3)[1])


def test_bf16_chooses_candidates_and_scores_them_exactly():
    rng = np.random.default_rng(3)
    x, y = _unit(rng, 400, 32), _unit(rng, 500, 32)
    d, i = knn(x, y, 4, "bf16", block_x=64, block_y=128)
    # every score is the float32 inner product of the pair it names
    assert np.allclose(d, np.einsum("nd,nkd->nk", x, y[i]), atol=1e-6)
    fd, fi = _faiss(x, y, 4)
    assert np.mean(i[:, 0] == fi[:, 0]) > 0.97


def test_unknown_precision_and_empty_sides_are_refused():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="unknown precision"):
        knn(x, x, 1, "fp8")
    with pytest.raises(ValueError, match="empty"):
        knn(x[:0], x, 1)
