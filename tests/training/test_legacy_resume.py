"""Checkpoints written by the training loops xlingua had before the one training loop
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


def assert_same(got: dict, want: dict, atol: float = 1e-6):
    """Equal to float32 rounding: the saved weights were written on one CPU, and another CPU's
    matrix kernels sum in another order (differences of ~3e-8 seen between AVX2 and AMX)."""
    assert sorted(got) == sorted(want)
    for k in want:
        torch.testing.assert_close(got[k], want[k], rtol=0, atol=atol, msg=lambda m: f"{k}: {m}")


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


def static_evals(path: Path) -> dict[int, float]:
    """{step: dev accuracy} of a static run's log, old ("dev") or the loop's ("eval") records."""
    import json

    records = [json.loads(l) for l in path.read_text().splitlines()]
    return {r["step"]: round(r["eval"]["dev"] if "eval" in r else r["dev"], 3) for r in records
            if "eval" in r or "dev" in r}


def test_static_run_is_the_old_trainers_run(tmp_path, monkeypatch):
    """The same seed gives the weights (to float32 rounding) and dev figures of the static trainer
    before the one loop."""
    from xlingua.static.train import StaticConfig, train

    monkeypatch.chdir(tmp_path)
    S.write_static_teacher(tmp_path)
    pairs = S.static_pairs()
    result = train(StaticConfig(**S.STATIC, max_steps=8), "run", show_progress=False, pairs=pairs, dev=pairs)
    want = static_evals(LEGACY / "static_final_log.jsonl")
    assert static_evals(tmp_path / "run" / "log.jsonl") == want  # steps 0, 3, 6 and the last, 8
    assert (result["best_step"], result["best_dev"]) == max(want.items(), key=lambda kv: kv[1])
    final = torch.load(LEGACY / "static_final.pt", weights_only=False)
    assert_same(torch.load("run/checkpoint.pt", weights_only=False)["model"], final)


def test_static_state_resumes(tmp_path, monkeypatch):
    from xlingua.static.train import StaticConfig, StaticRun, train

    monkeypatch.chdir(tmp_path)
    S.write_static_teacher(tmp_path)
    (tmp_path / "run").mkdir()
    shutil.copy(LEGACY / "static_state.pt", tmp_path / "run" / "state.pt")
    shutil.copy(LEGACY / "static_log.jsonl", tmp_path / "run" / "log.jsonl")
    saved = torch.load(LEGACY / "static_state.pt", weights_only=False)
    assert "checkpoint_minutes" in saved["config"]  # the old layout
    pairs = S.static_pairs()
    run = StaticRun(StaticConfig(**S.STATIC, max_steps=8), Path("run"))
    run.setup(pairs, pairs, show_progress=False)
    assert run.load_checkpoint() and run.step == 5 and (run.best_step, run.best) == (3, 28.125)
    assert_same(run.model.bag.state_dict(), saved["model"], atol=0)
    result = train(StaticConfig(**S.STATIC, max_steps=8), "run", show_progress=False, pairs=pairs, dev=pairs)
    assert result["step"] == 8
    assert static_evals(tmp_path / "run" / "log.jsonl") == static_evals(LEGACY / "static_final_log.jsonl")
    final = torch.load(LEGACY / "static_final.pt", weights_only=False)
    assert_same(torch.load("run/checkpoint.pt", weights_only=False)["model"], final)
