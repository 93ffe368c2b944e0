"""The mean skip of a LASER student (`mean_skip`): a gated max-pooled BiLSTM state plus a linear
map of the mean input vector, the map fitted to the teacher's targets before the first step."""
import numpy as np
import pytest
import torch

from xlingua.encoders.laser_model import BiLSTMEncoder, LaserConfig, mean_pool
from xlingua.laser.distill import DistillSet
from xlingua.laser.prepare import start_skip
from xlingua.laser.trainer import train_laser
from tests.laser.test_laser_distill import ToyTeacher, _cfg, toy_shared  # noqa: F401  (fixture)


def test_mean_pool_ignores_padding_hand_case():
    x = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    assert torch.allclose(mean_pool(x, torch.tensor([2])), torch.tensor([[2.0, 3.0]]))


def test_gate_at_zero_leaves_only_the_mean_map():
    torch.manual_seed(0)
    enc = BiLSTMEncoder(LaserConfig(vocab_size=10, embed_dim=4, hidden=3, mean_skip=True))
    tokens, lengths = torch.tensor([[4, 5, 0], [6, 0, 0]]), torch.tensor([2, 1])
    x = enc.embed(tokens)
    expected = torch.stack([x[0, :2].mean(0), x[1, 0]]) @ enc.skip.weight.T
    assert torch.allclose(enc(tokens, lengths), expected, atol=1e-6)
    with torch.no_grad():
        enc.gate.fill_(1.0)
    assert not torch.allclose(enc(tokens, lengths), expected, atol=1e-3)  # the BiLSTM now counts


def test_start_skip_recovers_a_linear_teacher():
    torch.manual_seed(0)
    enc = BiLSTMEncoder(LaserConfig(vocab_size=12, embed_dim=4, hidden=3, mean_skip=True))
    sentences = [np.array(s, dtype=np.int32) for s in ([4, 5], [6], [7, 8, 9], [10, 11], [5, 6, 7], [11])]
    with torch.no_grad():
        means = torch.stack([enc.embed(torch.tensor(s, dtype=torch.long)).mean(0) for s in sentences])
    true = torch.randn(4, 6)
    data = DistillSet(xx=sentences, en=sentences, langs=["de"] * 6, row=np.arange(6), teacher=means @ true)
    fit = start_skip(enc, data, ridge=1e-9)
    assert fit == pytest.approx(1.0, abs=1e-6)
    assert torch.allclose(enc.skip.weight.T, true, atol=1e-4)


def test_student_with_mean_skip_trains_and_loads(tmp_path, toy_shared):  # noqa: F811
    from xlingua import load_encoder
    from xlingua.laser.config import LaserTrainConfig

    kw = dict(show_progress=False, teacher_encoder=ToyTeacher(), teacher_cache=tmp_path / "cache")
    out = tmp_path / "run"
    log = train_laser(_cfg(mean_skip=True), out, **kw)
    assert 0.0 < log["mean_skip_fit_cosine"] <= 1.0
    assert log["history"][-1]["loss"] < log["history"][0]["loss"]
    state = torch.load(out / "encoder.pt", map_location="cpu", weights_only=False)["state"]
    assert float(state["gate"]) != 0.0  # the BiLSTM's gate opened
    assert load_encoder(f"laser:{out}").encode(["Haus Hund"]).shape == (1, 12)
    with pytest.raises(ValueError, match="mean_skip is fitted to a teacher's vectors"):
        LaserTrainConfig(objective="translation", mean_skip=True)


def test_ranking_weight_adds_translation_ranking_to_the_same_first_batch(tmp_path, toy_shared):  # noqa: F811
    from xlingua.laser.config import LaserTrainConfig

    kw = dict(show_progress=False, teacher_encoder=ToyTeacher(), teacher_cache=tmp_path / "cache")
    plain = train_laser(_cfg(max_steps=10, log_every=1), tmp_path / "plain", **kw)
    ranked = train_laser(_cfg(max_steps=10, log_every=1, ranking_weight=1.0), tmp_path / "ranked", **kw)
    # same seed, same start, same first batch: the loss is distillation + the ranking term (> 0)
    assert ranked["history"][0]["loss"] > plain["history"][0]["loss"] + 0.1
    with pytest.raises(ValueError, match="ranking_weight adds translation ranking to distillation"):
        LaserTrainConfig(objective="translation", ranking_weight=1.0)
