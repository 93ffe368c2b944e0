"""Write tiny checkpoints with the trainers before the one training loop, as fixtures for
tests/training/test_legacy_resume.py: laser, meaning and encoder with the code of commit ee52ce6,
static with the code of commit 614213fd82f630417004e8bb3f6d713e340aea21 (its own loop in
xlingua/static/train.py). Run from the repository root, checked out at the maker's commit:
OMP_NUM_THREADS=1 .venv/bin/python tests/training/legacy/write_checkpoints.py static"""
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
    from xlingua.meaning.trainer import MeaningTrainConfig, train_meaning

    src, tgt, langs = S.meaning_data()
    train_meaning(src, tgt, langs, tmp / "whole", config=MeaningTrainConfig(**S.MEANING, max_epochs=4),
                  show_progress=False)
    train_meaning(src, tgt, langs, tmp / "cut", config=MeaningTrainConfig(**S.MEANING, max_epochs=2),
                  show_progress=False)
    shutil.copy(tmp / "cut" / "state.pt", DEST / "meaning_state.pt")
    torch.save(torch.load(tmp / "whole" / "state.pt", weights_only=True)["model"], DEST / "meaning_final.pt")


def static(tmp):
    """Killed (an exception) as step 6 begins, after the checkpoint of step 5 (checkpoint_minutes
    0: one after every step); the log of the unbroken run holds its dev figures."""
    from xlingua.static import train as T

    os.chdir(tmp)
    S.write_static_teacher(Path("."))
    pairs = S.static_pairs()
    T.train(T.StaticConfig(**S.STATIC, max_steps=8), "whole", show_progress=False, pairs=pairs, dev=pairs)
    schedule = T.Schedule.__call__

    def kill(self, step):
        if step == 5:
            raise Kill
        return schedule(self, step)
    T.Schedule.__call__ = kill
    try:
        T.train(T.StaticConfig(**S.STATIC, max_steps=8, checkpoint_minutes=0.0), "cut", show_progress=False,
                pairs=pairs, dev=pairs)
    except Kill:
        pass
    finally:
        T.Schedule.__call__ = schedule
    shutil.copy("cut/state.pt", DEST / "static_state.pt")
    shutil.copy("cut/log.jsonl", DEST / "static_log.jsonl")
    shutil.copy("whole/log.jsonl", DEST / "static_final_log.jsonl")
    torch.save(torch.load("whole/state.pt", weights_only=False)["model"], DEST / "static_final.pt")


if __name__ == "__main__":
    DEST.mkdir(parents=True, exist_ok=True)
    makers = {f.__name__: f for f in (laser, meaning, encoder, static)}
    for name in sys.argv[1:] or makers:
        with tempfile.TemporaryDirectory() as d:
            makers[name](Path(d))
    for p in sorted(DEST.iterdir()):
        print(p.name, p.stat().st_size)
