"""Distillation and CoSENT losses on tiny cases computed by hand."""
from math import exp, log, sqrt

import pytest
import torch

from xlingua.objectives.cosent import CoSENTLoss
from xlingua.objectives.distillation import DistillationLoss

T = torch.tensor([[1.0, 0.0], [0.0, 2.0]])          # teacher(en); normalised: e1, e2
XX = torch.tensor([[3.0, 4.0], [0.0, 5.0]])         # student(xx): (0.6, 0.8), e2
EN = torch.tensor([[1.0, 0.0], [1.0, 0.0]])         # student(en): e1, e1


def test_distillation_squared_distance_of_unit_vectors():
    # pair 1: |(0.6,0.8)-(1,0)|^2 = 0.16+0.64 = 0.8; pair 2: 0; english: 0 and |e1-e2|^2 = 2
    loss = DistillationLoss()(XX, T, EN)
    assert loss.item() == pytest.approx(((0.8 + 0) / 2 + (0 + 2) / 2) / 2, abs=1e-6)


def test_distillation_translations_only_and_cosine_metric():
    assert DistillationLoss()(XX, T).item() == pytest.approx(0.4, abs=1e-6)
    # 1 - cos: 0.4 and 0 -> half of the squared distance
    assert DistillationLoss(metric="cosine")(XX, T).item() == pytest.approx(0.2, abs=1e-6)
    with pytest.raises(ValueError, match="mse or cosine"):
        DistillationLoss(metric="l1")


def test_distillation_english_weight():
    loss = DistillationLoss(english_weight=3.0)(XX, T, EN)
    assert loss.item() == pytest.approx((0.4 + 3 * 1.0) / 4, abs=1e-6)


def test_distillation_gradient_pulls_student_to_teacher():
    s = XX.clone().requires_grad_(True)
    opt = torch.optim.SGD([s], lr=5.0)
    before = DistillationLoss()(s, T).item()
    for _ in range(50):
        opt.zero_grad()
        DistillationLoss()(s, T).backward()
        opt.step()
    assert DistillationLoss()(s, T).item() < before / 10


def test_cosent_hand_computed():
    u = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    v = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])   # cos: 1, 0, 1/sqrt2
    scores = torch.tensor([5.0, 1.0, 3.0])
    c = [1.0, 0.0, 1 / sqrt(2)]
    # ordered pairs (i, j) with y_i > y_j: (0,1), (0,2), (2,1); term exp(s*(c_j - c_i))
    want = log(1 + exp(2 * (c[1] - c[0])) + exp(2 * (c[2] - c[0])) + exp(2 * (c[1] - c[2])))
    assert CoSENTLoss(scale=2.0)(u, v, scores).item() == pytest.approx(want, abs=1e-6)


def test_cosent_ties_and_perfect_order():
    u = torch.eye(2)
    v = torch.eye(2)
    # equal scores: no ordered pair, the loss is log(1) = 0
    assert CoSENTLoss()(u, v, torch.tensor([2.0, 2.0])).item() == pytest.approx(0.0, abs=1e-7)
