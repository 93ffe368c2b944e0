"""Hard-negative mining for the translation ranking task, on hand-placed vectors."""
import pytest
import torch

from xlingua.objectives.translation_ranking import mine_hard_negatives


class Placed:
    """Encodes each text to the vector given for it; notes whether bf16 autocast was on."""

    def __init__(self, vectors, precision="fp32"):
        self.vectors = vectors
        self.precision = precision
        self.autocast = []

    def encode(self, texts, batch_size=64, show_progress=False):
        self.autocast.append(torch.is_autocast_enabled("cpu"))
        return torch.tensor([self.vectors[t] for t in texts], dtype=torch.float32)


VECTORS = {"s0": [1.0, 0.0], "s1": [0.0, 1.0], "s2": [0.8, 0.6], "s3": [1.0, 0.1],
           "t0": [1.0, 0.0], "t1": [0.0, 1.0], "t2": [0.7, 0.7], "t3": [1.0, 0.2]}


def test_each_source_gets_the_nearest_other_target():
    model = Placed(VECTORS)
    got = mine_hard_negatives(model, ["s0", "s1", "s2", "s3"], ["t0", "t1", "t2", "t3"], k=2)
    # s0 = (1, 0): t3 (cos .98) then t2 (.71); s1: t2 then t3; s2 = (.8, .6): t3 (.90) then t0 (.80);
    # s3 = (1, .1): t0 (.995) then t2
    assert got == [[3, 2], [2, 3], [3, 0], [0, 2]]
    assert model.autocast == [False, False]


def test_a_target_repeated_in_the_data_is_never_a_negative_of_its_twins():
    # examples 0 and 2 share the target text "yes": the nearest target to s0 is t0's twin
    sources, targets = ["s0", "s1", "s3"], ["yes", "t1", "yes"]
    model = Placed({**VECTORS, "yes": [1.0, 0.0]})
    assert mine_hard_negatives(model, sources, targets, k=1) == [[1], [0], [1]]


def test_too_few_distinct_targets_is_an_error_naming_the_example_before_encoding():
    model = Placed({**VECTORS, "yes": [1.0, 0.0]})
    with pytest.raises(ValueError, match="could not find 1 hard negatives for example 0"):
        mine_hard_negatives(model, ["s0", "s3"], ["yes", "yes"], k=1)
    assert model.autocast == []  # found before any encoding


def test_a_bf16_run_mines_under_bf16_autocast():
    model = Placed(VECTORS, precision="bf16")
    mine_hard_negatives(model, ["s0", "s1"], ["t0", "t1"], k=1)
    assert model.autocast == [True, True]
