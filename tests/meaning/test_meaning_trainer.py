"""A tiny training run on synthetic 'encoder vectors' = meaning + language offset."""
import json

import numpy as np
import pytest
import torch

from xlingua.encoders.meaning_mlp import MeaningModel
from xlingua.meaning.trainer import MeaningTrainConfig, train_meaning


def _toy(n_per_lang=60, dim=16, seed=0):
    rng = np.random.default_rng(seed)
    offsets = {l: rng.normal(size=dim) * 2 for l in ("en", "de", "fr")}
    src, tgt, langs = [], [], []
    for lang in ("de", "fr"):
        meaning = rng.normal(size=(n_per_lang, dim))
        src.append(meaning + offsets[lang] + 0.05 * rng.normal(size=(n_per_lang, dim)))
        tgt.append(meaning + offsets["en"] + 0.05 * rng.normal(size=(n_per_lang, dim)))
        langs += [lang] * n_per_lang
    return np.vstack(src).astype(np.float32), np.vstack(tgt).astype(np.float32), langs


def test_tiny_training_reduces_loss_and_saves_best(tmp_path):
    src, tgt, langs = _toy()
    cfg = MeaningTrainConfig(lr=3e-3, batch_size=32, max_epochs=25, patience=25, hidden=32)
    log = train_meaning(src, tgt, langs, tmp_path, config=cfg, show_progress=False)
    hist = log["history"]
    assert hist[-1]["train_loss"] < 0.6 * hist[0]["train_loss"]
    assert log["best_val_loss"] < hist[0]["val_loss"]
    assert set(hist[0]) >= {"val_rec", "val_meaning", "val_language"}
    assert log["langs"] == ["de", "en", "fr"]
    assert json.loads((tmp_path / "train_log.json").read_text())["best_epoch"] == log["best_epoch"]
    model = MeaningModel.load(tmp_path / "model.pt")
    # Meaning parts of a translation pair end up closer than those of unrelated sentences.
    with torch.no_grad():
        ms, mt = model.mlp_m(torch.from_numpy(src)), model.mlp_m(torch.from_numpy(tgt))
    cos = torch.nn.functional.cosine_similarity
    assert cos(ms, mt).mean() > cos(ms, mt.roll(7, 0)).mean() + 0.3


def test_ablation_switches_drop_the_loss_terms(tmp_path):
    src, tgt, langs = _toy(n_per_lang=20)
    cfg = MeaningTrainConfig(max_epochs=2, patience=5, use_meaning=False, use_language=False)
    log = train_meaning(src, tgt, langs, tmp_path, config=cfg, show_progress=False)
    h = log["history"][0]
    assert "val_meaning" not in h and "val_language" not in h
    assert h["val_loss"] == pytest.approx(h["val_rec"])


def test_misaligned_inputs_are_rejected(tmp_path):
    src, tgt, langs = _toy(n_per_lang=5)
    with pytest.raises(ValueError, match="do not line up"):
        train_meaning(src, tgt[:-1], langs, tmp_path, show_progress=False)


def test_snapshots_keep_the_model_of_every_nth_epoch(tmp_path):
    src, tgt, langs = _toy(n_per_lang=20)
    cfg = MeaningTrainConfig(max_epochs=4, patience=10, batch_size=16, snapshot_every=2)
    train_meaning(src, tgt, langs, tmp_path, config=cfg, show_progress=False)
    assert sorted(p.name for p in tmp_path.glob("model_epoch*.pt")) == ["model_epoch2.pt", "model_epoch4.pt"]
    early, late = MeaningModel.load(tmp_path / "model_epoch2.pt"), MeaningModel.load(tmp_path / "model_epoch4.pt")
    assert not torch.equal(early.mlp_m[0].weight, late.mlp_m[0].weight)
    assert not list(tmp_path.glob("*.tmp"))


class ScriptedDev:
    """A dev signal that reads a fixed curve, one value per call (= per epoch)."""

    def __init__(self, curve):
        self.curve, self.calls = list(curve), 0

    def __call__(self, model):
        self.calls += 1
        return {"mean": self.curve[self.calls - 1], "xx-en": -self.curve[self.calls - 1]}


def test_dev_selection_picks_the_epoch_the_dev_curve_says_and_stops_after_patience(tmp_path):
    src, tgt, langs = _toy(n_per_lang=30)
    curve = [0.10, 0.30, 0.50, 0.45, 0.50, 0.20, 0.10, 0.60, 0.70]  # the tie at epoch 5 keeps epoch 3
    cfg = MeaningTrainConfig(lr=3e-3, batch_size=16, max_epochs=9, patience=3, snapshot_every=1, select_on="qe-dev")
    log = train_meaning(src, tgt, langs, tmp_path / "dev", config=cfg, dev={"qe-dev": ScriptedDev(curve)},
                        show_progress=False)
    assert log["best_epoch"] == 3 and log["best_score"] == 0.50
    assert log["epochs"] == 6  # epochs 4, 5, 6 without improvement: stopped before the later rise
    assert [h["qe-dev"] for h in log["history"]] == curve[:6]
    assert log["history"][0]["qe-dev xx-en"] == -0.10
    best, third = MeaningModel.load(tmp_path / "dev" / "model.pt"), MeaningModel.load(tmp_path / "dev" / "model_epoch3.pt")
    assert all(torch.equal(a, b) for a, b in zip(best.state_dict().values(), third.state_dict().values()))
    # The validation loss was still falling: selecting on it would have taken the last epoch.
    vals = [h["val_loss"] for h in log["history"]]
    assert vals[-1] < vals[2]
    cfg_loss = MeaningTrainConfig(lr=3e-3, batch_size=16, max_epochs=6, patience=3)
    assert train_meaning(src, tgt, langs, tmp_path / "loss", config=cfg_loss, show_progress=False)["best_epoch"] == 6


def test_select_on_must_name_a_dev_signal(tmp_path):
    src, tgt, langs = _toy(n_per_lang=5)
    with pytest.raises(ValueError, match=r"select_on 'qe-dev' names no dev signal; given: none"):
        train_meaning(src, tgt, langs, tmp_path, config=MeaningTrainConfig(select_on="qe-dev"), show_progress=False)


def test_language_weight_scales_the_language_term_of_the_loss(tmp_path):
    src, tgt, langs = _toy(n_per_lang=10)
    for w in (0.0, 2.5):
        log = train_meaning(src, tgt, langs, tmp_path / str(w), show_progress=False,
                            config=MeaningTrainConfig(max_epochs=1, patience=1, language_weight=w))
        h = log["history"][0]
        assert h["val_loss"] == pytest.approx(h["val_rec"] + h["val_meaning"] + w * h["val_language"], rel=1e-5)


class Crash(Exception):
    pass


def test_a_killed_run_resumes_to_the_same_model(tmp_path):
    src, tgt, langs = _toy(n_per_lang=30)
    curve = [0.1, 0.3, 0.2, 0.4, 0.35]
    cfg = MeaningTrainConfig(lr=3e-3, batch_size=16, max_epochs=5, patience=5, select_on="qe-dev")
    whole = train_meaning(src, tgt, langs, tmp_path / "whole", config=cfg, dev={"qe-dev": ScriptedDev(curve)},
                          show_progress=False)

    class DiesAtEpoch3(ScriptedDev):
        def __call__(self, model):
            if self.calls == 2:
                raise Crash  # killed during epoch 3: the checkpoint holds epoch 2
            return super().__call__(model)

    with pytest.raises(Crash):
        train_meaning(src, tgt, langs, tmp_path / "cut", config=cfg, dev={"qe-dev": DiesAtEpoch3(curve)},
                      show_progress=False)
    assert json.loads((tmp_path / "cut" / "train_log.json").read_text())["epochs"] == 2
    rest = ScriptedDev(curve)
    rest.calls = 2  # the curve goes on at epoch 3
    resumed = train_meaning(src, tgt, langs, tmp_path / "cut", config=cfg, dev={"qe-dev": rest}, show_progress=False)
    assert rest.calls == 5 and resumed["epochs"] == 5 and resumed["best_epoch"] == whole["best_epoch"] == 4
    assert [h["train_loss"] for h in resumed["history"]] == pytest.approx([h["train_loss"] for h in whole["history"]])
    a, b = MeaningModel.load(tmp_path / "whole" / "model.pt"), MeaningModel.load(tmp_path / "cut" / "model.pt")
    assert all(torch.allclose(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    # A finished run started again does nothing more; other settings in the same directory are refused.
    assert train_meaning(src, tgt, langs, tmp_path / "cut", config=cfg, dev={"qe-dev": rest},
                         show_progress=False)["epochs"] == 5
    with pytest.raises(ValueError, match="the settings differ from the run being resumed"):
        train_meaning(src, tgt, langs, tmp_path / "cut", config=MeaningTrainConfig(lr=1e-3, select_on="qe-dev"),
                      dev={"qe-dev": rest}, show_progress=False)


def test_a_run_from_before_a_setting_existed_resumes_with_its_default(tmp_path):
    src, tgt, langs = _toy(n_per_lang=10)
    cfg = MeaningTrainConfig(max_epochs=1, patience=5)
    train_meaning(src, tgt, langs, tmp_path, config=cfg, show_progress=False)
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    del state["config"]["residual"]  # as written before the setting existed
    torch.save(state, tmp_path / "checkpoint.pt")
    log = train_meaning(src, tgt, langs, tmp_path, config=MeaningTrainConfig(max_epochs=2, patience=5),
                        show_progress=False)
    assert log["epochs"] == 2
    with pytest.raises(ValueError, match="the settings differ from the run being resumed"):
        train_meaning(src, tgt, langs, tmp_path, config=MeaningTrainConfig(max_epochs=3, residual=True),
                      show_progress=False)


def test_a_residual_model_starts_at_the_base_vectors_and_learns_away_from_them(tmp_path):
    src, tgt, langs = _toy()
    cfg = MeaningTrainConfig(lr=3e-3, batch_size=32, max_epochs=10, patience=10, hidden=32, residual=True)
    train_meaning(src, tgt, langs, tmp_path, config=cfg, show_progress=False)
    fresh = MeaningModel(MeaningModel.load(tmp_path / "model.pt").config)
    e = torch.from_numpy(src)
    assert torch.equal(fresh.meaning(e), e)  # before training: the base vector itself
    model = MeaningModel.load(tmp_path / "model.pt")
    assert model.config.residual
    with torch.no_grad():
        ms, mt = model.meaning(e), model.meaning(torch.from_numpy(tgt))
    cos = torch.nn.functional.cosine_similarity
    base_gap = cos(e, torch.from_numpy(tgt)).mean() - cos(e, torch.from_numpy(tgt).roll(7, 0)).mean()
    assert cos(ms, mt).mean() - cos(ms, mt.roll(7, 0)).mean() > base_gap + 0.05
