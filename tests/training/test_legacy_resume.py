"""Checkpoints written by the three training loops xlingua had before the one training loop
(tests/training/legacy, see legacy_setups) resume in it: the step count goes on from the saved
step, the weights loaded are the saved ones, and the resumed run ends with the weights the old
code reached unbroken."""
import gzip
import shutil
from pathlib import Path

import pytest
import torch

from tests.training import legacy_setups as S

LEGACY = Path(__file__).parent / "legacy"


def assert_same(got: dict, want: dict):
    assert sorted(got) == sorted(want)
    for k in want:
        torch.testing.assert_close(got[k], want[k], rtol=0, atol=1e-6, msg=lambda m: f"{k}: {m}")


def test_encoder_checkpoint_resumes(tmp_path, monkeypatch):
    from xlingua.training.config import config_from_dict
    from xlingua.training.trainer import Trainer

    monkeypatch.chdir(tmp_path)
    S.write_encoder_inputs(tmp_path)
    (tmp_path / "run").mkdir()
    shutil.copy(LEGACY / "encoder_checkpoint.pt", tmp_path / "run" / "checkpoint.pt")
    saved = torch.load(LEGACY / "encoder_checkpoint.pt", weights_only=False)
    trainer = Trainer(config_from_dict(S.encoder_config("run")))
    assert trainer.load_checkpoint()
    assert trainer.step == saved["step"] == 3
    assert_same(trainer.model.state_dict(), saved["model"])
    trainer.train(resume=True, show_progress=False)
    assert trainer.step == 6
    assert_same(trainer.model.state_dict(), torch.load(LEGACY / "encoder_final.pt", weights_only=False))


def laser_run(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    shutil.copy(LEGACY / "laser_checkpoint.pt", out / "checkpoint.pt")
    with gzip.open(LEGACY / "laser_spm.model.gz", "rb") as f:
        (out / "spm.model").write_bytes(f.read())
    return out, S.write_laser_corpus(tmp_path / "l10n")


def test_laser_checkpoint_resumes(tmp_path):
    from xlingua.laser.trainer import LaserTrainConfig, train_laser

    out, root = laser_run(tmp_path)
    saved = torch.load(LEGACY / "laser_checkpoint.pt", weights_only=False)
    assert saved["step"] == 3 and "train_config" in saved  # the old layout
    # the same budget: loaded and written back in today's layout, nothing trained
    log = train_laser(LaserTrainConfig(**S.LASER, max_steps=3), out, l10n_root=root, show_progress=False)
    now = torch.load(out / "checkpoint.pt", weights_only=False)
    assert log["steps"] == now["step"] == 3
    assert {k: now["config"][k] for k in saved["train_config"]} == saved["train_config"]  # + settings added since
    assert_same(now["model"], saved["model"])
    log = train_laser(LaserTrainConfig(**S.LASER, max_steps=6), out, l10n_root=root, show_progress=False)
    assert log["steps"] == 6
    assert [h["step"] for h in log["history"]] == [1, 2, 3, 4, 5, 6]
    assert_same(torch.load(out / "checkpoint.pt", weights_only=False)["model"],
                torch.load(LEGACY / "laser_final.pt", weights_only=False))


def test_meaning_state_resumes(tmp_path):
    from xlingua.meaning.trainer import MeaningTrainConfig, train_meaning

    shutil.copy(LEGACY / "meaning_state.pt", tmp_path / "state.pt")
    saved = torch.load(LEGACY / "meaning_state.pt", weights_only=True)
    src, tgt, langs = S.meaning_data()
    from xlingua.meaning.trainer import MeaningRun

    run = MeaningRun(src, tgt, langs, tmp_path, MeaningTrainConfig(**S.MEANING, max_epochs=4), {})
    assert run.load_checkpoint() and run.step == 2 and run.best_step == saved["best_epoch"]
    assert_same(run.model.state_dict(), saved["model"])
    log = train_meaning(src, tgt, langs, tmp_path, config=MeaningTrainConfig(**S.MEANING, max_epochs=4),
                        show_progress=False)
    assert log["epochs"] == 4 and [h["epoch"] for h in log["history"]] == [1, 2, 3, 4]
    assert [h["train_loss"] for h in log["history"][:2]] == [h["train_loss"] for h in saved["history"]]
    final = torch.load(LEGACY / "meaning_final.pt", weights_only=True)
    assert_same(torch.load(tmp_path / "checkpoint.pt", weights_only=False)["model"], final)
