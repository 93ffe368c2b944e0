"""The on-disk embedding cache: hits skip the encoder, rows come back exact, several
processes can fill one cache at once."""
import multiprocessing as mp
import time

import numpy as np
import pytest

from eval_toys import LookupEncoder
from xlingua.encoders.cache import CachedEncoder, EmbeddingCache


def test_second_call_embeds_nothing_and_rows_are_identical(tmp_path):
    inner = LookupEncoder({}, dim=8)
    enc = CachedEncoder(inner, cache_dir=tmp_path, chunk_size=2)
    texts = ["a", "b", "a", "c", "d"]
    first = enc.encode(texts)
    assert inner.calls == 4                       # the repeated "a" is embedded once
    assert np.array_equal(first[0], first[2])
    second = CachedEncoder(inner, cache_dir=tmp_path).encode(["d", "c", "new"])
    assert inner.calls == 5                       # only "new"
    assert np.array_equal(second[0], first[4]) and np.array_equal(second[1], first[3])
    assert np.array_equal(first, inner.encode(texts))  # what the bare encoder gives


def test_fingerprints_do_not_share_rows(tmp_path):
    a = CachedEncoder(LookupEncoder({"x": [1.0, 0.0]}, 2, name="a"), cache_dir=tmp_path)
    b = CachedEncoder(LookupEncoder({"x": [0.0, 1.0]}, 2, name="b"), cache_dir=tmp_path)
    assert np.array_equal(a.encode(["x"]), [[1.0, 0.0]])
    assert np.array_equal(b.encode(["x"]), [[0.0, 1.0]])
    assert a.cache.path != b.cache.path


def test_put_checks_lengths(tmp_path):
    cache = EmbeddingCache("fp", tmp_path)
    with pytest.raises(ValueError, match="2 texts but 1 vectors"):
        cache.put(["a", "b"], np.zeros((1, 3)))
    cache.put(["a"], np.ones((1, 3)))
    assert len(cache) == 1 and np.array_equal(cache.get(["a", "zz"])["a"], np.ones(3, np.float32))


def _fill(args):
    cache_dir, start = args
    enc = CachedEncoder(LookupEncoder({}, dim=16), cache_dir=cache_dir, chunk_size=7)
    return enc.encode([f"s{i}" for i in range(start, start + 200)])


def test_concurrent_processes_fill_one_cache(tmp_path):
    # Four processes with overlapping texts write the same SQLite file at once.
    with mp.get_context("spawn").Pool(4) as pool:
        outs = pool.map(_fill, [(str(tmp_path), s) for s in (0, 50, 100, 150)])
    expected = LookupEncoder({}, dim=16).encode([f"s{i}" for i in range(350)])
    for start, out in zip((0, 50, 100, 150), outs):
        assert np.array_equal(out, expected[start:start + 200])
    cache = EmbeddingCache("lookup-16", tmp_path)
    assert len(cache) == 350
    got = cache.get([f"s{i}" for i in range(350)])
    assert all(np.array_equal(got[f"s{i}"], expected[i]) for i in range(350))


def _open_at(args):
    root, start_at = args
    while time.time() < start_at:  # every process opens the new file at the same moment
        pass
    EmbeddingCache("fp", root).put(["x"], np.ones((1, 2)))


def test_processes_opening_a_new_cache_at_once_all_get_it(tmp_path):
    # Switching a new file to WAL from several connections at once made SQLite answer
    # "database is locked" without waiting (about 7% of opens, 6 processes on 2 cores).
    with mp.get_context("spawn").Pool(6) as pool:
        for round_ in range(10):
            root = tmp_path / str(round_)
            pool.map(_open_at, [(str(root), time.time() + 0.3)] * 6)
            assert len(EmbeddingCache("fp", root)) == 1
