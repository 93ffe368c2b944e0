"""Write tiny checkpoints with the trainers of commit ee52ce6 (before the one training engine),
as fixtures for tests/training/test_legacy_resume.py. Run from the repository root:
.venv/bin/python runs/make_legacy_checkpoints.py"""
import os, shutil, sys, tempfile
from pathlib import Path

import torch

sys.path.insert(0, ".")
from tests.training import legacy_setups as S  # the deterministic inputs the tests rebuild

DEST = Path("tests/training/legacy").resolve()


class Kill(Exception):
    pass


def encoder(tmp):
    from xlingua.training.config import config_from_dict
    from xlingua.training.trainer import Trainer

    os.chdir(tmp)
    S.write_encoder_inputs(Path("."))
    whole = Trainer(config_from_dict(S.encoder_config("whole")))
    whole.train(show_progress=False)

    def kill(step):
        if step == 4:
            raise Kill
    cut = Trainer(config_from_dict(S.encoder_config("cut")))
    try:
        cut.train(on_step=kill, show_progress=False)
    except Kill:
        pass
    shutil.copy("cut/checkpoint.pt", DEST / "encoder_checkpoint.pt")
    torch.save(whole.model.state_dict(), DEST / "encoder_final.pt")


def laser(tmp):
    from xlingua.laser.trainer import LaserTrainConfig, train_laser

    root = S.write_laser_corpus(tmp / "l10n")
    train_laser(LaserTrainConfig(**S.LASER, max_steps=6), tmp / "whole", l10n_root=root, show_progress=False)
    train_laser(LaserTrainConfig(**S.LASER, max_steps=3), tmp / "cut", l10n_root=root, show_progress=False)
    shutil.copy(tmp / "cut" / "checkpoint.pt", DEST / "laser_checkpoint.pt")
    shutil.copy(tmp / "cut" / "spm.model", DEST / "laser_spm.model")
    torch.save(torch.load(tmp / "whole" / "checkpoint.pt", weights_only=False)["model"], DEST / "laser_final.pt")


def meaning(tmp):
    from xlingua.meaning.trainer import TrainConfig, train_meaning

    src, tgt, langs = S.meaning_data()
    train_meaning(src, tgt, langs, tmp / "whole", config=TrainConfig(**S.MEANING, max_epochs=4), show_progress=False)
    train_meaning(src, tgt, langs, tmp / "cut", config=TrainConfig(**S.MEANING, max_epochs=2), show_progress=False)
    shutil.copy(tmp / "cut" / "state.pt", DEST / "meaning_state.pt")
    torch.save(torch.load(tmp / "whole" / "state.pt", weights_only=True)["model"], DEST / "meaning_final.pt")


if __name__ == "__main__":
    DEST.mkdir(parents=True, exist_ok=True)
    for make in (laser, meaning, encoder):
        with tempfile.TemporaryDirectory() as d:
            make(Path(d))
    for p in sorted(DEST.iterdir()):
        print(p.name, p.stat().st_size)
