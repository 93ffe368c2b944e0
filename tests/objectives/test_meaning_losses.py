"""Meaning-embedding losses on tiny hand-computed cases."""
import math

import pytest
import torch

from xlingua.objectives.language import LanguageLoss
from xlingua.objectives.meaning import MeaningLoss
from xlingua.objectives.reconstruction import ReconstructionLoss

T = lambda *rows: torch.tensor(rows, dtype=torch.float32)  # noqa: E731


def test_reconstruction_is_squared_error_over_dim():
    e = T([1.0, 2.0], [0.0, 0.0])
    m = T([1.0, 0.0], [1.0, 1.0])
    l = T([0.0, 1.0], [0.0, 0.0])
    # row 1: e - (m + l) = (0, 1) -> 1/2; row 2: (-1, -1) -> 2/2 = 1; mean 0.75
    assert ReconstructionLoss()(e, m, l).item() == pytest.approx(0.75)


def test_meaning_loss_hand_case():
    s, t = T([1.0, 0.0]), T([1.0, 1.0])  # cos = 1/sqrt2
    s_neg = T([-1.0, 0.0])  # cos(s, s') = -1 -> clipped to 0
    t_neg = T([0.0, 1.0])  # cos(t, t') = 1/sqrt2
    expected = (1 - 1 / math.sqrt(2)) + 0 + 1 / math.sqrt(2)
    assert MeaningLoss()(s, t, s_neg, t_neg).item() == pytest.approx(expected, abs=1e-6)


def test_meaning_loss_zero_for_identical_pair_and_orthogonal_negatives():
    s = T([1.0, 0.0, 0.0])
    assert MeaningLoss()(s, 2 * s, T([0.0, 1.0, 0.0]), T([0.0, 0.0, -3.0])).item() == pytest.approx(0.0, abs=1e-6)


def test_language_loss_hand_case():
    s, s_same = T([1.0, 0.0]), T([0.0, 1.0])  # cos 0
    t, t_same = T([1.0, 1.0]), T([2.0, 2.0])  # cos 1
    logits_s, logits_t = T([0.0, 0.0]), T([0.0, math.log(3.0)])  # CE: log 2 and -log(3/4)
    loss = LanguageLoss()(s, t, s_same, t_same, logits_s, logits_t, torch.tensor([0]), torch.tensor([1]))
    expected = (2 - 0 - 1) + math.log(2) + math.log(4 / 3)
    assert loss.item() == pytest.approx(expected, abs=1e-6)


def test_meaning_loss_negative_weight_scales_only_the_hinge_terms():
    s, t = T([1.0, 0.0]), T([1.0, 1.0])
    s_neg, t_neg = T([-1.0, 0.0]), T([0.0, 1.0])
    # positive term 1 - 1/sqrt2 unchanged, hinge terms 0 + 1/sqrt2 scaled by 0.25
    expected = (1 - 1 / math.sqrt(2)) + 0.25 / math.sqrt(2)
    assert MeaningLoss(negative_weight=0.25)(s, t, s_neg, t_neg).item() == pytest.approx(expected, abs=1e-6)
