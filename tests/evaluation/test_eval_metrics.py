"""Each metric on a toy whose answer is known by hand."""
import numpy as np
import pytest

from xlingua.evaluation.tasks.classify import cv_accuracy
from xlingua.evaluation.tasks.eigen import eigen_similarity, laplacian_spectrum, sampled_eigen_similarity
from xlingua.evaluation.tasks.retrieval import precision_at_1
from xlingua.evaluation.tasks.sts import correlations, pair_cosines
from xlingua.evaluation.tasks.tatoeba import XTREME36, score_matrices, subset_langs
from xlingua.similarity import retrieval_accuracy


def test_margin_flips_the_top1_of_a_hub():
    # x_i translates y_i. y1 is a hub (about equally close to every x), so by cosine its
    # nearest x is x0 (0.698 > 0.645); the ratio margin divides by the hub's high
    # neighbourhood mean and x0's, and picks x1.
    x = np.array([[1, 0.2, 0], [0, 1, 0.1], [0.1, 0, 1]], float)
    y = np.array([[1, 0.05, 0], [0.6, 0.6, 0.55], [0.05, 0.1, 1]], float)
    s = score_matrices(x, y, k=2, alpha=0.5)
    assert s["cosine"][:, 1].argmax() == 0
    assert s["margin"][:, 1].argmax() == 1
    assert retrieval_accuracy(s["cosine"]) == pytest.approx((100.0, 200 / 3))
    assert retrieval_accuracy(s["margin"]) == pytest.approx((100.0, 100.0))
    # in-batch normalization subtracts each column's mean: the hub column loses its lead too
    assert s["inbatch"][:, 1].argmax() == 1
    assert s["inbatch"][0, 1] == pytest.approx(s["cosine"][0, 1] - 0.5 * (s["cosine"][0].mean() + s["cosine"][:, 1].mean()))


def test_subset_langs():
    present = ["afr", "deu", "xho"]
    assert subset_langs("tatoeba36", present)[0] == ["afr", "deu"]
    assert len(subset_langs("tatoeba36", present)[1]) == len(XTREME36) - 2
    assert subset_langs("all", present)[0] == present
    assert subset_langs("xho,deu", present)[0] == ["xho", "deu"]
    with pytest.raises(ValueError, match="no data for"):
        subset_langs("deu,kli", present)


def test_spearman_and_pearson_on_a_toy():
    # ranks of pred 1,3,2,5,4 vs gold 1..5: sum d^2 = 4, rho = 1 - 6*4/(5*24) = 0.8
    out = correlations([0.1, 0.5, 0.3, 0.9, 0.7], [1, 2, 3, 4, 5])
    assert out["spearman"] == pytest.approx(80.0)
    assert correlations([1, 2, 3], [2, 4, 6])["pearson"] == pytest.approx(100.0)
    with pytest.raises(ValueError, match="at least 3"):
        correlations([1, 2], [1, 2])


def test_pair_cosines():
    a = np.array([[1.0, 0.0], [3.0, 4.0]])
    b = np.array([[0.0, 2.0], [3.0, 4.0]])
    assert np.allclose(pair_cosines(a, b), [0.0, 1.0])


def test_precision_at_1_with_sampled_distractors():
    rng = np.random.default_rng(0)
    y = rng.standard_normal((50, 8))
    x = y + 0.01 * rng.standard_normal((50, 8))
    assert precision_at_1(x, y, distractors=10) == pytest.approx(100.0)
    x[3] = y[4]  # query 3 now equals y4: wrong whenever y4 is among its distractors
    full = precision_at_1(x, y, distractors=999)  # 49 others -> all used
    assert full == pytest.approx(98.0)
    assert 98.0 <= precision_at_1(x, y, distractors=10, seed=1) <= 100.0


def test_eigen_similarity_hand_case():
    # 3 orthogonal vectors: no edges, Laplacian 0. 3 equal vectors: A = J - I, L = 3I - J,
    # eigenvalues 3, 3, 0; 90% of 6 needs k = 2 -> delta = (0-3)^2 + (0-3)^2 = 18.
    ortho = np.eye(3)
    same = np.ones((3, 3))
    assert np.allclose(laplacian_spectrum(same), [3, 3, 0])
    assert eigen_similarity(ortho, same) == pytest.approx(18.0)
    rot = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 5)))[0]
    x = np.random.default_rng(1).standard_normal((10, 5))
    assert eigen_similarity(x, x @ rot) == pytest.approx(0.0, abs=1e-8)  # isometry: same graph
    assert sampled_eigen_similarity(x, x @ rot, samples=5, size=4) == pytest.approx(0.0, abs=1e-8)


def test_classify_cv_separable_toy():
    rng = np.random.default_rng(0)
    y = np.array([0, 1] * 20)
    x = rng.standard_normal((40, 3)) * 0.1
    x[:, 0] += np.where(y == 1, 2.0, -2.0)
    assert cv_accuracy(x, y, folds=2, grid=[1.0]) == pytest.approx(100.0)


def test_report_prints_correlations_with_three_decimals_and_scores_with_one():
    from xlingua.evaluation.report import fmt

    assert [fmt(0.2704), fmt(-0.08), fmt(1.0), fmt(1.2), fmt(84.71), fmt(0.0), fmt(None), fmt(7)] == \
        ["0.270", "-0.080", "1.000", "1.2", "84.7", "0.0", "-", "7"]
