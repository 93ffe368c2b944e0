"""What an evaluation task is (MTEB style): a class with metadata and one `evaluate` method,
found through the registry in `xlingua.evaluation.registry`."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from xlingua.encoders.base import Encoder


@dataclass
class EvalContext:
    """Everything a task may use. `encoder` is normally a CachedEncoder."""
    encoder: Encoder
    data_dir: str | None = None
    limit: int | None = None          # at most this many items per sub-set (quick runs)
    options: dict[str, Any] = field(default_factory=dict)  # task options, e.g. {"alpha": 0.5}
    out_dir: Path | None = None       # where tasks that write files (plots) put them
    batch_size: int = 64
    show_progress: bool = True

    def embed(self, texts: list[str], lang: str | None = None) -> np.ndarray:
        return self.encoder.encode(texts, lang=lang, batch_size=self.batch_size,
                                   show_progress=self.show_progress)

    def track(self, items, what: str):
        """Iterate over `items` with a task-level progress bar (languages, tracks...)."""
        items = list(items)
        if not self.show_progress or len(items) < 2:
            yield from items
            return
        from xlingua.progress import progress_bar

        bar, task = progress_bar(f"[bold blue]{what}[/]", len(items), extra="{task.fields[item]}", item="")
        with bar:
            for item in items:
                label = item[0] if isinstance(item, tuple) else getattr(item, "name", item)
                bar.update(task, item=str(label))
                yield item
                bar.advance(task)

    def head(self, items: list) -> list:
        return items if self.limit is None else items[: self.limit]

    def option(self, name: str, default):
        return self.options.get(name, default)


@dataclass
class TaskResult:
    """Figures of one task. `rows` are per sub-set (language, track...), each a dict of
    metric -> value; `summary` holds the headline figures (averages), the ones compared
    with the papers. Values are plain floats, in the units the papers print."""
    task: str
    rows: dict[str, dict[str, float]] = field(default_factory=dict)
    summary: dict[str, float] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"task": self.task, "seconds": round(self.seconds, 2), "config": self.config,
                "summary": self.summary, "rows": self.rows, "notes": self.notes, "files": self.files}


class Task(ABC):
    """One benchmark. Subclasses set the metadata and implement `evaluate`."""

    name: str = ""
    description: str = ""
    #: data it reads, relative to the benchmark directory (for --list and error messages)
    data: str = ""
    #: the task's options and their defaults (set with --opt key=value)
    default_options: dict[str, Any] = {}

    @abstractmethod
    def evaluate(self, ctx: EvalContext) -> TaskResult:
        """Compute every figure of the task."""

    def options(self, ctx: EvalContext) -> dict[str, Any]:
        unknown = set(ctx.options) - set(self.default_options)
        if unknown:
            raise ValueError(f"task {self.name} has no option(s) {sorted(unknown)}; "
                             f"it takes {sorted(self.default_options) or 'none'}")
        return {**self.default_options, **ctx.options}

    @staticmethod
    def subset(opt: dict[str, Any], everything: tuple[str, ...]) -> tuple[str, ...]:
        """The `subset` option: "all" is `everything`, else its comma-separated names."""
        value = str(opt["subset"])
        return everything if value == "all" else tuple(name.strip() for name in value.split(","))


def mean(values) -> float:
    values = [v for v in values]
    return float(np.mean(values)) if values else float("nan")
