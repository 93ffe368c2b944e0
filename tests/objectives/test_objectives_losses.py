"""Each loss on a tiny case computed by hand (math module, not the code under test)."""
from math import exp, log, sqrt

import pytest
import torch

from xlingua.objectives.dueam import DuEAMLoss
from xlingua.objectives.nli_classification import NLIClassificationLoss
from xlingua.objectives.onealigner import OneAlignerLoss
from xlingua.objectives.response_ranking import ResponseRankingLoss
from xlingua.objectives.translation_ranking import TranslationRankingLoss


def ce(logits, gold):
    return -log(exp(logits[gold]) / sum(exp(v) for v in logits))


A = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
P = torch.tensor([[1.0, 0.0], [0.6, 0.8]])  # unit vectors, so cos = dot


def test_translation_ranking_both_directions():
    loss = TranslationRankingLoss(scale=1.0)(A, P)
    fwd = (ce([1, 0.6], 0) + ce([0, 0.8], 1)) / 2      # a_i -> {p_1, p_2}
    bwd = (ce([1, 0], 0) + ce([0.6, 0.8], 1)) / 2      # p_i -> {a_1, a_2}
    assert loss.item() == pytest.approx((fwd + bwd) / 2, abs=1e-6)


def test_translation_ranking_margin_scale_and_one_direction():
    loss = TranslationRankingLoss(scale=2.0, margin=0.3, bidirectional=False)(A, P)
    want = (ce([2 * (1 - 0.3), 2 * 0.6], 0) + ce([0, 2 * (0.8 - 0.3)], 1)) / 2
    assert loss.item() == pytest.approx(want, abs=1e-6)


def test_translation_ranking_hard_negatives_join_the_candidates():
    neg = torch.tensor([[0.0, 1.0], [1.0, 0.0]])  # one hard negative per example
    loss = TranslationRankingLoss(scale=1.0, bidirectional=False)(A, P, neg)
    want = (ce([1, 0.6, 0, 1], 0) + ce([0, 0.8, 1, 0], 1)) / 2
    assert loss.item() == pytest.approx(want, abs=1e-6)


def test_translation_ranking_scale_invariant_to_vector_length():
    a = TranslationRankingLoss()(A, P)
    b = TranslationRankingLoss()(3 * A, 0.5 * P)
    assert a.item() == pytest.approx(b.item(), abs=1e-6)


def test_nli_features_are_u_v_absdiff_product():
    loss_fn = NLIClassificationLoss(dim=1, hidden=0)
    with torch.no_grad():
        loss_fn.head[0].weight.copy_(torch.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 0, 1.0]]))
        loss_fn.head[0].bias.zero_()
    u, v = torch.tensor([[2.0]]), torch.tensor([[-1.0]])  # features [2, -1, 3, -2]
    assert loss_fn(u, v, torch.tensor([0])).item() == pytest.approx(ce([2, -1, -2], 0), abs=1e-6)
    assert loss_fn(u, v, torch.tensor([2])).item() == pytest.approx(ce([2, -1, -2], 2), abs=1e-6)


def test_response_ranking_head_starts_as_identity_and_learns():
    loss_fn = ResponseRankingLoss(dim=2, hidden=4, scale=1.0)
    loss = loss_fn(A, P)
    assert loss.item() == pytest.approx((ce([1, 0.6], 0) + ce([0, 0.8], 1)) / 2, abs=1e-6)
    loss.backward()
    assert loss_fn.head[2].weight.grad.abs().sum() > 0


def test_response_ranking_is_one_directional():
    # Contexts rank responses; the reverse direction would give a different value here.
    loss = ResponseRankingLoss(dim=2, hidden=4, scale=1.0)(P, A)
    assert loss.item() == pytest.approx((ce([1, 0], 0) + ce([0.6, 0.8], 1)) / 2, abs=1e-6)


def test_dueam_loss():
    s = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    t = torch.tensor([[1.0, 1.0], [0.0, 2.0]])
    wmd = torch.tensor([2.0, 0.5])
    lam = 0.003
    want = (abs(exp(-1) - exp(-2)) + abs(exp(0) - exp(-0.5))) / 2 - lam * (1 / sqrt(2) + 1) / 2
    assert DuEAMLoss(lam)(s, t, wmd).item() == pytest.approx(want, abs=1e-6)


def test_onealigner_global_negatives_alpha_half():
    f = torch.tensor([[0.9, 0.5], [0.4, 0.8]])
    # alpha 0.5: s = f - 0.5 (row mean + col mean); rows .7/.6, cols .65/.65; no global term
    s = [[0.9 - 0.675, 0.5 - 0.675], [0.4 - 0.625, 0.8 - 0.625]]
    off = [5 * s[0][1], 5 * s[1][0]]
    want = sum(ce([5 * s[i][i]] + off, 0) for i in range(2)) / 2
    assert OneAlignerLoss(alpha=0.5, scale=5).loss_from_similarity(f).item() == pytest.approx(want, abs=1e-6)


def test_onealigner_global_mean_term_and_all_offdiagonal_negatives():
    f = torch.tensor([[0.9, 0.2, 0.1], [0.3, 0.8, 0.4], [0.2, 0.1, 0.7]])
    alpha = 0.8
    rows = [sum(r) / 3 for r in f.tolist()]
    cols = [sum(f[i, j].item() for i in range(3)) / 3 for j in range(3)]
    g = f.mean().item()
    s = [[f[i, j].item() - alpha * (rows[i] + cols[j]) + (2 * alpha - 1) * g for j in range(3)] for i in range(3)]
    off = [5 * s[i][j] for i in range(3) for j in range(3) if i != j]
    want = sum(ce([5 * s[i][i]] + off, 0) for i in range(3)) / 3
    assert OneAlignerLoss(alpha=alpha, scale=5).loss_from_similarity(f).item() == pytest.approx(want, abs=1e-5)
    # a row-wise loss (only each row's N-1 negatives) is a different, smaller number
    row_wise = sum(ce([5 * s[i][j] for j in range(3)], i) for i in range(3)) / 3
    assert want > row_wise + 0.1


def test_onealigner_from_tokens_uses_bertscore():
    from xlingua.similarity.bertscore import bertscore_matrix

    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(3, 4, 5, generator=g), torch.randn(3, 6, 5, generator=g)
    xm, ym = torch.ones(3, 4), torch.ones(3, 6)
    xm[0, 3] = 0
    loss_fn = OneAlignerLoss()
    want = loss_fn.loss_from_similarity(bertscore_matrix(x, xm, y, ym))
    assert loss_fn(x, xm, y, ym).item() == pytest.approx(want.item(), abs=1e-6)


def test_onealigner_row_negatives_are_a_softmax_over_the_row():
    f = torch.tensor([[0.9, 0.2, 0.1], [0.3, 0.8, 0.4], [0.2, 0.1, 0.7]])
    rows = [sum(r) / 3 for r in f.tolist()]
    cols = [sum(f[i, j].item() for i in range(3)) / 3 for j in range(3)]
    s = [[f[i, j].item() - 0.5 * (rows[i] + cols[j]) for j in range(3)] for i in range(3)]
    want = sum(ce([5 * s[i][j] for j in range(3)], i) for i in range(3)) / 3
    got = OneAlignerLoss(negatives="row", scale=5).loss_from_similarity(f).item()
    assert got == pytest.approx(want, abs=1e-5)


def test_onealigner_cosine_of_mean_pooled_tokens():
    # x: pair 0 tokens (1,0),(1,0) -> mean (1,0); pair 1 tokens (0,2) and a masked token -> (0,1)
    x = torch.tensor([[[1.0, 0.0], [1.0, 0.0]], [[0.0, 2.0], [9.0, 9.0]]])
    xm = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    y = torch.tensor([[[3.0, 4.0]], [[0.0, 1.0]]])
    ym = torch.ones(2, 1)
    want = torch.tensor([[0.6, 0.0], [0.8, 1.0]])  # cos((1,0),(.6,.8)) = .6, cos((0,1),(.6,.8)) = .8
    loss_fn = OneAlignerLoss(similarity="cosine")
    from xlingua.objectives.onealigner import pooled_cosine_matrix

    assert torch.allclose(pooled_cosine_matrix(x, xm, y, ym), want, atol=1e-6)
    assert loss_fn(x, xm, y, ym).item() == pytest.approx(loss_fn.loss_from_similarity(want).item(), abs=1e-6)
    with pytest.raises(ValueError, match="similarity must be one of"):
        OneAlignerLoss(similarity="dot")
    with pytest.raises(ValueError, match="negatives must be one of"):
        OneAlignerLoss(negatives="all")
