"""Build the training task a config entry names: its examples (data.examples) fed to the
objective registered under `objective:` (xlingua.objectives)."""
from __future__ import annotations

from xlingua.objectives import TrainingTask, task_class
from xlingua.training.config import TaskConfig
from xlingua.data.examples import load_examples


def build_task(config: TaskConfig, dim: int, seed: int = 0) -> TrainingTask:
    cls = task_class(config.objective)
    examples = load_examples(config.data, seed)
    try:
        return cls(config, examples, dim)
    except TypeError as e:
        raise ValueError(f"task {config.name!r}: bad options {config.options}: {e}") from None
