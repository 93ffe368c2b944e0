"""Inverted lists searched as multiplies: FAISS's IVFFlat result on the same centroids."""
import faiss
import numpy as np
import pytest

from xlingua.index.blocked import knn
from xlingua.index.factory import blocked_ivf_lists, choose_index
from xlingua.index.ivf import IvfIndex, assign, train_centroids


def _unit(rng, n, d):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _faiss_ivf(y, centroids, x, k, nprobe):
    quantizer = faiss.IndexFlatIP(y.shape[1])
    quantizer.add(centroids)
    index = faiss.IndexIVFFlat(quantizer, y.shape[1], len(centroids), faiss.METRIC_INNER_PRODUCT)
    index.is_trained = True
    index.add(y)
    index.nprobe = nprobe
    return index.search(x, k)


@pytest.mark.parametrize("nprobe", [1, 3, 16])
@pytest.mark.parametrize("block_x", [50, 4096])
def test_fp32_equals_faiss_ivfflat_on_the_same_centroids(nprobe, block_x):
    rng = np.random.default_rng(0)
    y, x = _unit(rng, 3000, 16), _unit(rng, 300, 16)
    centroids = train_centroids(y[:1000], 16)
    d, i = IvfIndex(y, centroids).search(x, 4, nprobe, block_x=block_x)
    fd, fi = _faiss_ivf(y, centroids, x, 4, nprobe)
    assert np.array_equal(i, fi)
    assert np.allclose(d, fd, atol=1e-6)


def test_ties_go_to_the_lower_row():
    rng = np.random.default_rng(1)
    y = rng.integers(-1, 2, size=(800, 4)).astype(np.float32)  # many equal inner products
    x = rng.integers(-1, 2, size=(100, 4)).astype(np.float32)
    centroids = np.eye(4, dtype=np.float32)
    d, i = IvfIndex(y, centroids).search(x, 5, nprobe=4)
    fd, fi = knn(x, y, 5, "fp32")  # every list probed: exact search, ties to the lower row
    assert np.array_equal(d, fd) and np.array_equal(i, fi)


def test_bf16_chooses_candidates_and_scores_them_exactly():
    rng = np.random.default_rng(2)
    y, x = _unit(rng, 4000, 32), _unit(rng, 500, 32)
    centroids = train_centroids(y, 32)
    d, i = IvfIndex(y, centroids, precision="bf16").search(x, 4, nprobe=32)
    fd, fi = knn(x, y, 4, "fp32")
    assert np.array_equal(i, fi)  # all lists probed: the exact neighbours
    assert np.allclose(d, np.einsum("nd,nkd->nk", x, y[i]), atol=1e-6)


def test_a_query_whose_lists_hold_fewer_than_k_rows_is_padded():
    y = np.array([[1, 0], [0.9, 0.1], [0, 1]], np.float32)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    centroids = np.array([[1, 0], [0, 1]], np.float32)
    x = np.array([[1, 0], [0, 1]], np.float32)
    d, i = IvfIndex(y, centroids).search(x, 3, nprobe=1)
    assert i.tolist() == [[0, 1, -1], [2, -1, -1]]
    assert np.isneginf(d[0, 2]) and np.isneginf(d[1, 1:]).all()


def test_assign_takes_the_nearest_centroids_in_order():
    centroids = np.array([[1, 0], [0, 1], [-1, 0]], np.float32)
    x = np.array([[0.8, 0.6], [-0.6, 0.8]], np.float32)
    assert assign(x, centroids, 2).tolist() == [[0, 1], [1, 2]]


def test_the_index_is_exact_to_200k_rows_then_inverted_lists():
    assert choose_index(200_000, 256) == "Flat"
    assert choose_index(300_000, 256) == "IVF2048,Flat"
    assert choose_index(1_000_000, 256) == "IVF4096,Flat"
    assert blocked_ivf_lists("IVF4096,Flat") == 4096 and blocked_ivf_lists("OPQ64,IVF8192,PQ64") == 0
    assert choose_index(10_000_000, 1024, flat_max_bytes=1 << 30) == "OPQ64,IVF32768,PQ64"


def test_a_large_list_is_multiplied_in_tiles_with_the_same_result(monkeypatch):
    rng = np.random.default_rng(3)
    y, x = _unit(rng, 2000, 16), _unit(rng, 400, 16)
    centroids = train_centroids(y, 8)
    whole = IvfIndex(y, centroids, precision="bf16").search(x, 4, nprobe=3)
    monkeypatch.setattr("xlingua.index.ivf.TILE", 1000)  # a few queries per multiply
    tiled = IvfIndex(y, centroids, precision="bf16").search(x, 4, nprobe=3)
    assert np.array_equal(whole[1], tiled[1]) and np.array_equal(whole[0], tiled[0])
