import numpy as np
import pytest
import torch

from xlingua.similarity import (cosine_matrix, inbatch_normalize, knn_mean, normalize_rows,
                                pair_scores, retrieval_accuracy, score_matrix)


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
    m = pair_scores(sim, x_mean, y_mean, "ratio")
    assert m[0, 0] == pytest.approx(0.80 / ((0.79 + 0.795) / 2))
    assert m[0, 1] == pytest.approx(0.78 / ((0.79 + 0.49) / 2))
    assert sim[0].argmax() == 0 and m[0].argmax() == 1
    assert np.allclose(pair_scores(sim, x_mean, y_mean, "distance"), sim - (x_mean + y_mean) / 2)
    assert np.allclose(pair_scores(sim, x_mean, y_mean, "csls"), 2 * sim - x_mean - y_mean)
    assert np.array_equal(pair_scores(sim, x_mean, y_mean, "absolute"), sim)
    assert np.allclose(pair_scores(sim, x_mean, y_mean, "inbatch", alpha=0.25), sim - 0.25 * (x_mean + y_mean))
    with pytest.raises(ValueError, match="unknown score 'bogus'"):
        pair_scores(sim, x_mean, y_mean, "bogus")


def test_margin_matrix_equals_manual_computation():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(6, 3))
    sim = cosine_matrix(x, y)
    expected = sim - (knn_mean(sim, 3)[:, None] + knn_mean(sim.T, 3)[None, :]) / 2
    assert np.allclose(score_matrix(x, y, "distance", k=3), expected, atol=1e-6)
    assert np.allclose(score_matrix(x, y, "csls", k=3), 2 * expected, atol=1e-6)
    # in-batch: each side's statistic is its mean cosine to the whole other side
    assert np.allclose(score_matrix(x, y, "inbatch", alpha=0.5),
                       inbatch_normalize(sim, alpha=0.5, global_term=False), atol=1e-6)
    assert np.array_equal(score_matrix(x, y, "absolute"), sim)


def test_retrieval_accuracy_both_directions():
    s = np.array([[0.9, 0.1, 0.0],
                  [0.8, 0.7, 0.0],   # row 1 prefers column 0: wrong
                  [0.0, 0.1, 0.5]])
    fwd, bwd = retrieval_accuracy(s)
    assert fwd == pytest.approx(200 / 3)   # rows 0 and 2 right
    assert bwd == pytest.approx(100.0)     # column argmaxes 0, 1, 2
