"""What `xlingua extend` asks of the trainer, on a tiny BERT: rows of a parameter held fixed while
the rest trains, tasks drawn by weight alone, a time budget summed over resumes, and resuming a
checkpoint written before a setting existed."""
import json

import pytest
import torch

from tests.training.test_training_trainer import base_config
from xlingua.training import loop as loop_mod
from xlingua.training.trainer import Trainer, config_changes


def tasks(pairs_file):
    return [{"name": "big", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file)}, "weight": 0.3},
            {"name": "small", "objective": "translation_ranking", "data": {"type": "tsv", "path": str(pairs_file), "limit": 4},
             "weight": 0.7}]


def test_freeze_rows_keeps_the_first_rows_bit_identical(tiny_model_dir, pairs_file, tmp_path):
    cfg = base_config(tiny_model_dir, tmp_path / "run", tasks(pairs_file)[:1], max_steps=4, lr=1e-2,
                      weight_decay=0.5, freeze_rows={"word_embeddings": 40})
    trainer = Trainer(cfg)
    before = trainer.model.model.embeddings.word_embeddings.weight.detach().clone()
    trainer.train(show_progress=False)
    after = trainer.model.model.embeddings.word_embeddings.weight.detach()
    assert torch.equal(after[:40], before[:40])
    assert not torch.equal(after[40:], before[40:])  # the rows past them train (pairs' words are there)
    with pytest.raises(ValueError, match="match no trainable parameter"):
        Trainer(base_config(tiny_model_dir, tmp_path / "run2", tasks(pairs_file)[:1], freeze=["word_embeddings"],
                            freeze_rows={"word_embeddings": 40}))


def test_rows_lr_moves_the_trainable_rows_at_their_own_rate(tiny_model_dir, pairs_file, tmp_path):
    # Adam's first step moves every coordinate with a gradient by the learning rate (times the
    # warm-up factor), whatever the gradient's size: the rows' step over another weight's is rows_lr / lr
    cfg = base_config(tiny_model_dir, tmp_path / "run", tasks(pairs_file)[:1], max_steps=1, lr=1e-4, rows_lr=3e-3,
                      weight_decay=0.0, max_grad_norm=0.0, freeze_rows={"word_embeddings": 40})
    trainer = Trainer(cfg)
    emb = trainer.model.model.embeddings.word_embeddings.weight
    dense = trainer.model.model.encoder.layer[0].attention.self.query.weight
    before = emb.detach().clone(), dense.detach().clone()
    trainer.train(show_progress=False)
    rows_step = (emb.detach() - before[0])[40:].abs().max().item()
    dense_step = (dense.detach() - before[1]).abs().max().item()
    assert torch.equal(emb.detach()[:40], before[0][:40])
    assert rows_step == pytest.approx(3e-3, rel=1e-3) and dense_step == pytest.approx(1e-4, rel=1e-3)
    with pytest.raises(ValueError, match="rows_lr .* needs freeze_rows"):
        base_config(tiny_model_dir, tmp_path / "run2", tasks(pairs_file)[:1], rows_lr=1e-3)


def test_weighted_sampling_draws_by_weight_alone(tiny_model_dir, pairs_file, tmp_path):
    trainer = Trainer(base_config(tiny_model_dir, tmp_path / "run", tasks(pairs_file), sampling="weighted"))
    picks = [trainer.pick_task(s) for s in range(2000)]
    assert 0.26 < picks.count(0) / 2000 < 0.34  # 0.3, whatever the 16 and 4 examples


def test_time_budget_stops_checkpoints_and_is_summed_over_resumes(tiny_model_dir, pairs_file, tmp_path, monkeypatch):
    clock = {"now": 0.0}

    class FakeTime:  # every step takes a minute
        @staticmethod
        def perf_counter():
            return clock["now"]

        time = staticmethod(lambda: clock["now"])

    monkeypatch.setattr(loop_mod, "time", FakeTime)
    step = Trainer.train_step

    def timed_step(self):
        clock["now"] += 60.0
        return step(self)

    monkeypatch.setattr(Trainer, "train_step", timed_step)
    run = tmp_path / "run"
    cfg = base_config(tiny_model_dir, run, tasks(pairs_file), max_steps=10, max_minutes=2.5)
    first = Trainer(cfg)
    first.train(show_progress=False)
    assert first.step == 3  # 3 minutes >= 2.5: no fourth step
    assert torch.load(run / "checkpoint.pt", weights_only=False)["step"] == 3
    records = [json.loads(l) for l in (run / "log.jsonl").read_text().splitlines()]
    assert records[-1] == {**records[-1], "step": 3, "time_limit": True}

    again = Trainer(cfg)  # the same budget: nothing left to train
    again.train(resume=True, show_progress=False)
    assert again.step == 3
    more = Trainer(base_config(tiny_model_dir, run, tasks(pairs_file), max_steps=10, max_minutes=5))
    more.train(resume=True, show_progress=False)  # the budget may change on resume
    assert more.step == 5 and more.elapsed == pytest.approx(300.0)


def test_a_checkpoint_from_before_a_setting_existed_resumes(tmp_path):
    now = base_config("m", tmp_path, tasks("pairs.tsv")).to_dict()
    old = {k: v for k, v in now.items() if k not in ("freeze_rows", "max_minutes")}
    old["eval"] = {k: v for k, v in now["eval"].items() if k != "pair_files"}
    old["tasks"] = [{k: v for k, v in t.items() if k != "one_language"} for t in now["tasks"]]
    assert config_changes(old, now) == {}  # they ran at the defaults
    one = {**now, "tasks": [{**t, "one_language": True} for t in now["tasks"]]}
    assert list(config_changes(old, one)) == ["tasks"]  # a task setting that differs is still refused
    assert config_changes(old, {**now, "freeze_rows": {"word_embeddings": 3}}) == \
        {"freeze_rows": ({}, {"word_embeddings": 3})}
