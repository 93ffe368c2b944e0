"""The pair features [u, v, |u - v|, u * v] of the pair regressor, the QE head and XNLI."""
import numpy as np
import pytest

from xlingua.similarity.pair_regressor import pair_features


def test_layout_of_raw_vectors():
    u, v = np.array([[1.0, -2.0]]), np.array([[3.0, 1.0]])
    got = pair_features(u, v, normalize=False)
    assert got.dtype == np.float32 and np.allclose(got, [[1, -2, 3, 1, 2, 3, 3, -2]])


def test_vectors_are_normalized_by_default():
    u, v = np.array([[3.0, 4.0]]), np.array([[0.0, 2.0]])
    assert np.allclose(pair_features(u, v), [[0.6, 0.8, 0, 1, 0.6, 0.2, 0, 0.8]])


def test_unequal_shapes():
    with pytest.raises(ValueError, match="equal shapes"):
        pair_features(np.zeros((2, 3)), np.zeros((3, 3)))
