"""BERTScore F and Word Mover's Distance on hand-computed token sets."""
import numpy as np
import pytest
import torch

from xlingua.similarity.bertscore import bertscore_full, bertscore_matrix, bertscore_paired, bertscore_retrieve
from xlingua.similarity.wmd import wmd, wmd_pairs


def test_bertscore_hand_case():
    x = torch.tensor([[[1.0, 0.0], [0.0, 2.0]]])  # two tokens
    y = torch.tensor([[[3.0, 0.0]]])              # one token
    # R over x: (1 + 0) / 2; P over y: 1; F = 2 * .5 * 1 / 1.5
    f = bertscore_matrix(x, torch.ones(1, 2), y, torch.ones(1, 1))
    assert f.item() == pytest.approx(2 / 3, abs=1e-6)


def test_bertscore_ignores_padding():
    x = torch.tensor([[[1.0, 0.0], [0.0, 2.0]]])
    y = torch.tensor([[[3.0, 0.0], [0.0, 1.0]]])  # second token is padding
    f = bertscore_matrix(x, torch.ones(1, 2), y, torch.tensor([[1.0, 0.0]]))
    assert f.item() == pytest.approx(2 / 3, abs=1e-6)
    full = bertscore_matrix(x, torch.ones(1, 2), y, torch.ones(1, 2))
    assert full.item() == pytest.approx(1.0, abs=1e-6)


def test_bertscore_stays_bounded_with_negative_cosines():
    # cosines -0.8 and 0: P = 0, R = -0.4, so unfloored F = 0; with P = 0.1, R = -0.1 it would
    # divide by zero. Flooring P and R at 1e-6 keeps F in (0, 1].
    x = torch.tensor([[[-1.0, 0.0], [0.6, 0.8]]])
    y = torch.tensor([[[0.8, -0.6]]])
    f = bertscore_matrix(x, torch.ones(1, 2), y, torch.ones(1, 1))
    assert 0 < f.item() < 1e-5
    x = torch.tensor([[[1.0, 0.0]]])
    y = torch.tensor([[[0.1, 0.995]], [[-0.1, 0.995]]])
    f = bertscore_matrix(x, torch.ones(1, 1), y, torch.ones(2, 1))
    assert f[0, 0].item() == pytest.approx(0.1, rel=0.01) and 0 < f[0, 1].item() < 1e-5


def test_bertscore_retrieve_from_cached_tokens():
    rng = np.random.default_rng(0)
    cands = [rng.normal(size=(n, 8)).astype(np.float32) for n in (3, 5, 4, 2)]
    queries = [c + 0.01 * rng.normal(size=c.shape).astype(np.float32) for c in cands[::-1]]
    scores, idx = bertscore_retrieve(queries, cands, k=2, max_elements=3 * 4 * 5 * 5)  # 3 queries a block
    assert idx[:, 0].tolist() == [3, 2, 1, 0]
    assert (scores[:, 0] >= scores[:, 1]).all()
    _, idx_norm = bertscore_retrieve(queries, cands, k=1, inbatch_alpha=0.5)
    assert idx_norm[:, 0].tolist() == [3, 2, 1, 0]


def test_bertscore_full_in_blocks_and_paired_equal_the_matrix():
    rng = np.random.default_rng(1)
    xs = [rng.normal(size=(n, 6)).astype(np.float32) for n in (2, 7, 3, 1, 4)]
    ys = [rng.normal(size=(n, 6)).astype(np.float32) for n in (5, 1, 3, 6, 2)]
    whole = bertscore_full(xs, ys)
    np.testing.assert_allclose(bertscore_full(xs, ys, max_elements=1), whole, atol=1e-6)  # one query a block
    for i, x in enumerate(xs):
        for j, y in enumerate(ys):
            one = bertscore_matrix(torch.from_numpy(x)[None], torch.ones(1, len(x)),
                                   torch.from_numpy(y)[None], torch.ones(1, len(y)))
            assert whole[i, j] == pytest.approx(one.item(), abs=1e-6)
    np.testing.assert_allclose(bertscore_full(xs, ys, max_elements=3 * 19), whole, atol=1e-6)  # uneven blocks
    with pytest.raises(ValueError, match="at least one token"):
        bertscore_full([xs[0], xs[0][:0]], ys)
    np.testing.assert_allclose(bertscore_paired(xs, ys, chunk=2), np.diag(whole), atol=1e-6)
    with pytest.raises(ValueError, match="as many left as right"):
        bertscore_paired(xs, ys[:2])


def test_wmd_hand_cases():
    assert wmd(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]])) == pytest.approx(5.0)
    # same bag of tokens in another order: nothing to move
    assert wmd(np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 0.0]])) == pytest.approx(0.0, abs=1e-9)
    # two half-weight tokens each move 1 to the single token in the middle
    assert wmd(np.array([[0.0, 0.0], [2.0, 0.0]]), np.array([[1.0, 0.0]])) == pytest.approx(1.0)
    # uniform weights: 3 tokens to 2, each a third; the optimal plan splits the middle token
    a = np.array([[0.0], [1.0], [2.0]])
    b = np.array([[0.0], [2.0]])
    assert wmd(a, b) == pytest.approx(1 / 3)


def test_wmd_sinkhorn_approximates_emd_and_bad_method():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(5, 4)), rng.normal(size=(7, 4))
    exact = wmd(a, b)
    assert wmd(a, b, method="sinkhorn", reg=0.01) == pytest.approx(exact, rel=0.05)
    assert wmd_pairs([a, b], [b, a]).tolist() == pytest.approx([exact, exact], rel=1e-5)
    with pytest.raises(ValueError, match="unknown WMD method"):
        wmd(a, b, method="greedy")
    with pytest.raises(ValueError, match="non-empty"):
        wmd(a[:0], b)
