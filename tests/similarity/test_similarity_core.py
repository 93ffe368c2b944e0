import numpy as np
import pytest
import torch

from xlingua.similarity import (apply_margin, cosine_matrix, csls_matrix, inbatch_normalize,
                                knn_mean, margin_matrix, normalize_rows)


def test_normalize_rows_keeps_zero_rows_finite():
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    out = normalize_rows(x)
    assert np.allclose(out[0], [0.6, 0.8])
    assert np.all(out[1] == 0)


def test_knn_mean_picks_top_k():
    sim = np.array([[0.1, 0.9, 0.5, 0.7]])
    assert knn_mean(sim, 2)[0] == pytest.approx(0.8)
    assert knn_mean(sim, 10)[0] == pytest.approx(0.55)  # k capped at the row length


def test_ratio_margin_flips_the_top1_of_a_hub():
    # Cosine picks column 0 for row 0, but column 0 is a hub close to every row;
    # the ratio margin with k=2 prefers column 1 (hand-computed below).
    sim = np.array([[0.80, 0.78, 0.10],
                    [0.79, 0.20, 0.10],
                    [0.78, 0.10, 0.30]], dtype=np.float32)
    x_mean = knn_mean(sim, 2)[:, None]      # rows: .79, .495, .54
    y_mean = knn_mean(sim.T, 2)[None, :]    # cols: .795, .49, .20
    m = apply_margin(sim, x_mean, y_mean, "ratio")
    assert m[0, 0] == pytest.approx(0.80 / ((0.79 + 0.795) / 2))
    assert m[0, 1] == pytest.approx(0.78 / ((0.79 + 0.49) / 2))
    assert sim[0].argmax() == 0 and m[0].argmax() == 1
    assert np.allclose(apply_margin(sim, x_mean, y_mean, "distance"), sim - (x_mean + y_mean) / 2)
    assert np.array_equal(apply_margin(sim, x_mean, y_mean, "absolute"), sim)
    with pytest.raises(ValueError, match="unknown margin"):
        apply_margin(sim, x_mean, y_mean, "bogus")


def test_margin_matrix_equals_manual_computation():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(6, 3))
    sim = cosine_matrix(x, y)
    expected = sim - (knn_mean(sim, 3)[:, None] + knn_mean(sim.T, 3)[None, :]) / 2
    assert np.allclose(margin_matrix(x, y, k=3, margin="distance"), expected, atol=1e-6)
    assert np.allclose(csls_matrix(x, y, k=3), 2 * expected, atol=1e-6)


def test_inbatch_normalization_hand_case():
    f = np.array([[1.0, 0.0], [0.5, 0.5]])
    # row means .5, .5; col means .75, .25; global mean .5; alpha = .5 -> global term 0
    s = inbatch_normalize(f, alpha=0.5)
    assert np.allclose(s, [[1 - 0.5 * 1.25, 0 - 0.5 * 0.75], [0.5 - 0.5 * 1.25, 0.5 - 0.5 * 0.75]])
    s1 = inbatch_normalize(f, alpha=1.0)
    assert np.allclose(s1, f - (f.mean(1, keepdims=True) + f.mean(0, keepdims=True)) + 0.5)
    t = inbatch_normalize(torch.tensor(f), alpha=1.0)
    assert np.allclose(t.numpy(), s1)
    assert np.allclose(inbatch_normalize(f, alpha=1.0, global_term=False), s1 - 0.5)
