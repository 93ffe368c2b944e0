"""Objectives declare themselves in their own file: the registry finds them, a training config
accepts a new one without any other list, and the checkpoint keys of the heads stay as saved."""
import pytest
import torch

from xlingua.objectives import base
from xlingua.objectives.base import TrainingTask, objective_names, register, task_class
from xlingua.training.config import TaskConfig, config_from_dict
from xlingua.training.tasks import build_task


def test_every_objective_file_registers_its_task():
    assert {"translation_ranking", "nli", "response_ranking", "dueam", "onealigner", "distillation", "cosent"} <= set(objective_names())
    for name in objective_names():
        assert issubclass(task_class(name), TrainingTask)
        assert task_class(name).objective_name == name


def test_unknown_objective_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown objective 'tripplet'.*translation_ranking"):
        task_class("tripplet")
    with pytest.raises(ValueError, match="c.yaml: task 't' has unknown objective 'tripplet'"):
        config_from_dict({"model": "m", "output_dir": "o",
                          "tasks": [{"name": "t", "objective": "tripplet", "data": {}}]}, "c.yaml")


def test_a_new_objective_needs_only_its_own_registration(monkeypatch, tmp_path):
    monkeypatch.setattr(base, "_TASKS", dict(base._TASKS))

    @register("toy_mean")
    class ToyTask(TrainingTask):
        def __init__(self, config, examples, dim):
            super().__init__(config, examples, torch.nn.Linear(dim, 1))

        def loss(self, model, batch, indices=None):
            return self.objective(model([e[0] for e in batch])["embedding"]).mean()

    pairs = tmp_path / "p.tsv"
    pairs.write_text("a\tb\nc\td\n")
    cfg = config_from_dict({"model": "m", "output_dir": "o", "tasks": [
        {"name": "toy", "objective": "toy_mean", "data": {"type": "tsv", "path": str(pairs)}}]})
    task = build_task(cfg.tasks[0], dim=3)
    assert isinstance(task, ToyTask) and task.examples == [("a", "b"), ("c", "d")]
    loss = task.loss(lambda texts: {"embedding": torch.ones(len(texts), 3)}, task.examples)
    assert loss.shape == ()
    with pytest.raises(ValueError, match="two objectives named 'toy_mean'"):
        @register("toy_mean")
        class Other(TrainingTask):
            pass


def test_head_parameters_keep_their_checkpoint_keys():
    """checkpoint.pt stores tasks.state_dict(): the heads live at objective.head.*."""
    nli = task_class("nli")(TaskConfig("n", "nli", {}, options={"hidden": 4}), [], 8)
    resp = task_class("response_ranking")(TaskConfig("r", "response_ranking", {}, options={"hidden": 4}), [], 8)
    keys = list(torch.nn.ModuleList([nli, resp]).state_dict())
    assert keys == ["0.objective.head.0.weight", "0.objective.head.0.bias",
                    "0.objective.head.2.weight", "0.objective.head.2.bias",
                    "1.objective.head.0.weight", "1.objective.head.0.bias",
                    "1.objective.head.2.weight", "1.objective.head.2.bias"]
