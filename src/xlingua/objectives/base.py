"""What a training objective is: a loss (an nn.Module citing its paper) and the task that feeds
it batches, declared together in one file of this package with `@register("name")`. A training
config names it under `objective:`; nothing else lists it.

A task receives the model being trained as `model(texts, token_layer=None)` -> {"embedding"
(n, d), and with token_layer "tokens" (n, L, d), "token_mask" (n, L)} and
`model.encode(texts, batch_size, show_progress=False)` (inference embeddings). Objectives with
parameters (heads) are submodules of the task, so the optimizer and checkpoints include them."""
from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from xlingua.registry import declare, import_package

_TASKS: dict[str, type["TrainingTask"]] = {}


class TrainingTask(nn.Module):
    """One objective on one dataset. `config` has `name` and `options` (the objective's
    settings from the training config); `dim` is the model's embedding size."""

    def __init__(self, config, examples: list[tuple], objective: nn.Module):
        super().__init__()
        self.name = config.name
        self.config = config
        self.examples = examples
        self.objective = objective

    def loss(self, model, batch: list[tuple], indices=None) -> torch.Tensor:
        """The loss of one batch; `indices` are the examples' positions in self.examples
        (used for mined negatives and cached anchor distances)."""
        raise NotImplementedError

    def prepare(self, model, output_dir: Path) -> None:
        """One-time work before the first step (e.g. mining); results saved in output_dir."""


def register(name: str):
    """Class decorator: make a TrainingTask subclass the training task of objective `name`."""
    def add(cls: type[TrainingTask]) -> type[TrainingTask]:
        declare(_TASKS, name, cls, "objectives named")
        cls.objective_name = name
        return cls
    return add


def _load() -> None:
    import_package("xlingua.objectives")


def objective_names() -> tuple[str, ...]:
    _load()
    return tuple(sorted(_TASKS))


def task_class(name: str) -> type[TrainingTask]:
    _load()
    if name not in _TASKS:
        raise ValueError(f"unknown objective {name!r}; choose one of {objective_names()}")
    return _TASKS[name]
