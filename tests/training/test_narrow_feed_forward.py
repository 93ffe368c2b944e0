"""A narrower student (`intermediate_size:` of the encoder recipe) keeps each layer's feed-forward
units of the largest weights, gives the same vectors when the units it drops contributed nothing,
trains, saves a model that loads at its width, and refuses bad widths on one line (`xlingua ship`
refusing a narrower student: tests/encoders/test_overlay_student.py)."""
from __future__ import annotations

import json

import pytest
import torch

from tests.training.conftest import make_tiny_model_dir
from xlingua.training.config import config_from_dict
from xlingua.training.model import SentenceModel
from xlingua.training.trainer import Trainer

TEXTS = ["the red cat", "der große hund", "a small house is on the car"]


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """A tiny BERT of 2 layers with 64 feed-forward units each."""
    return make_tiny_model_dir(tmp_path_factory.mktemp("start"), layers=2)


def test_the_units_of_the_largest_weights_stay_and_dropping_silent_units_changes_nothing(start):
    model = SentenceModel.load(str(start), max_seq_length=16)
    model.eval()
    block = model.model.encoder.layer[0]
    up, down = block.intermediate.dense, block.output.dense
    with torch.no_grad():
        # units 5, 9 and 40 get the largest input rows; every unit but the first 48 is silent
        up.weight[[5, 9, 40]] *= 100
        for b in model.model.encoder.layer:
            b.output.dense.weight[:, 48:] = 0
    before = model.encode(TEXTS)
    want = down.weight[:, [5, 9, 40]].clone()
    model.narrow_feed_forward(48)
    after_block = model.model.encoder.layer[0]
    assert after_block.intermediate.dense.weight.shape == (48, 32)
    assert after_block.output.dense.weight.shape == (32, 48)
    assert model.model.config.intermediate_size == 48
    # the kept units stay in their order: 5, 9 and 40 are the 6th, 10th and 41st of units 0..47
    torch.testing.assert_close(after_block.output.dense.weight[:, [5, 9, 40]], want)
    torch.testing.assert_close(model.encode(TEXTS), before, atol=1e-5, rtol=1e-5)
    # narrowed to three, layer 0 keeps exactly the units of the largest weights
    model.narrow_feed_forward(3)
    kept = model.model.encoder.layer[0]
    torch.testing.assert_close(kept.output.dense.weight, want)
    assert kept.intermediate.dense.weight.shape == (3, 32) and model.model.config.intermediate_size == 3


def test_a_narrower_student_trains_saves_and_loads_at_its_width(start, pairs_file, tmp_path):
    cfg = config_from_dict({
        "model": str(start), "output_dir": str(tmp_path / "run"), "intermediate_size": 24, "max_steps": 2,
        "batch_size": 4, "max_seq_length": 16, "lr": 1e-3, "warmup_steps": 1, "seed": 1,
        "tasks": [{"name": "tr", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file)}}]})
    trainer = Trainer(cfg)
    final = trainer.train(show_progress=False)
    assert json.loads((final / "config.json").read_text())["intermediate_size"] == 24
    again = SentenceModel.load(str(final), max_seq_length=16)
    assert again.model.encoder.layer[1].intermediate.dense.weight.shape == (24, 32)
    trainer.model.eval()
    torch.testing.assert_close(again.encode(TEXTS), trainer.model.encode(TEXTS), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("value, said", [
    (0, "intermediate_size must be a whole number of feed-forward units from 1, got 0"),
    ("wide", "intermediate_size must be a whole number of feed-forward units from 1, got 'wide'"),
])
def test_bad_widths_are_refused_naming_the_key(value, said, pairs_file):
    with pytest.raises(ValueError, match=said):
        config_from_dict({"model": "m", "output_dir": "x", "intermediate_size": value,
                          "tasks": [{"name": "a", "objective": "translation_ranking",
                                     "data": {"type": "tsv", "path": str(pairs_file)}}]})


def test_a_width_above_the_start_models_is_refused(start):
    model = SentenceModel.load(str(start), max_seq_length=16)
    with pytest.raises(ValueError, match="intermediate_size 65 is above the start model's 64; a student "
                                         "can only keep fewer feed-forward units"):
        model.narrow_feed_forward(65)
