"""The task registry: every Task subclass decorated with `@register` is found by name."""
from __future__ import annotations

import importlib

from xlingua.evaluation.base import Task

_TASKS: dict[str, type[Task]] = {}

# Modules holding the tasks, imported on first lookup (one task per module).
TASK_MODULES = ("tatoeba", "bucc", "sts", "qe", "retrieval", "xnli", "classify", "eigen", "plot")


def register(cls: type[Task]) -> type[Task]:
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    if cls.name in _TASKS and _TASKS[cls.name] is not cls:
        raise ValueError(f"two tasks named {cls.name!r}: {_TASKS[cls.name].__name__} and {cls.__name__}")
    _TASKS[cls.name] = cls
    return cls


def _load() -> None:
    for mod in TASK_MODULES:
        importlib.import_module(f"xlingua.evaluation.{mod}")


def task_names() -> list[str]:
    _load()
    return [name for name in TASK_MODULES if name in _TASKS] + sorted(set(_TASKS) - set(TASK_MODULES))


def get_task(name: str) -> Task:
    _load()
    if name not in _TASKS:
        raise ValueError(f"unknown task {name!r}; available: {', '.join(task_names())}")
    return _TASKS[name]()
