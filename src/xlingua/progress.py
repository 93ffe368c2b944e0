"""Shared progress-bar pieces (rich)."""
from __future__ import annotations

from rich.progress import ProgressColumn
from rich.text import Text


class RateColumn(ProgressColumn):
    """Items per second, e.g. `812 sent/s`."""

    def __init__(self, unit: str = "it"):
        super().__init__()
        self.unit = unit

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text(f"- {self.unit}/s")
        return Text(f"{speed:,.0f} {self.unit}/s")


def progress_bar(label: str, total: int | None, *, completed: int = 0, rate: str | None = None,
                 extra: str | None = None, **fields):
    """The one progress bar of xlingua, started, on stderr: LABEL [bar] done/total [EXTRA]
    [RATE/s] time. `extra` is a rich format over the task (e.g. "loss {task.fields[loss]}",
    with `loss="-"` given as a field). Returns (progress, task id); call progress.stop() at the end."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn()]
    if extra:
        columns.append(TextColumn(extra))
    if rate:
        columns += [RateColumn(rate), TimeRemainingColumn()]
    else:
        columns.append(TimeElapsedColumn())
    progress = Progress(*columns, console=Console(stderr=True))
    task = progress.add_task("", total=total, completed=completed, **fields)
    progress.start()
    return progress, task
