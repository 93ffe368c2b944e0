"""The one training loop on a toy recipe (one weight pulled towards 3 by SGD): the dev choice
follows the evaluator's direction, patience stops it, a missing metric is named, snapshots,
checkpoints and evaluations come at their steps, a resumed run ends where an unbroken one does, and the one
resume rule frees, overrides or refuses each setting."""
import json

import pytest
import torch

from xlingua.data.text import InputError
from xlingua.training.evaluators import Evaluator
from xlingua.training.loop import LoopSettings, TrainingLoop


class Curve(Evaluator):
    """Reads a fixed curve, one value per evaluation."""

    def __init__(self, values, main_score="score", greater_is_better=True):
        self.values, self.main_score, self.greater_is_better = list(values), main_score, greater_is_better

    def __call__(self, model):
        return {self.main_score: self.values.pop(0)}


class Toy(TrainingLoop):
    free = ("max_steps",)
    overridable = ("lr",)

    def __init__(self, out, settings, evaluators=(), lr=0.1):
        super().__init__(out, settings, evaluators)
        self.lr = lr
        self.model = torch.nn.Linear(1, 1, bias=False)
        torch.nn.init.zeros_(self.model.weight)
        self.saved = []

    def train_step(self):
        loss = (self.model.weight - 3).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            self.model.weight -= self.lr * self.model.weight.grad
        self.model.weight.grad = None
        self.step += 1
        return {"loss": loss.item()}

    def identity(self):
        return {"lr": self.lr, "max_steps": self.settings.max_steps, "kind": "toy"}

    def state_dict(self):
        return {"model": self.model.state_dict()}

    def load_state_dict(self, state, changes):
        self.model.load_state_dict(state["model"])

    def save_best(self):
        self.saved.append(("best", self.step))

    def save_snapshot(self):
        self.saved.append(("snapshot", self.step))


def test_lower_is_better_picks_the_lowest_and_patience_stops(tmp_path):
    loss = Curve([5.0, 3.0, 4.0, 2.0, 6.0, 7.0, 1.0], main_score="val_loss", greater_is_better=False)
    run = Toy(tmp_path, LoopSettings(max_steps=20, eval_every=1, eval_at_start=False, patience=2), [loss])
    run.run(resume=False, show_progress=False)
    assert run.step == 6 and run.best_step == 4 and run.best == -2.0  # 6.0, 7.0: two without improvement
    assert [s for kind, s in run.saved if kind == "best"] == [1, 2, 4]
    records = [json.loads(l) for l in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert records[-1]["early_stop"] is True


def test_a_missing_metric_to_select_on_is_named(tmp_path):
    run = Toy(tmp_path, LoopSettings(max_steps=2, eval_every=1, select="qe-dev"), [Curve([1.0, 2.0, 3.0])])
    with pytest.raises(ValueError, match=r"the dev metric 'qe-dev' to select on is not among the dev metrics \['score'\]"):
        run.run(resume=False, show_progress=False)


def test_snapshots_checkpoints_and_an_exact_resume(tmp_path):
    whole = Toy(tmp_path / "whole", LoopSettings(max_steps=6))
    whole.run(resume=False, show_progress=False)
    settings = LoopSettings(max_steps=4, checkpoint_every=2, snapshot_every=3)
    first = Toy(tmp_path / "cut", settings)
    first.run(resume=False, show_progress=False)
    assert first.saved == [("snapshot", 3)] and torch.load(tmp_path / "cut" / "checkpoint.pt", weights_only=False)["step"] == 4
    more = Toy(tmp_path / "cut", LoopSettings(max_steps=6, checkpoint_every=2))  # max_steps is free
    more.run(resume=True, show_progress=False)
    assert more.step == 6 and torch.equal(more.model.weight, whole.model.weight)
    steps = [json.loads(l)["step"] for l in (tmp_path / "cut" / "log.jsonl").read_text().splitlines()]
    assert steps == list(range(7))
    with pytest.raises(InputError, match=r"the settings differ from the run being resumed \(lr: 0\.1 -> 0\.2\); "
                                         r"resume with the original settings, or pass --override lr"):
        Toy(tmp_path / "cut", settings, lr=0.2).load_checkpoint()
    assert Toy(tmp_path / "cut", settings, lr=0.2).load_checkpoint(override=["lr"])


def test_eval_at_end_scores_a_last_step_off_the_evaluation_steps(tmp_path):
    def evaluated(settings):
        out = tmp_path / str(settings.eval_at_end)
        Toy(out, settings, [Curve(range(10))]).run(resume=False, show_progress=False)
        records = [json.loads(l) for l in (out / "log.jsonl").read_text().splitlines()]
        return [r["step"] for r in records if "eval" in r]

    assert evaluated(LoopSettings(max_steps=5, eval_every=2)) == [0, 2, 4]
    assert evaluated(LoopSettings(max_steps=5, eval_every=2, eval_at_end=True)) == [0, 2, 4, 5]


class TwoCurves(Evaluator):
    """Two metrics per evaluation: a high one that rises and a low one."""

    def __init__(self, high, low):
        self.high, self.low, self.main_score = list(high), list(low), "high"

    def __call__(self, model):
        return {"high": self.high.pop(0), "low": self.low.pop(0)}


def test_a_resume_that_selects_on_another_metric_starts_its_best_afresh(tmp_path):
    first = Toy(tmp_path, LoopSettings(max_steps=2, eval_every=1, eval_at_start=False, checkpoint_every=2),
                [TwoCurves([90.0, 96.0], [10.0, 20.0])])
    first.run(resume=False, show_progress=False)
    assert first.best == 96.0 and first.best_step == 2
    # the same checkpoint, now choosing by "low": 96 on "high" is no bar, so step 3's 30 is the best
    again = Toy(tmp_path, LoopSettings(max_steps=4, eval_every=1, eval_at_start=False, checkpoint_every=2, select="low"),
                [TwoCurves([97.0, 98.0], [30.0, 25.0])])
    again.run(resume=True, show_progress=False)
    assert again.best == 30.0 and again.best_step == 3
    assert [s for kind, s in again.saved if kind == "best"] == [3]
    # resumed on the metric it chose by, the best carries over
    same = Toy(tmp_path, LoopSettings(max_steps=5, eval_every=1, eval_at_start=False, select="low"),
               [TwoCurves([99.0], [28.0])])
    same.run(resume=True, show_progress=False)
    assert same.best == 30.0 and same.best_step == 3
