"""The task registry: every Task subclass decorated with `@register` in a module of
`xlingua.evaluation.tasks` is found by name; adding a task is adding its file."""
from __future__ import annotations

import importlib
import pkgutil

from xlingua.evaluation.base import Task

_TASKS: dict[str, type[Task]] = {}


def register(cls: type[Task]) -> type[Task]:
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    if cls.name in _TASKS and _TASKS[cls.name].__qualname__ != cls.__qualname__:
        raise ValueError(f"two tasks named {cls.name!r}: {_TASKS[cls.name].__name__} and {cls.__name__}")
    _TASKS[cls.name] = cls
    return cls


def _load() -> None:
    package = importlib.import_module("xlingua.evaluation.tasks")
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"xlingua.evaluation.tasks.{info.name}")


def task_names() -> list[str]:
    _load()
    return sorted(_TASKS)


def get_task(name: str) -> Task:
    _load()
    if name not in _TASKS:
        raise ValueError(f"unknown task {name!r}; available: {', '.join(task_names())}")
    return _TASKS[name]()
