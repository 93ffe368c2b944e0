"""A tiny training run on synthetic 'encoder vectors' = meaning + language offset."""
import json

import numpy as np
import pytest
import torch

from xlingua.meaning.model import MeaningModel
from xlingua.meaning.trainer import TrainConfig, train_meaning


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
    cfg = TrainConfig(lr=3e-3, batch_size=32, max_epochs=25, patience=25, hidden=32)
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
    cfg = TrainConfig(max_epochs=2, patience=5, use_meaning=False, use_language=False)
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
    cfg = TrainConfig(max_epochs=4, patience=10, batch_size=16, snapshot_every=2)
    train_meaning(src, tgt, langs, tmp_path, config=cfg, show_progress=False)
    assert sorted(p.name for p in tmp_path.glob("model_epoch*.pt")) == ["model_epoch2.pt", "model_epoch4.pt"]
    early, late = MeaningModel.load(tmp_path / "model_epoch2.pt"), MeaningModel.load(tmp_path / "model_epoch4.pt")
    assert not torch.equal(early.mlp_m[0].weight, late.mlp_m[0].weight)
    assert not list(tmp_path.glob("*.tmp"))
