import faiss
import numpy as np
import pytest

from xlingua.index import (build_index, choose_index, exact_knn_streamed, flat_index, ivfpq_string,
                           recall, search)


def _unit(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_choose_index_exact_while_it_fits_then_ivfpq_by_size():
    assert choose_index(1000, 384) == "Flat"
    assert choose_index(10_000_000, 1024, flat_max_bytes=1 << 30) == "OPQ64,IVF32768,PQ64"
    # ~8 sqrt(N) lists, a power of two; at least 40 training vectors per list
    assert ivfpq_string(1_000_000, 384) == "OPQ64,IVF8192,PQ64"
    assert ivfpq_string(2000, 384).split(",")[1] == "IVF50"
    assert ivfpq_string(10_000, 100).endswith("PQ50")


def test_streamed_exact_knn_equals_one_flat_index():
    rng = np.random.default_rng(0)
    db, q = _unit(rng, 103, 16), _unit(rng, 20, 16)
    shards = [db[:50], db[50:100], db[100:]]  # the last shard is smaller than k
    d_ref, i_ref = search(flat_index(shards), q, 5)
    d, i = exact_knn_streamed(q, lambda s: shards[s], 3, 5)
    np.testing.assert_array_equal(i, i_ref)
    np.testing.assert_allclose(d, d_ref, rtol=1e-6)
    brute = np.argsort(-(q @ db.T), axis=1)[:, :5]
    np.testing.assert_array_equal(i, brute)


def test_search_caps_k_at_index_size():
    rng = np.random.default_rng(1)
    d, i = search(flat_index([_unit(rng, 3, 8)]), _unit(rng, 2, 8), 10)
    assert i.shape == (2, 3) and (i >= 0).all()


def test_recall_hand_computed():
    exact = np.array([[1, 2], [3, 4]])
    approx = np.array([[1, 9], [4, 3]])
    r = recall(approx, exact)
    assert r["recall@1"] == 0.5 and r["recall@2"] == 0.75


def test_ivfpq_index_is_approximate_and_recall_is_measured():
    rng = np.random.default_rng(2)
    centers = _unit(rng, 20, 32)
    db = centers[rng.integers(0, 20, 4000)] + 0.3 * rng.standard_normal((4000, 32)).astype(np.float32)
    db /= np.linalg.norm(db, axis=1, keepdims=True)
    q = db[:200] + 0.05 * rng.standard_normal((200, 32)).astype(np.float32)
    index = build_index("IVF64,PQ8x4", 32, db, [db[:2000], db[2000:]], nprobe=4)
    assert isinstance(faiss.extract_index_ivf(index), faiss.IndexIVF) and index.ntotal == 4000
    _, approx = search(index, q, 4)
    _, exact = exact_knn_streamed(q, lambda s: db, 1, 4)
    r = recall(approx, exact)
    assert 0.3 < r["recall@1"] < 1.0  # 4-bit PQ8 on 32 dims loses some neighbours, but not most
    assert recall(exact, exact)["recall@1"] == 1.0


def test_ivf_needs_training_vectors():
    with pytest.raises(ValueError, match="needs training"):
        build_index("IVF4,Flat", 8, None, [])
