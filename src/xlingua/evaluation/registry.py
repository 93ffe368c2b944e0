"""The task registry: every Task subclass decorated with `@register` in a module of
`xlingua.evaluation.tasks` is found by name; adding a task is adding its file."""
from __future__ import annotations

from xlingua.evaluation.base import Task
from xlingua.registry import declare, import_package

_TASKS: dict[str, type[Task]] = {}


def register(cls: type[Task]) -> type[Task]:
    """Class decorator: `xlingua eval` finds the task by its `name` (two tasks may not share one)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    declare(_TASKS, cls.name, cls, "tasks named")
    return cls


def _load() -> None:
    import_package("xlingua.evaluation.tasks")


def task_names() -> list[str]:
    _load()
    return sorted(_TASKS)


def get_task(name: str) -> Task:
    _load()
    if name not in _TASKS:
        raise ValueError(f"unknown task {name!r}; available: {', '.join(task_names())}")
    return _TASKS[name]()
