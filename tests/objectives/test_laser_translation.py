"""LASER's translation loss on a hand case: cross-entropy of the target pieces, padding left out."""
import math

import pytest
import torch

from xlingua.encoders.laser_vocab import PAD
from xlingua.objectives.laser_translation import LaserTranslationLoss


def test_cross_entropy_over_the_target_pieces_only():
    # vocabulary of 5; one sentence with two target pieces, then padding
    logits = torch.zeros(1, 3, 5)
    logits[0, 0, 4] = math.log(3.0)  # piece 4: p = 3 / 7
    target = torch.tensor([[4, 2, PAD]])
    want = (-math.log(3 / 7) - math.log(1 / 5)) / 2  # the padded position counts for nothing
    assert LaserTranslationLoss()(logits, target).item() == pytest.approx(want, rel=1e-6)
